//! The findings of one build: every warning and skipped file, streamed to
//! `findings.ndjson` as they are found, counted per class, with the first few
//! of each class kept as examples for the manifest and the terminal.
//!
//! A real 61,452-skill collection has 103,238 warnings: listing them all in
//! the manifest made it 57 MB, held in memory until the end and read by the
//! Space on every sync check. Here memory and the manifest stay bounded by
//! the number of classes, whatever the corpus.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use serde_json::json;

use agentfinder_skills_reader::contract::{BuildWarning, SkippedFile, MANIFEST_EXAMPLES_PER_CLASS};

use crate::diagnostics::{Finding, WarningClass};
use crate::validate::StrictPolicy;

/// Longest message quoted in the manifest; the findings file has it whole.
const EXAMPLE_MESSAGE_CHARS: usize = 300;

/// Counts and examples of a build's findings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FindingsSummary {
    /// Warnings per class.
    pub warning_counts: BTreeMap<String, u64>,
    /// Skipped files per class.
    pub skipped_counts: BTreeMap<String, u64>,
    /// The first warnings of each class, in the order found.
    pub warnings: Vec<BuildWarning>,
    /// The first skipped files of each class, in the order found.
    pub skipped: Vec<SkippedFile>,
}

impl FindingsSummary {
    /// All warnings.
    pub fn warning_total(&self) -> u64 {
        self.warning_counts.values().sum()
    }

    /// All skipped files.
    pub fn skipped_total(&self) -> u64 {
        self.skipped_counts.values().sum()
    }

    /// `--strict`: what fails the build, or `None`.
    pub fn strict_failure(&self, policy: &StrictPolicy) -> Option<String> {
        let skips = if policy.skips {
            self.skipped_total()
        } else {
            0
        };
        let failing: u64 = self
            .warning_counts
            .iter()
            .filter(|(class, _)| WarningClass::parse(class).is_some_and(|c| policy.fails_on(c)))
            .map(|(_, count)| count)
            .sum();
        (skips + failing > 0).then(|| {
            format!("--strict: {skips} skipped file(s) and {failing} warning(s) of the named classes; nothing was written")
        })
    }
}

/// Streams findings to `out` (NDJSON), keeping counts and examples.
pub struct FindingsLog<W: Write> {
    out: W,
    summary: FindingsSummary,
}

impl<W: Write> FindingsLog<W> {
    /// A log writing to `out`.
    pub fn new(out: W) -> Self {
        Self {
            out,
            summary: FindingsSummary::default(),
        }
    }

    /// Records a warning about `path`.
    pub fn warn(&mut self, path: &str, finding: &Finding) -> std::io::Result<()> {
        self.out.write_all(finding_line(path, finding).as_bytes())?;
        self.count_warning(path, finding.line, finding.class.as_str(), &finding.message);
        Ok(())
    }

    /// Records a file left out.
    pub fn skip(&mut self, skipped: SkippedFile) -> std::io::Result<()> {
        self.out.write_all(skip_line(&skipped).as_bytes())?;
        self.count_skip(skipped);
        Ok(())
    }

    /// Records again the lines [`finding_line`] and [`skip_line`] made for
    /// one file (an earlier build's, or this one's), leaving out its
    /// `duplicate-name` warnings: those span files and are settled anew.
    pub fn replay_own(&mut self, lines: &str) -> std::io::Result<()> {
        for line in lines.lines() {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let text = |key: &str| value[key].as_str().unwrap_or_default().to_string();
            let class = text("class");
            if class == WarningClass::DuplicateName.as_str() {
                continue;
            }
            self.out.write_all(line.as_bytes())?;
            self.out.write_all(b"\n")?;
            if value["severity"] == "skipped" {
                self.count_skip(SkippedFile {
                    path: text("path"),
                    class,
                    reason: text("message"),
                });
            } else {
                let at = value["line"].as_u64().map(|l| l as usize);
                self.count_warning(&text("path"), at, &class, &text("message"));
            }
        }
        Ok(())
    }

    fn count_warning(&mut self, path: &str, line: Option<usize>, class: &str, message: &str) {
        if bump(&mut self.summary.warning_counts, class) <= MANIFEST_EXAMPLES_PER_CLASS as u64 {
            self.summary.warnings.push(BuildWarning {
                path: path.to_string(),
                line,
                class: class.to_string(),
                message: shorten(message),
            });
        }
    }

    fn count_skip(&mut self, skipped: SkippedFile) {
        if bump(&mut self.summary.skipped_counts, &skipped.class)
            <= MANIFEST_EXAMPLES_PER_CLASS as u64
        {
            self.summary.skipped.push(SkippedFile {
                reason: shorten(&skipped.reason),
                ..skipped
            });
        }
    }

    /// Closes the log: the summary and the sink.
    pub fn finish(self) -> (FindingsSummary, W) {
        (self.summary, self.out)
    }
}

impl<W: Write + Default> FindingsLog<W> {
    /// What was written since the last call.
    pub fn take_output(&mut self) -> W {
        std::mem::take(&mut self.out)
    }
}

/// The `findings.ndjson` line of a warning about `path`.
pub fn finding_line(path: &str, finding: &Finding) -> String {
    let line = json!({"severity": "warning", "path": path, "line": finding.line,
                      "class": finding.class.as_str(), "message": finding.message});
    format!("{line}\n")
}

