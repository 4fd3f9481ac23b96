//! Runs the rule table over a skill: file checks on every file, pattern
//! and text checks on every text file and on the payloads decoded from it
//! (to a bounded depth), skill checks once; then one finding per class and
//! line, the most severe, and a bounded number per rule and file.

use std::borrow::Cow;

use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};

use super::found::{At, Found, Said, PER_RULE_AND_FILE};
use super::hit::{Context, FileHit, Hit};
use super::hosts;
use super::literals::{Prefilter, Syntax};
use super::rules::{by_host, expand, Matcher, Mention, Rule, RULES};
use super::shared::Shared;
use super::text::{excerpt, floor_char, Kind, Text};
use super::{
    capability, context, decode, mention, reading, rules, Class, RiskFinding, Severity, SkillFiles,
};

/// How many decodings deep payloads are scanned (a payload inside a
/// payload is scanned; one inside that is not).
pub const MAX_DEPTH: u8 = 2;

/// The pattern rules, compiled once: their literals to tell which may
/// match a text (one pass, [`Prefilter`]), the rules with no useful literal
/// as one set, and each alone to find where.
pub(super) struct Compiled {
    prefilter: Prefilter,
    /// The rules with no useful literal, and their numbers in `each`.
    rest: Option<(RegexSet, Vec<usize>)>,
    each: Vec<(&'static Rule, Regex, Mention)>,
}

pub(super) static COMPILED: Shared<Compiled> = Shared::new(compile);

fn compile() -> Compiled {
    let patterns: Vec<(&'static Rule, String, Mention)> = RULES
        .iter()
        .filter_map(|rule| match rule.matcher {
            Matcher::Pattern { regex, mention } => Some((rule, expand(regex), mention)),
            _ => None,
        })
        .collect();
    let written: Vec<&str> = patterns.iter().map(|(_, p, _)| p.as_str()).collect();
    let syntax = Syntax {
        multi_line: true,
        unicode: false,
    };
    let prefilter = Prefilter::new(&written, syntax);
    let numbers = prefilter.always().to_vec();
    let rest = (!numbers.is_empty()).then(|| {
        let set = RegexSetBuilder::new(numbers.iter().map(|&i| written[i]))
            .unicode(false)
            .multi_line(true)
            .size_limit(64 << 20)
            .dfa_size_limit(super::words::SET_CACHE_LIMIT)
            .build()
            .expect("risk patterns compile");
        (set, numbers)
    });
    let each = patterns
        .into_iter()
        .map(|(rule, pattern, mention)| {
            let regex = RegexBuilder::new(&pattern)
                .unicode(false)
                .multi_line(true)
                .size_limit(64 << 20)
                .build()
                .unwrap_or_else(|e| panic!("rule {}: {e}", rule.id));
            (rule, regex, mention)
        })
        .collect();
    Compiled {
        prefilter,
        rest,
        each,
    }
}

impl Compiled {
    /// The rules that may match `text`, in order: every one that does.
    pub(super) fn candidates(&self, text: &[u8]) -> Vec<usize> {
        let mut candidates = self.prefilter.candidates(text);
        if let Some((set, numbers)) = &self.rest {
            candidates.extend(set.matches(text).iter().map(|at| numbers[at]));
            candidates.sort_unstable();
        }
        candidates
    }

    /// The rules' patterns, as compiled.
    #[cfg(test)]
    pub(super) fn patterns(&self) -> Vec<&str> {
        self.each
            .iter()
            .map(|(_, regex, _)| regex.as_str())
            .collect()
    }
}

/// Where the text being scanned came from: a file, or a payload decoded
/// on a line of one.
#[derive(Clone)]
pub struct Origin<'a> {
    pub file: &'a str,
    /// What the shipped file is.
    pub kind: Kind,
    /// The line of the shipped file and how the payload was encoded
    /// (`base64`, `base64 in hex`...).
    pub decoded: Option<(u32, String)>,
    /// For code in normal form: the file's 0-based line of each of its
    /// lines.
    pub lines: Option<&'a [u32]>,
}

/// The classes whose text checks read code in normal form too.
const NORMAL_FORM_CLASSES: &[Class] = &[
    Class::CredentialExfiltration,
    Class::CredentialAccess,
    Class::DownloadExecute,
    Class::DecodeExecute,
    Class::EncryptedArchive,
    Class::RawIp,
];

/// Files larger than this are not read by the text rules (a finding says
/// so): no skill's script or instructions come near it.
pub const MAX_SCAN_BYTES: usize = 8 << 20;

/// See [`super::scan`].
pub fn scan(skill: &SkillFiles<'_>) -> Vec<RiskFinding> {
    let owner = hosts::owner_of(skill.repo);
    let mut found = Found::default();
    let mut evidence = Vec::new();
    for (index, file) in skill.files.iter().enumerate() {
        for rule in RULES {
            if let Matcher::File(check) = rule.matcher {
                for hit in check(index, skill.files) {
                    push_file_hit(&mut found, rule, skill, hit);
                }
            }
        }
        if file.bytes.len() > MAX_SCAN_BYTES {
            gave_up(
                &mut found,
                file.path,
                format!(
                    "{} bytes, over the scan's {MAX_SCAN_BYTES}",
                    file.bytes.len()
                ),
            );
            continue;
        }
        if let Some(raw) = as_text(file.bytes) {
            let head = &raw[..floor_char(&raw, raw.len().min(64))];
            let text = Text::new(&raw, Kind::of(file.path, head));
            let origin = Origin {
                file: file.path,
                kind: text.kind,
                decoded: None,
                lines: None,
            };
            let context = Context { owner, depth: 0 };
            scan_text(&text, &context, &origin, &mut found);
            let mut patterns = PatternScan {
                file: file.path,
                owner,
                found: &mut found,
                nested: Vec::new(),
            };
            reading::read(&text, file.path, &mut patterns, &mut evidence);
        }
    }
    for rule in RULES {
        if let Matcher::Skill(check) = rule.matcher {
            for hit in check(skill) {
                push_file_hit(&mut found, rule, skill, hit);
            }
        }
    }
    let runs_fetched =
        found.any(|f| f.class == Class::DownloadExecute.as_str() && f.severity >= Severity::High);
    for derived in capability::findings(&evidence, runs_fetched) {
        let rule = rules::rule(derived.rule);
        debug_assert!(rule.is_some(), "no rule {} in the table", derived.rule);
        if let Some(rule) = rule {
            found.push(
                rule,
                At {
                    file: &derived.file,
                    line: Some(derived.line),
                },
                derived.severity,
                Said {
                    excerpt: derived.excerpt,
                    note: derived.note,
                    context: None,
                },
            );
        }
    }
    found.finish()
}

/// The pattern rules over the code `reading` puts in normal form.
struct PatternScan<'e> {
    file: &'e str,
    owner: &'e str,
    found: &'e mut Found,
    /// What is being gathered inside one line of the file, innermost last.
    nested: Vec<Found>,
}

