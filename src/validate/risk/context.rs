//! What surrounds a hit, for its severity: an example in documentation
//! about attacks, or a phrase inside a program's text, is kept at `info`
//! (visible, not an alarm). Only prose files are read this way; a script
//! that does the thing is never "documentation".

use super::mention;
use super::rules::{Matcher, Mention, Rule};
use super::text::{Kind, Text};
use super::{Class, Severity};

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

/// The severity of `rule`'s hit at `at` of `text` once its context is
/// read, and the note saying why it changed: in Markdown or other prose
/// files, an example in code or quotes, in documentation about attacks
/// (the line, the lines before, its heading), is `info`; a phrase
/// addressed to the agent inside a script or config file is the program's
/// data, `info` too.
pub fn adjust(
    text: &Text<'_>,
    rule: &Rule,
    severity: Severity,
    at: usize,
) -> (Severity, Option<&'static str>) {
    if severity <= Severity::Info {
        return (severity, None);
    }
    if let (changed, Some(why)) = in_program(text.kind, rule, severity) {
        return (changed, Some(why));
    }
    if !matches!(text.kind, Kind::Markdown | Kind::Other) || !DOCUMENTABLE.contains(&rule.class) {
        return (severity, None);
    }
    let line = text.line_at(at);
    let quoted = in_quotes(&text.raw[line.clone()], at - line.start);
    if !(text.in_code(at) || quoted) {
        return (severity, None);
    }
    // The words around the example, never the example itself (an attack
    // could name its host `attack-cdn`): the line up to it, the line after
    // its inline code span, the lines above, the heading.
    let after_span = text
        .inline_end(at)
        .map_or("", |end| &text.raw[end.min(line.end)..line.end]);
    let above = &text.raw[nearby_start(text, line.start)..at];
    if mention::documented(above)
        || mention::documented(after_span)
        || mention::documented(&headings_above(text, line.start))
    {
        (
            Severity::Info,
            Some("an example in documentation about such attacks"),
        )
    } else {
        (severity, None)
    }
}

/// A phrase addressed to the agent (a `Quoted` pattern) inside a script
/// or config file (or decoded from one) is the program's data: `info`.
pub fn in_program(kind: Kind, rule: &Rule, severity: Severity) -> (Severity, Option<&'static str>) {
    let phrase = matches!(
        rule.matcher,
        Matcher::Pattern {
            mention: Mention::Quoted,
            ..
        }
    );
    if phrase && severity > Severity::Info && matches!(kind, Kind::Script | Kind::Config) {
        (
            Severity::Info,
            Some("in a program's text, not addressed to the agent"),
        )
    } else {
        (severity, None)
    }
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
