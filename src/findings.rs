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

/// The first skill that used a name.
#[derive(Debug, Clone)]
struct FirstUse {
    path: String,
    name: String,
    warned: bool,
}

/// Streams findings to `out` (NDJSON), keeping counts and examples.
pub struct FindingsLog<W: Write> {
    out: W,
    summary: FindingsSummary,
    /// First path of each skill name (by hash), for `duplicate-name`.
    names: HashMap<u64, FirstUse>,
}

impl<W: Write> FindingsLog<W> {
    /// A log writing to `out`.
    pub fn new(out: W) -> Self {
        Self {
            out,
            summary: FindingsSummary::default(),
            names: HashMap::new(),
        }
    }

    /// Records a warning about `path`.
    pub fn warn(&mut self, path: &str, finding: &Finding) -> std::io::Result<()> {
        let class = finding.class.as_str();
        let line = json!({"severity": "warning", "path": path, "line": finding.line,
                          "class": class, "message": finding.message});
        self.write_line(&line)?;
        if bump(&mut self.summary.warning_counts, class) <= MANIFEST_EXAMPLES_PER_CLASS as u64 {
            self.summary.warnings.push(BuildWarning {
                path: path.to_string(),
                line: finding.line,
                class: class.to_string(),
                message: shorten(&finding.message),
            });
        }
        Ok(())
    }

    /// Records a file left out.
    pub fn skip(&mut self, skipped: SkippedFile) -> std::io::Result<()> {
        let line = json!({"severity": "skipped", "path": skipped.path, "class": skipped.class,
                          "message": skipped.reason});
        self.write_line(&line)?;
        if bump(&mut self.summary.skipped_counts, &skipped.class)
            <= MANIFEST_EXAMPLES_PER_CLASS as u64
        {
            self.summary.skipped.push(SkippedFile {
                reason: shorten(&skipped.reason),
                ..skipped
            });
        }
        Ok(())
    }

    /// Records that the skill at `path` is named `name`; a name met before
    /// is a `duplicate-name` warning on both files (on the first one once).
    pub fn name(&mut self, path: &str, name: &str) -> std::io::Result<()> {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        name.hash(&mut hasher);
        let key = hasher.finish();
        let Some(first) = self.names.get_mut(&key) else {
            let first = FirstUse {
                path: path.to_string(),
                name: name.to_string(),
                warned: false,
            };
            self.names.insert(key, first);
            return Ok(());
        };
        if first.name != name {
            return Ok(()); // a hash collision, not a duplicate
        }
        let warn_first = !std::mem::replace(&mut first.warned, true);
        let first_path = first.path.clone();
        let duplicate = |other: &str| {
            Finding::file(
                WarningClass::DuplicateName,
                format!("name `{name}` is also used by {other}; both are kept"),
            )
        };
        self.warn(path, &duplicate(&first_path))?;
        if warn_first {
            self.warn(&first_path, &duplicate(path))?;
        }
        Ok(())
    }

    /// Closes the log: the summary and the sink.
    pub fn finish(self) -> (FindingsSummary, W) {
        (self.summary, self.out)
    }

    fn write_line(&mut self, line: &serde_json::Value) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.out, line).map_err(std::io::Error::other)?;
        self.out.write_all(b"\n")
    }
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
        let mut log = FindingsLog::new(Vec::new());
        log.name("a/pdf/SKILL.md", "pdf").unwrap();
        log.name("b/pdf/SKILL.md", "pdf").unwrap();
        log.name("c/pdf/SKILL.md", "pdf").unwrap();
        log.name("d/docx/SKILL.md", "docx").unwrap();
        let (summary, out) = log.finish();
        let mut warned: Vec<String> = lines(&out)
            .iter()
            .map(|l| l["path"].as_str().unwrap().to_string())
            .collect();
        warned.sort();
        assert_eq!(
            warned,
            ["a/pdf/SKILL.md", "b/pdf/SKILL.md", "c/pdf/SKILL.md"]
        );
        assert_eq!(summary.warning_counts["duplicate-name"], 3);
    }
}