impl PatternScan<'_> {
    fn target(&mut self) -> &mut Found {
        match self.nested.last_mut() {
            Some(found) => found,
            None => self.found,
        }
    }
}

impl reading::Patterns for PatternScan<'_> {
    fn scan(&mut self, normal: &Text<'_>, lines: &[u32]) {
        let origin = Origin {
            file: self.file,
            kind: Kind::Script,
            decoded: None,
            lines: Some(lines),
        };
        // Payloads are decoded from the file as written; the normal form
        // is not decoded again.
        let context = Context {
            owner: self.owner,
            depth: MAX_DEPTH,
        };
        let found = match self.nested.last_mut() {
            Some(found) => found,
            None => &mut *self.found,
        };
        scan_text(normal, &context, &origin, found);
    }

    fn enter(&mut self) {
        self.nested.push(Found::default());
    }

    fn leave(&mut self, line: u32) {
        if let Some(inner) = self.nested.pop() {
            self.target().absorb(inner, line);
        }
    }

    fn gave_up(&mut self, why: &str) {
        gave_up(self.found, self.file, why.to_string());
    }
}

/// Records that the scan gave up on `file`, and why.
pub fn gave_up(found: &mut Found, file: &str, why: String) {
    if let Some(rule) = rules::rule("unscanned/gave-up") {
        found.push(
            rule,
            At { file, line: None },
            rule.severity,
            Said {
                excerpt: why.clone(),
                note: Some(why),
                context: None,
            },
        );
    }
}

