//! What surrounds a hit, for a label beside its severity: an example in
//! documentation about attacks is `documentation-like`, a phrase inside a
//! program's text `in-program-text`. The label never lowers the severity:
//! the author writes the words around a payload too.

use super::mention;
use super::rules::{Matcher, Mention, Rule};
use super::text::{Kind, Text};
use super::Class;

/// Classes whose evidence documentation about attacks shows as examples.
pub const DOCUMENTABLE: &[Class] = &[
    Class::CredentialExfiltration,
    Class::CredentialAccess,
    Class::DownloadExecute,
    Class::DecodeExecute,
    Class::Homoglyph,
    Class::HiddenText,
    Class::AgentManipulation,
    Class::EncryptedArchive,
    Class::RawIp,
];

/// Lines above a hit read as its context.
pub const NEARBY_LINES: usize = 3;
/// Lines above a hit searched for its heading.
pub const HEADING_LINES: usize = 200;

/// The label of a hit whose surroundings read as documentation.
pub const DOCUMENTATION_LIKE: &str = "documentation-like";
/// The label of a phrase inside a program's text.
pub const PROGRAM_DATA: &str = "in-program-text";

/// The label of `rule`'s hit at `at` of `text`: in Markdown or other
/// prose files, an example in code or quotes, in documentation about
/// attacks (the line, the lines before, its heading), is
/// `documentation-like`; a phrase addressed to the agent inside a script
/// or config file is `in-program-text`. A label sits beside the
/// severity: nothing the author writes lowers a finding.
pub fn label(text: &Text<'_>, rule: &Rule, at: usize) -> Option<&'static str> {
    if let Some(label) = program_label(text.kind, rule) {
        return Some(label);
    }
    if !matches!(text.kind, Kind::Markdown | Kind::Other) || !DOCUMENTABLE.contains(&rule.class) {
        return None;
    }
    let line = text.line_at(at);
    let quoted = in_quotes(&text.raw[line.clone()], at - line.start);
    if !(text.in_code(at) || quoted) {
        return None;
    }
    let after_span = text
        .inline_end(at)
        .map_or("", |end| &text.raw[end.min(line.end)..line.end]);
    let above = &text.raw[nearby_start(text, line.start)..at];
    (mention::documented(above)
        || mention::documented(after_span)
        || mention::documented(&headings_above(text, line.start)))
    .then_some(DOCUMENTATION_LIKE)
}

/// A phrase addressed to the agent (a `Quoted` pattern) inside a script
/// or config file (or decoded from one) is labelled as the program's text.
pub fn program_label(kind: Kind, rule: &Rule) -> Option<&'static str> {
    let phrase = matches!(
        rule.matcher,
        Matcher::Pattern {
            mention: Mention::Quoted,
            ..
        }
    );
    (phrase && matches!(kind, Kind::Script | Kind::Config)).then_some(PROGRAM_DATA)
}

/// Whether offset `at` of `line` is in a quoted string: a quote within
/// three characters before it, or an odd number of double quotes before
/// it on the line.
fn in_quotes(line: &str, at: usize) -> bool {
    let before = &line[..at];
    let near: String = before.chars().rev().take(3).collect();
    near.chars()
        .any(|c| matches!(c, '"' | '\'' | '`' | '\u{201C}' | '\u{2018}'))
        || before.matches('"').count() % 2 == 1
        || before.matches('\u{201C}').count() > before.matches('\u{201D}').count()
}

/// Where the lines just above the one starting at `start` begin.
pub fn nearby_start(text: &Text<'_>, start: usize) -> usize {
    let mut at = start;
    for _ in 0..NEARBY_LINES {
        if at == 0 {
            break;
        }
        at = text.line_at(at - 1).start;
    }
    at
}

/// The headings above the line starting at `start`: the nearest, then
/// each one of a higher level up to the title (within 200 lines and
/// outside code), joined.
pub fn headings_above(text: &Text<'_>, start: usize) -> String {
    let mut out = String::new();
    let mut level = usize::MAX;
    let mut at = start;
    for _ in 0..HEADING_LINES {
        if at == 0 || level == 1 {
            break;
        }
        let line = text.line_at(at - 1);
        let content = &text.raw[line.clone()];
        let depth = content.bytes().take_while(|&b| b == b'#').count();
        if depth > 0 && depth < level && !text.in_code(line.start) {
            out.push_str(content);
            out.push('\n');
            level = depth;
        }
        at = line.start;
    }
    out
}
