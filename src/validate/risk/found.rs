//! The findings of one skill as they are found: at most one per class
//! and line (the most severe), a bounded number per rule and file, then
//! sorted most severe first.

use std::collections::HashMap;

use super::rules::Rule;
use super::{Class, RiskFinding, Severity};

/// Findings kept per rule and file.
pub const PER_RULE_AND_FILE: usize = 10;

/// Where a finding is: its file and line.
pub struct At<'f> {
    pub file: &'f str,
    pub line: Option<u32>,
}

/// What a finding says besides its rule and severity.
pub struct Said {
    pub excerpt: String,
    pub note: Option<String>,
    pub context: Option<&'static str>,
}

/// The findings so far.
#[derive(Default)]
pub struct Found {
    best: HashMap<(String, Class, Option<u32>), RiskFinding>,
    per_rule: HashMap<(String, &'static str), usize>,
}

impl Found {
    pub fn push(&mut self, rule: &'static Rule, at: At<'_>, severity: Severity, said: Said) {
        let (file, line) = (at.file, at.line);
        let Said {
            excerpt,
            note,
            context,
        } = said;
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
            context: context.map(str::to_string),
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

    /// Whether any finding so far is one `test` picks.
    pub fn any(&self, test: impl Fn(&RiskFinding) -> bool) -> bool {
        self.best.values().any(test)
    }

    /// Takes `other`'s findings (of text found inside one line of the
    /// file) as findings on `line`, keeping the most severe per class
    /// (of equals, the one from the earliest line of `other`: taken in a
    /// hash map's order, which one was kept changed from run to run).
    pub fn absorb(&mut self, other: Found, line: u32) {
        let mut found: Vec<_> = other.best.into_iter().collect();
        found.sort_by(|(a, _), (b, _)| a.cmp(b));
        for ((file, class, _), finding) in found {
            let key = (file, class, Some(line));
            match self.best.get(&key) {
                Some(old) if old.severity >= finding.severity => {}
                _ => {
                    self.best.insert(
                        key,
                        RiskFinding {
                            line: Some(line),
                            ..finding
                        },
                    );
                }
            }
        }
    }

    pub fn finish(self) -> Vec<RiskFinding> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absorbing_keeps_the_earliest_of_equals_every_time() {
        let rule = super::super::rules::rule("unscanned/gave-up").unwrap();
        for _ in 0..16 {
            let mut inner = Found::default();
            for line in [7, 3, 5, 1, 9, 2] {
                let said = Said {
                    excerpt: format!("line {line}"),
                    note: None,
                    context: None,
                };
                let at = At {
                    file: "s.sh",
                    line: Some(line),
                };
                inner.push(rule, at, rule.severity, said);
            }
            let mut outer = Found::default();
            outer.absorb(inner, 40);
            let found = outer.finish();
            assert_eq!(found.len(), 1);
            assert_eq!(
                (found[0].line, found[0].excerpt.as_str()),
                (Some(40), "line 1")
            );
        }
    }
}
