//! Latin words and hosts written with lookalike letters from another
//! script (`сurl` with a Cyrillic `с`, `gіthub.com` with a Cyrillic `і`).
//! A word counts when its Latin letters are at least as many as its other
//! letters (in prose, more): a Russian word with one Latin typo is a typo,
//! a Latin command with one Cyrillic letter is a spoof.

use super::hit::{Context, Hit};
use super::text::{excerpt, mixed_words, Kind, Text};
use super::unicode::latin_lookalike;

/// Hits a check returns per text (the engine keeps fewer).
const MAX_HITS: usize = 64;

/// Two-letter commands a single lookalike letter can spoof.
const SHORT_COMMANDS: &[&str] = &[
    "sh", "ls", "cp", "rm", "mv", "cd", "ln", "su", "id", "ps", "nc", "dd", "ip", "gh", "go",
];

/// Latin and non-Latin letter counts of `word`.
fn counts(word: &str) -> (usize, usize) {
    let latin = word.chars().filter(char::is_ascii_alphabetic).count();
    let other = word
        .chars()
        .filter(|c| c.is_alphabetic() && !c.is_ascii())
        .count();
    (latin, other)
}

fn shown(text: &Text<'_>, at: usize) -> String {
    let line = text.line_at(at);
    excerpt(&text.raw[line.clone()], at - line.start, |c| {
        latin_lookalike(c).is_some()
    })
}

/// The mixed words of `text` in code (`code`) or in prose, Latin enough.
fn mixed(text: &Text<'_>, code: bool) -> Vec<Hit> {
    if text.raw.is_ascii() {
        return Vec::new();
    }
    mixed_words(text.raw)
        .into_iter()
        // Configuration values are data, read with prose's bar.
        .filter(|w| (text.in_code(w.start) && text.kind != Kind::Config) == code)
        .filter(|w| {
            let (latin, other) = counts(&text.raw[w.clone()]);
            // A tie counts only for a short command spelled with one
            // lookalike (`ѕh`, `lѕ`); it is more often a symbol (`αh`).
            let folded: String = text.raw[w.clone()]
                .chars()
                .map(|c| latin_lookalike(c).unwrap_or(c).to_ascii_lowercase())
                .collect();
            latin > other || (code && latin == other && SHORT_COMMANDS.contains(&folded.as_str()))
        })
        .take(MAX_HITS)
        .map(|w| Hit::at(w.start).excerpt(shown(text, w.start)))
        .collect()
}

/// Mixed words in code.
pub fn mixed_in_code(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    mixed(text, true)
}

/// Mixed words in prose.
pub fn mixed_in_prose(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    mixed(text, false)
}

/// URLs whose host has a label that mixes Latin and lookalike letters,
/// or is spelled only with lookalikes (an all-Cyrillic `аррӏе.com`).
pub fn lookalike_host(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    if text.raw.is_ascii() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, _) in text.raw.match_indices("://") {
        let rest = &text.raw[i + 3..];
        let end = rest
            .find(|c: char| {
                c.is_whitespace()
                    || matches!(
                        c,
                        '/' | ':' | '?' | '#' | ')' | ']' | '"' | '\'' | '>' | '<' | '`'
                    )
            })
            .unwrap_or(rest.len());
        let host = &rest[..end];
        let spoofed = host.split('.').any(|label| {
            let lookalikes = label
                .chars()
                .filter(|&c| latin_lookalike(c).is_some())
                .count();
            let latin = label.chars().filter(char::is_ascii_alphabetic).count();
            let letters = label.chars().filter(|c| c.is_alphabetic()).count();
            lookalikes > 0 && (latin > 0 || lookalikes == letters)
        });
        if spoofed {
            out.push(Hit::at(i + 3).excerpt(shown(text, i + 3)));
            if out.len() >= MAX_HITS {
                break;
            }
        }
    }
    out
}