fn push_file_hit(found: &mut Found, rule: &'static Rule, skill: &SkillFiles<'_>, hit: FileHit) {
    let file = skill.files[hit.file].path;
    found.push(
        rule,
        At {
            file,
            line: hit.line,
        },
        rule.severity,
        Said {
            excerpt: hit.excerpt,
            note: hit.note,
            context: None,
        },
    );
}

/// The text of `bytes`, unless they are binary: a NUL byte near the start,
/// or more than one in a hundred characters not UTF-8.
pub fn as_text(bytes: &[u8]) -> Option<Cow<'_, str>> {
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return None;
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Some(Cow::Borrowed(text)),
        Err(_) => {
            let text = String::from_utf8_lossy(bytes);
            let bad = text
                .chars()
                .filter(|&c| c == char::REPLACEMENT_CHARACTER)
                .count();
            (bad * 100 <= text.chars().count()).then_some(text)
        }
    }
}

/// Runs the pattern and text rules over `text`, then over the payloads
/// decoded from it.
pub fn scan_text(text: &Text<'_>, context: &Context<'_>, origin: &Origin<'_>, found: &mut Found) {
    let compiled = COMPILED.get();
    let norm = text.norm.as_bytes();
    // A candidate that does not match finds nothing below.
    for index in compiled.candidates(norm) {
        let (rule, regex, mention) = &compiled.each[index];
        for m in regex.find_iter(norm).take(4 * PER_RULE_AND_FILE) {
            let at = text.to_raw(m.start());
            let line = text.line_at(at);
            let mut severity = rule.severity;
            if let Some(table) = rule.by_host {
                // The URL may follow the match (`bash -c "$(curl` ... `URL)"`).
                let line_end = norm[m.end()..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(norm.len(), |p| m.end() + p);
                let command =
                    String::from_utf8_lossy(&norm[m.start()..line_end.min(m.end() + 400)]);
                let Some(target) = hosts::target(&command, context.owner) else {
                    continue;
                };
                severity = by_host(table, target.kind);
            }
            let within = &text.raw[line.clone()];
            let nearby = &text.raw[context::nearby_start(text, line.start)..line.start];
            let prefix = &within[..at - line.start];
            // What the author wrote around a match never lowers it; it
            // labels it. A pattern a search looks for, and markup a
            // browser runs, are other matters: what the line does.
            if *mention != Mention::Never && mention::searched_for(within, at - line.start) {
                continue;
            }
            let documented = match mention {
                Mention::Never => false,
                Mention::Negated => {
                    let lead = text.inline_start(at).unwrap_or(at).max(line.start);
                    mention::negated(&within[..lead - line.start])
                        || previous_line(text, line.start).is_some_and(mention::bad_example)
                        || mention::quoted_documented(within, at - line.start, nearby)
                }
                Mention::Quoted | Mention::Browser => {
                    if *mention == Mention::Browser && mention::browser_markup(within) {
                        continue;
                    }
                    mention::negated(prefix)
                        || mention::described(prefix)
                        || mention::quoted(within, at - line.start, nearby)
                }
            };
            let mut hit = Hit::at(at);
            hit.documented = documented;
            report(text, origin, found, rule, severity, &hit);
        }
    }
    for rule in RULES {
        // Code in normal form is read again for what its spelling hid;
        // the checks of characters and layout read the file as written.
        if origin.lines.is_some() && !NORMAL_FORM_CLASSES.contains(&rule.class) {
            continue;
        }
        if let Matcher::Text(check) = rule.matcher {
            // Hits past the per-rule cap would be dropped anyway; reading
            // their context costs time.
            for hit in check(text, context).into_iter().take(4 * PER_RULE_AND_FILE) {
                let severity = match (rule.by_host, hit.host) {
                    (Some(table), Some(kind)) => by_host(table, kind),
                    (Some(_), None) => continue,
                    _ => rule.severity,
                };
                report(text, origin, found, rule, severity, &hit);
            }
        }
    }
    if context.depth < MAX_DEPTH {
        for payload in decode::payloads(text) {
            let inner = Text::new(&payload.text, Kind::Script);
            let (line, how) = match &origin.decoded {
                Some((line, how)) => (*line, format!("{} in {how}", payload.how)),
                None => (text.line_of(payload.at), payload.how.to_string()),
            };
            let nested = Origin {
                file: origin.file,
                kind: origin.kind,
                decoded: Some((line, how)),
                lines: None,
            };
            scan_text(
                &inner,
                &Context {
                    depth: context.depth + 1,
                    ..*context
                },
                &nested,
                found,
            );
        }
    }
}

/// Adds the finding of `hit` in `text`. Its severity is the rule's (or
/// its host's): what surrounds it only adds a label (see `context`).
fn report(
    text: &Text<'_>,
    origin: &Origin<'_>,
    found: &mut Found,
    rule: &'static Rule,
    severity: Severity,
    hit: &Hit,
) {
    let label = match (&origin.decoded, origin.lines) {
        (None, None) => context::label(text, rule, hit.at),
        (Some(_), _) => context::program_label(origin.kind, rule),
        (None, Some(_)) => None,
    }
    .or(hit.documented.then_some(context::DOCUMENTATION_LIKE));
    let shown = hit.excerpt.clone().unwrap_or_else(|| text.excerpt(hit.at));
    match (&origin.decoded, origin.lines) {
        (None, None) => found.push(
            rule,
            At {
                file: origin.file,
                line: Some(text.line_of(hit.at)),
            },
            severity,
            Said {
                excerpt: shown,
                note: hit.note.clone(),
                context: label,
            },
        ),
        (None, Some(lines)) => {
            let line = (text.line_of(hit.at) as usize)
                .checked_sub(1)
                .and_then(|i| lines.get(i))
                .map(|l| l + 1);
            let note = match &hit.note {
                Some(n) => {
                    format!("{n}; as the code reads once quoting, escapes and names are resolved")
                }
                None => {
                    "as the code reads once quoting, escapes and names are resolved".to_string()
                }
            };
            let shown = excerpt(&format!("as read: {shown}"), 0, |_| false);
            found.push(
                rule,
                At {
                    file: origin.file,
                    line,
                },
                severity,
                Said {
                    excerpt: shown,
                    note: Some(note),
                    context: label,
                },
            );
        }
        (Some((line, how)), _) => {
            let note = match &hit.note {
                Some(n) => format!("{n}; inside a {how} payload decoded from this line"),
                None => format!("inside a {how} payload decoded from this line"),
            };
            let shown = excerpt(&format!("decoded {how}: {shown}"), 0, |_| false);
            found.push(
                rule,
                At {
                    file: origin.file,
                    line: Some(*line),
                },
                severity,
                Said {
                    excerpt: shown,
                    note: Some(note),
                    context: label,
                },
            );
        }
    }
}

/// The line before the one starting at `start`, if any.
fn previous_line<'t>(text: &'t Text<'_>, start: usize) -> Option<&'t str> {
    (start > 0).then(|| &text.raw[text.line_at(start - 1)])
}
