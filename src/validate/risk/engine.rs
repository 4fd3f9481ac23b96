//! Runs the rule table over a skill: file checks on every file, pattern
//! and text checks on every text file and on the payloads decoded from it
//! (to a bounded depth), skill checks once; then one finding per class and
//! line, the most severe, and a bounded number per rule and file.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};

use super::hit::{Context, FileHit, Hit};
use super::hosts::{self, HostKind};
use super::rules::{expand, Matcher, Mention, Rule, RULES};
use super::text::{excerpt, floor_char, Kind, Text};
use super::{context, decode, mention, Class, RiskFinding, Severity, SkillFiles};

/// How many decodings deep payloads are scanned (a payload inside a
/// payload is scanned; one inside that is not).
pub const MAX_DEPTH: u8 = 2;
/// Findings kept per rule and file.
pub const PER_RULE_AND_FILE: usize = 10;

/// The pattern rules, compiled once: a set to tell which match a text at
/// all (one pass), and each alone to find where.
struct Compiled {
    set: RegexSet,
    each: Vec<(&'static Rule, Regex, Mention)>,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let patterns: Vec<(&'static Rule, String, Mention)> = RULES
        .iter()
        .filter_map(|rule| match rule.matcher {
            Matcher::Pattern { regex, mention } => Some((rule, expand(regex), mention)),
            _ => None,
        })
        .collect();
    let set = RegexSetBuilder::new(patterns.iter().map(|(_, p, _)| p))
        .unicode(false)
        .multi_line(true)
        .size_limit(64 << 20)
        .dfa_size_limit(64 << 20)
        .build()
        .expect("risk patterns compile");
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
    Compiled { set, each }
});

/// Where the text being scanned came from: a file, or a payload decoded
/// on a line of one.
#[derive(Clone)]
struct Origin<'a> {
    file: &'a str,
    /// What the shipped file is.
    kind: Kind,
    /// The line of the shipped file and how the payload was encoded
    /// (`base64`, `base64 in hex`...).
    decoded: Option<(u32, String)>,
}

/// The findings so far.
#[derive(Default)]
struct Found {
    best: HashMap<(String, Class, Option<u32>), RiskFinding>,
    per_rule: HashMap<(String, &'static str), usize>,
}

impl Found {
    fn push(
        &mut self,
        rule: &'static Rule,
        file: &str,
        line: Option<u32>,
        severity: Severity,
        excerpt: String,
        note: Option<String>,
    ) {
        let count = self
            .per_rule
            .entry((file.to_string(), rule.id))
            .or_default();
        if *count >= PER_RULE_AND_FILE {
            return;
        }
        let why = match note {
            Some(note) => format!("{} ({note})", rule.why),
            None => rule.why.to_string(),
        };
        let finding = RiskFinding {
            class: rule.class.as_str().to_string(),
            severity,
            file: file.to_string(),
            line,
            excerpt,
            why,
        };
        let key = (file.to_string(), rule.class, line);
        match self.best.get(&key) {
            Some(old) if old.severity >= severity => {}
            _ => {
                *count += 1;
                self.best.insert(key, finding);
            }
        }
    }

    fn finish(self) -> Vec<RiskFinding> {
        let mut out: Vec<RiskFinding> = self.best.into_values().collect();
        out.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then_with(|| a.file.cmp(&b.file))
                .then_with(|| a.line.cmp(&b.line))
                .then_with(|| a.class.cmp(&b.class))
        });
        out
    }
}

/// See [`super::scan`].
pub fn scan(skill: &SkillFiles<'_>) -> Vec<RiskFinding> {
    let owner = hosts::owner_of(skill.repo);
    let mut found = Found::default();
    for (index, file) in skill.files.iter().enumerate() {
        for rule in RULES {
            if let Matcher::File(check) = rule.matcher {
                for hit in check(index, skill.files) {
                    push_file_hit(&mut found, rule, skill, hit);
                }
            }
        }
        if let Some(raw) = as_text(file.bytes) {
            let head = &raw[..floor_char(&raw, raw.len().min(64))];
            let text = Text::new(&raw, Kind::of(file.path, head));
            let origin = Origin {
                file: file.path,
                kind: text.kind,
                decoded: None,
            };
            scan_text(&text, &Context { owner, depth: 0 }, &origin, &mut found);
        }
    }
    for rule in RULES {
        if let Matcher::Skill(check) = rule.matcher {
            for hit in check(skill) {
                push_file_hit(&mut found, rule, skill, hit);
            }
        }
    }
    found.finish()
}