/// The `findings.ndjson` line of a skipped file.
pub fn skip_line(skipped: &SkippedFile) -> String {
    let line = json!({"severity": "skipped", "path": skipped.path, "class": skipped.class,
                      "message": skipped.reason});
    format!("{line}\n")
}

/// The files whose skill name another file also uses, each with the one
/// its `duplicate-name` warning names: the first other file (in the given
/// order) that uses it. Memory holds two paths per name.
pub fn duplicate_names<'a>(
    named: impl Iterator<Item = (&'a str, &'a str)>,
) -> HashMap<String, String> {
    let mut first_two: HashMap<&str, (&str, Option<&str>)> = HashMap::new();
    let named: Vec<(&str, &str)> = named.collect();
    for &(path, name) in &named {
        first_two
            .entry(name)
            .and_modify(|uses| {
                uses.1.get_or_insert(path);
            })
            .or_insert((path, None));
    }
    named
        .into_iter()
        .filter_map(|(path, name)| {
            let (first, second) = first_two.get(name)?;
            let other = if *first == path { (*second)? } else { *first };
            Some((path.to_string(), other.to_string()))
        })
        .collect()
}

fn bump(counts: &mut BTreeMap<String, u64>, class: &str) -> u64 {
    let count = counts.entry(class.to_string()).or_insert(0);
    *count += 1;
    *count
}

fn shorten(message: &str) -> String {
    if message.chars().count() <= EXAMPLE_MESSAGE_CHARS {
        return message.to_string();
    }
    let mut short: String = message.chars().take(EXAMPLE_MESSAGE_CHARS).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(bytes: &[u8]) -> Vec<serde_json::Value> {
        std::str::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn every_finding_is_written_and_only_a_few_per_class_are_kept() {
        let mut log = FindingsLog::new(Vec::new());
        for i in 0..1000 {
            let long = "x".repeat(5000);
            log.warn(
                &format!("skills/s{i}/SKILL.md"),
                &Finding::at(WarningClass::FrontmatterRecovered, 2, long),
            )
            .unwrap();
        }
        log.skip(SkippedFile {
            path: "bad/SKILL.md".into(),
            class: "empty".into(),
            reason: "empty file".into(),
        })
        .unwrap();
        let (summary, out) = log.finish();
        let written = lines(&out);
        assert_eq!(written.len(), 1001);
        assert_eq!(written[0]["message"].as_str().unwrap().len(), 5000);
        assert_eq!(written[1000]["severity"], "skipped");
        assert_eq!(summary.warning_counts["frontmatter-recovered"], 1000);
        assert_eq!(summary.warnings.len(), MANIFEST_EXAMPLES_PER_CLASS);
        assert!(summary.warnings[0].message.chars().count() <= EXAMPLE_MESSAGE_CHARS + 1);
        assert_eq!(
            (summary.warning_total(), summary.skipped_total()),
            (1000, 1)
        );
        let strict = StrictPolicy::named(&["name-invalid".into()]).unwrap();
        assert!(summary
            .strict_failure(&strict)
            .unwrap()
            .contains("1 skipped"));
        let lenient = StrictPolicy::off();
        assert_eq!(summary.strict_failure(&lenient), None);
    }

    #[test]
    fn a_name_used_twice_warns_on_every_file_that_uses_it() {
        let named = [
            ("a/pdf/SKILL.md", "pdf"),
            ("b/pdf/SKILL.md", "pdf"),
            ("c/pdf/SKILL.md", "pdf"),
            ("d/docx/SKILL.md", "docx"),
        ];
        let duplicates = duplicate_names(named.into_iter());
        let mut warned: Vec<(&str, &str)> = duplicates
            .iter()
            .map(|(p, o)| (p.as_str(), o.as_str()))
            .collect();
        warned.sort();
        assert_eq!(
            warned,
            [
                ("a/pdf/SKILL.md", "b/pdf/SKILL.md"),
                ("b/pdf/SKILL.md", "a/pdf/SKILL.md"),
                ("c/pdf/SKILL.md", "a/pdf/SKILL.md")
            ]
        );
    }

    #[test]
    fn replayed_lines_are_written_and_counted_but_old_duplicate_warnings_are_not() {
        let mut first = FindingsLog::new(Vec::new());
        let finding = Finding::at(WarningClass::FrontmatterRecovered, 3, "fixed");
        first.warn("a/SKILL.md", &finding).unwrap();
        let duplicate = Finding::file(WarningClass::DuplicateName, "also b");
        first.warn("a/SKILL.md", &duplicate).unwrap();
        let lines = String::from_utf8(first.take_output()).unwrap();
        let mut again = FindingsLog::new(Vec::new());
        again.replay_own(&lines).unwrap();
        let replayed = String::from_utf8(again.take_output()).unwrap();
        assert_eq!(replayed, finding_line("a/SKILL.md", &finding));
        let (summary, _) = again.finish();
        assert_eq!(summary.warning_counts["frontmatter-recovered"], 1);
        assert!(!summary.warning_counts.contains_key("duplicate-name"));
        assert_eq!(summary.warnings[0].line, Some(3));
    }
}
