//! Content pushed out of sight: after a long run of blank lines, or to the
//! right of a long run of spaces (blank characters like U+2800 and
//! U+3164 count as spaces). Trailing blank lines, table cell padding and
//! aligned comments are not payloads.

use super::hit::{Context, Hit};
use super::text::{Kind, Text};

/// Blank lines in a row that hide what follows.
pub const BLANK_LINES: usize = 40;
/// Spaces in a row that push the rest of a line off-screen.
pub const SPACES: usize = 100;

/// Content after a long run of blank lines.
pub fn blank_lines(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    let mut out = Vec::new();
    let mut blank = 0;
    let mut offset = 0;
    for line in text.raw.split_inclusive('\n') {
        if line.chars().all(is_blank) {
            blank += 1;
        } else {
            let comment = text.kind == Kind::Script
                && line
                    .trim_start()
                    .trim_start_matches(';')
                    .starts_with(['#', '/', '*'])
                && !line.trim_start().starts_with("#!");
            if blank >= BLANK_LINES && !comment {
                out.push(Hit::at(offset).note(format!("after {blank} blank lines")));
            }
            blank = 0;
        }
        offset += line.len();
    }
    out
}

fn is_blank(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{2800}' | '\u{3164}' | '\u{115F}' | '\u{1160}' | '\u{FFA0}' | '\u{200B}'
        )
}

/// Lines with a long run of blanks and content after it: (offset of what
/// follows, run length).
fn padded(text: &Text<'_>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in text.raw.split_inclusive('\n') {
        let mut run = 0;
        for (i, c) in line.char_indices() {
            if c != '\n' && c != '\r' && is_blank(c) {
                run += 1;
                continue;
            }
            if run >= SPACES && c != '\n' && c != '\r' {
                let rest = line[i..].trim_start();
                // Table cells, comments, rules and drawings are layout;
                // a letter, digit, path, quote or shell operator is content.
                let content = rest.starts_with(|c: char| {
                    c.is_ascii_alphanumeric()
                        || matches!(
                            c,
                            '$' | '&' | ';' | '(' | '.' | '~' | '"' | '\'' | '`' | '>' | '!' | '@'
                        )
                }) || (rest.starts_with('/')
                    && !rest.starts_with("//")
                    && !rest.starts_with("/*"));
                let decoration = !content;
                if !decoration {
                    out.push((offset + i, run));
                    break;
                }
            }
            run = 0;
        }
        offset += line.len();
    }
    out
}

/// Long blank runs in code.
pub fn spaces_in_code(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    padded(text)
        .into_iter()
        .filter(|&(at, _)| text.in_code(at) || text.kind == Kind::Script)
        .map(|(at, run)| Hit::at(at).note(format!("after {run} blank characters")))
        .collect()
}

/// Long blank runs in prose.
pub fn spaces_in_prose(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    padded(text)
        .into_iter()
        .filter(|&(at, _)| !text.in_code(at))
        .map(|(at, run)| Hit::at(at).note(format!("after {run} blank characters")))
        .collect()
}