fn push_file_hit(found: &mut Found, rule: &'static Rule, skill: &SkillFiles<'_>, hit: FileHit) {
    let file = skill.files[hit.file].path;
    found.push(rule, file, hit.line, rule.severity, hit.excerpt, hit.note);
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
fn scan_text(text: &Text<'_>, context: &Context<'_>, origin: &Origin<'_>, found: &mut Found) {
    let compiled = &*COMPILED;
    let norm = text.norm.as_bytes();
    for index in compiled.set.matches(norm).iter() {
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
            match mention {
                Mention::Never => {}
                Mention::Negated => {
                    // Inside inline code, the negation leads into the span.
                    let lead = text.inline_start(at).unwrap_or(at).max(line.start);
                    if mention::negated(&within[..lead - line.start]) {
                        continue;
                    }
                    // A bad example marked as one, or one quoted on a line
                    // about detection, is kept at info.
                    let nearby = &text.raw[context::nearby_start(text, line.start)..line.start];
                    if previous_line(text, line.start).is_some_and(mention::bad_example)
                        || mention::quoted_documented(within, at - line.start, nearby)
                    {
                        severity = Severity::Info;
                    }
                }
                Mention::Quoted | Mention::Browser => {
                    let prefix = &within[..at - line.start];
                    let nearby = &text.raw[context::nearby_start(text, line.start)..line.start];
                    if mention::negated(prefix)
                        || mention::described(prefix)
                        || mention::quoted(within, at - line.start, nearby)
                        || (*mention == Mention::Browser && mention::browser_markup(within))
                    {
                        continue;
                    }
                }
            }
            let hit = Hit::at(at);
            report(text, origin, found, rule, severity, &hit);
        }
    }
    for rule in RULES {
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

/// Adds the finding of `hit` in `text`.
fn report(
    text: &Text<'_>,
    origin: &Origin<'_>,
    found: &mut Found,
    rule: &'static Rule,
    severity: Severity,
    hit: &Hit,
) {
    // A decoded payload is never documentation; a phrase decoded from a
    // program's string is still the program's data.
    let (severity, why_changed) = match origin.decoded {
        None => context::adjust(text, rule, severity, hit.at),
        Some(_) => context::in_program(origin.kind, rule, severity),
    };
    let note = match (&hit.note, why_changed) {
        (Some(n), Some(c)) => Some(format!("{n}; {c}")),
        (None, Some(c)) => Some(c.to_string()),
        (n, None) => n.clone(),
    };
    let hit = &Hit {
        note,
        ..hit.clone()
    };
    let shown = hit.excerpt.clone().unwrap_or_else(|| text.excerpt(hit.at));
    match &origin.decoded {
        None => found.push(
            rule,
            origin.file,
            Some(text.line_of(hit.at)),
            severity,
            shown,
            hit.note.clone(),
        ),
        Some((line, how)) => {
            let note = match &hit.note {
                Some(n) => format!("{n}; inside a {how} payload decoded from this line"),
                None => format!("inside a {how} payload decoded from this line"),
            };
            let shown = excerpt(&format!("decoded {how}: {shown}"), 0, |_| false);
            found.push(rule, origin.file, Some(*line), severity, shown, Some(note));
        }
    }
}

/// The line before the one starting at `start`, if any.
fn previous_line<'t>(text: &'t Text<'_>, start: usize) -> Option<&'t str> {
    (start > 0).then(|| &text.raw[text.line_at(start - 1)])
}

/// The severity `table` gives `kind`.
fn by_host(table: &[(HostKind, Severity)], kind: HostKind) -> Severity {
    table
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(Severity::High, |(_, s)| *s)
}
