//! Third-party text made fit to hand to an agent (pure): the presenting
//! step ([`super`]) passes every author-written string through here once,
//! for every output shape (Agent Finder results, TopGun's objects,
//! `serve`, `find`, MCP), while the artifact keeps the text as its source
//! wrote it.
//!
//! Control characters are removed (line breaks and tabs become spaces), as
//! are the bidirectional overrides that can make text read differently
//! from what it says, and a description is cut at the Agent Skills
//! specification's 1,024 characters, ending in `…` when cut.

use serde_json::{Map, Value};

/// The longest description an agent receives, in characters (the Agent
/// Skills specification's limit for `description`).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// The longest name, title or metadata string an agent receives.
pub const MAX_FIELD_CHARS: usize = 1024;

/// `text` with control and bidirectional-override characters removed (line
/// breaks and tabs become single spaces) and cut to `max_chars` characters,
/// the last of which is `…` when it was cut.
pub fn clean(text: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max_chars * 4));
    let mut count = 0;
    let mut chars = text.chars().filter_map(|c| match c {
        '\n' | '\r' | '\t' => Some(' '),
        c if c.is_control() || is_bidi_control(c) => None,
        c => Some(c),
    });
    while let Some(c) = chars.next() {
        if count + 1 == max_chars && chars.clone().next().is_some() {
            out.push('…');
            return out;
        }
        if count == max_chars {
            break;
        }
        out.push(c);
        count += 1;
    }
    out
}

/// A Markdown body for an agent: `text` without control characters other
/// than line breaks and tabs, and without bidirectional overrides (as
/// [`clean`]), its lines kept.
pub fn clean_body(text: &str) -> String {
    text.chars()
        .filter(|&c| c == '\n' || c == '\t' || !(c.is_control() || is_bidi_control(c)))
        .collect()
}

/// A description for an agent: [`clean`] at [`MAX_DESCRIPTION_CHARS`].
pub fn description(text: &str) -> String {
    clean(text, MAX_DESCRIPTION_CHARS)
}

/// `value` with every string in it (keys included) [`clean`]ed at
/// [`MAX_FIELD_CHARS`].
pub fn clean_value(value: Value) -> Value {
    match value {
        Value::String(text) => Value::String(clean(&text, MAX_FIELD_CHARS)),
        Value::Array(items) => Value::Array(items.into_iter().map(clean_value).collect()),
        Value::Object(map) => Value::Object(clean_map(map)),
        other => other,
    }
}

/// `map` with every string in it (keys included) [`clean`]ed at
/// [`MAX_FIELD_CHARS`].
pub fn clean_map(map: Map<String, Value>) -> Map<String, Value> {
    map.into_iter()
        .map(|(key, value)| (clean(&key, MAX_FIELD_CHARS), clean_value(value)))
        .collect()
}

/// The embedding and override characters of the Unicode bidirectional
/// algorithm (U+202A-U+202E, U+2066-U+2069), and the marks U+200E, U+200F.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_go_and_line_breaks_become_spaces() {
        assert_eq!(
            clean("Reads\u{7}\u{1b}[31m PDFs\nand\tforms\u{202E}txt.exe", 100),
            "Reads[31m PDFs and formstxt.exe"
        );
        assert_eq!(clean("café ünïcode 😀", 100), "café ünïcode 😀");
    }

    #[test]
    fn a_long_description_is_cut_at_1024_characters_ending_in_an_ellipsis() {
        let long = "é".repeat(3000);
        let cut = description(&long);
        assert_eq!(cut.chars().count(), 1024);
        assert!(cut.ends_with("é…"));
        let exact = "a".repeat(1024);
        assert_eq!(description(&exact), exact);
        assert_eq!(description(&"a".repeat(1025)).chars().count(), 1024);
        assert_eq!(clean("abc", 0), "");
    }

    #[test]
    fn a_body_keeps_its_lines_and_loses_controls_and_overrides() {
        assert_eq!(
            clean_body("# Run\r\n\n\trm\u{1b}[2J -rf \u{202E}fdp.exe\u{2066}x\n"),
            "# Run\n\n\trm[2J -rf fdp.exex\n"
        );
    }

    #[test]
    fn every_string_in_metadata_is_cleaned() {
        let value = serde_json::json!({"li\ncense": ["MIT\u{0}", {"x": "a\u{202E}b"}], "n": 3});
        assert_eq!(
            clean_value(value),
            serde_json::json!({"li cense": ["MIT", {"x": "ab"}], "n": 3})
        );
    }
}
