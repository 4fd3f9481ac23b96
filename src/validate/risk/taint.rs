//! Decoding split from running: a variable assigned what a decoder
//! returns (or what is computed from such a variable, one assignment at a
//! time, in order), later evaluated (`exec(payload)`, `eval "$CMD"`,
//! `new Function(code)`, `iex $s`), in one script or code block. Followed
//! by name, line by line: a pattern list that merely mentions `eval()` or
//! `b64decode` taints nothing.

use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

use super::hit::{Context, Hit};
use super::mention::browser_markup;
use super::text::{Kind, Text};

fn build(pattern: &str) -> Regex {
    RegexBuilder::new(pattern)
        .unicode(false)
        .build()
        .expect("taint pattern")
}

/// A decoder call.
static DECODE_CALL: LazyLock<Regex> = LazyLock::new(|| {
    build(
        r#"\b(?:b64decode|b85decode|a85decode|b32decode|urlsafe_b64decode|unhexlify|fromhex|atob|FromBase64String|base64_decode|decode64|decode_base64|decompress)\b|Buffer\.from\([^)\n]*["'](?:base64|hex)["']|\bbase64[ \t]+(?:-[A-Za-z]*[dD][A-Za-z]*|--decode)\b|\bxxd[ \t]+(?:-[a-z]+[ \t]+)*-r\b"#,
    )
});
/// An assignment: its name, and what follows `=`.
static ASSIGN: LazyLock<Regex> = LazyLock::new(|| {
    build(
        r"^[ \t]*(?:(?:let|const|var|local|export|my|readonly)[ \t]+)?\$?([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?::[ \t]*[A-Za-z_][\w\[\], ]*)?[ \t]*=([^=].*)?$",
    )
});
/// A sink evaluating a variable: the variable.
static SINK: LazyLock<Regex> = LazyLock::new(|| {
    build(
        r#"(?:^|[^.\w])(?:exec|eval)[ \t]*\([ \t]*(?:compile[ \t]*\([ \t]*)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*[,)]|\bnew[ \t]+Function[ \t]*\([^)\n]*?\b([A-Za-z_][A-Za-z0-9_]*)[ \t]*\)|\beval[ \t]+["']?\$\{?([A-Za-z_][A-Za-z0-9_]*)|\b(?:ba|z|da)?sh[ \t]+-c[ \t]+["']?\$\{?([A-Za-z_][A-Za-z0-9_]*)|(?i:\b(?:iex|invoke-expression)\b)[ \t]*\(?[ \t]*\$([A-Za-z_][A-Za-z0-9_]*)"#,
    )
});

/// Names tainted per segment before one is dropped.
const MAX_TAINTED: usize = 64;

/// Whether `line` uses `name` as a word.
fn uses(line: &[u8], name: &[u8]) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    line.windows(name.len()).enumerate().any(|(i, w)| {
        w == name
            && (i == 0 || !word(line[i - 1]))
            && line.get(i + name.len()).is_none_or(|&b| !word(b))
    })
}

/// Decoded values evaluated in the same script or code block.
pub fn decode_then_eval(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    if !matches!(text.kind, Kind::Script | Kind::Markdown)
        || !DECODE_CALL.is_match(text.raw.as_bytes())
    {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut tainted: Vec<(Vec<u8>, u32)> = Vec::new();
    let mut segment = None;
    let mut offset = 0;
    for line in text.raw.split_inclusive('\n') {
        let at = offset;
        offset += line.len();
        if !text.in_code(at) {
            continue;
        }
        let unit = text.segment(at);
        if segment.as_ref() != Some(&unit) {
            tainted.clear();
            segment = Some(unit);
        }
        let bytes = line.trim_end().as_bytes();
        if let Some(sink) = SINK.captures(bytes) {
            let name = (1..=5)
                .find_map(|i| sink.get(i))
                .map(|m| m.as_bytes())
                .unwrap_or_default();
            if let Some((_, from)) = tainted.iter().find(|(t, _)| t.as_slice() == name) {
                if !browser_markup(line) {
                    out.push(Hit::at(at).note(format!(
                        "`{}` holds what line {from} decodes",
                        String::from_utf8_lossy(name)
                    )));
                }
            }
        }
        if let Some(assign) = ASSIGN.captures(bytes) {
            let name = assign.get(1).map_or(&b""[..], |m| m.as_bytes()).to_vec();
            let value = assign.get(2).map_or(&b""[..], |m| m.as_bytes());
            let decoded = DECODE_CALL.is_match(value);
            let from = tainted
                .iter()
                .find(|(t, _)| uses(value, t))
                .map(|(_, l)| *l);
            tainted.retain(|(t, _)| *t != name);
            if (decoded || from.is_some()) && tainted.len() < MAX_TAINTED {
                tainted.push((name, from.unwrap_or_else(|| text.line_of(at))));
            }
        }
    }
    out.truncate(4);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sinks(raw: &str) -> Vec<u32> {
        let text = Text::new(raw, Kind::Script);
        decode_then_eval(
            &text,
            &Context {
                owner: "",
                depth: 0,
            },
        )
        .iter()
        .map(|h| text.line_of(h.at))
        .collect()
    }

    #[test]
    fn follows_decoded_values_by_name() {
        assert_eq!(
            sinks("import base64\np = base64.b64decode(x)\ns = p.decode()\nexec(s)\n"),
            [4]
        );
        assert_eq!(
            sinks("CMD=$(echo \"$B\" | base64 -d)\neval \"$CMD\"\n"),
            [2]
        );
        assert_eq!(sinks("const code = atob(s);\nnew Function(code)();\n"), [2]);
        assert_eq!(
            sinks(
                "$s = [Text.Encoding]::UTF8.GetString([Convert]::FromBase64String($b))\niex $s\n"
            ),
            [2]
        );
        // Mentioned, or evaluating something else: nothing.
        assert!(sinks("patterns = [r'b64decode', r'eval\\s*\\(']\nexec(user_code)\n").is_empty());
        assert!(sinks("img = base64.b64decode(data)\nresult = eval(expr)\n").is_empty());
    }
}
