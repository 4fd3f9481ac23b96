//! A forgiving `key: value` reader for frontmatter that YAML rejects.
//!
//! One public SKILL.md in six has frontmatter that strict YAML refuses
//! (unquoted colons, `description: | text` on one line, values starting with
//! `*` or `[`). This reader recovers top-level keys line by line: a key at
//! column 0, its value on the same line (quotes removed), continued by
//! indented lines; block scalar indicators (`|`, `>`, with chomping) are
//! honoured, and text written after one on the same line is kept.

use serde_json::{Map, Value};

/// Reads top-level `key: value` pairs; every value is a string.
pub fn read_key_values(text: &str) -> Map<String, Value> {
    let mut fields = Map::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let Some((key, rest)) = top_level_key(lines[i]) else {
            i += 1;
            continue;
        };
        let mut continuation = Vec::new();
        let mut j = i + 1;
        while j < lines.len() && (lines[j].trim().is_empty() || starts_indented(lines[j])) {
            continuation.push(lines[j]);
            j += 1;
        }
        while continuation.last().is_some_and(|l| l.trim().is_empty()) {
            continuation.pop();
        }
        let value = assemble(rest.trim(), &continuation);
        fields
            .entry(key.to_string())
            .or_insert(Value::String(value));
        i = j;
    }
    fields
}

/// `key: rest` at column 0, with a plain key.
fn top_level_key(line: &str) -> Option<(&str, &str)> {
    let (key, rest) = line.split_once(':')?;
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
    (plain && (rest.is_empty() || rest.starts_with([' ', '\t']))).then_some((key, rest))
}

fn starts_indented(line: &str) -> bool {
    line.starts_with([' ', '\t'])
}

fn assemble(first: &str, continuation: &[&str]) -> String {
    let block = block_indicator(first);
    let body: Vec<&str> = continuation.iter().map(|l| l.trim()).collect();
    match block {
        Some((literal, inline)) => {
            let mut lines: Vec<&str> = Vec::new();
            if !inline.is_empty() {
                lines.push(inline);
            }
            lines.extend(body);
            if literal {
                lines.join("\n").trim().to_string()
            } else {
                fold(&lines)
            }
        }
        None => {
            let mut lines = vec![unquote(first)];
            lines.extend(body.iter().map(|l| unquote(l)));
            fold(&lines)
        }
    }
}

/// `|`, `>`, `|-`, `>+2`, ... possibly followed by text on the same line.
/// Returns (is literal, inline text).
fn block_indicator(value: &str) -> Option<(bool, &str)> {
    let literal = match value.chars().next()? {
        '|' => true,
        '>' => false,
        _ => return None,
    };
    let rest =
        value[1..].trim_start_matches(['-', '+', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    Some((literal, rest.trim()))
}

fn unquote(value: &str) -> &str {
    let v = value.trim();
    for quote in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(quote) && v.ends_with(quote) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

fn fold(lines: &[&str]) -> String {
    lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(text: &str, key: &str) -> String {
        read_key_values(text)[key].as_str().unwrap().to_string()
    }

    #[test]
    fn unquoted_colons_are_kept_in_the_value() {
        let text = "name: pdf\ndescription: Use when: the user asks for PDFs\n";
        assert_eq!(get(text, "name"), "pdf");
        assert_eq!(get(text, "description"), "Use when: the user asks for PDFs");
    }

    #[test]
    fn pipe_with_text_on_the_same_line() {
        let text = "description: | Reads files\n  and writes them\nname: x\n";
        assert_eq!(get(text, "description"), "Reads files\nand writes them");
        assert_eq!(get(text, "name"), "x");
    }

    #[test]
    fn folded_blocks_and_continuations() {
        let text = "description: >-\n  one\n  two\nother: first\n  second\n";
        assert_eq!(get(text, "description"), "one two");
        assert_eq!(get(text, "other"), "first second");
    }

    #[test]
    fn star_and_bracket_values_are_text() {
        let text = "description: *Bold* claims [beta]\nname: '[x]'\n";
        assert_eq!(get(text, "description"), "*Bold* claims [beta]");
        assert_eq!(get(text, "name"), "[x]");
    }

    #[test]
    fn first_of_duplicate_keys_wins_and_noise_is_ignored() {
        let fields = read_key_values("# comment\nname: a\nname: b\n- item\n");
        assert_eq!(fields.len(), 1);
        assert_eq!(fields["name"], "a");
    }
}
