//! The findings of one build: every warning and skipped file, streamed to
//! `findings.ndjson` as they are found, counted per class, with the first few
//! of each class kept as examples for the manifest and the terminal (the
//! lines themselves are written and read back by
//! [`finding_lines`](super::finding_lines)).
//!
//! A real 61,452-skill collection has 103,238 warnings: listing them all in
//! the manifest made it 57 MB, held in memory until the end and read by the
//! Space on every sync check. Here memory and the manifest stay bounded by
//! the number of classes, whatever the corpus.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use agentfinder_skills_reader::contract::{BuildWarning, SkippedFile, MANIFEST_EXAMPLES_PER_CLASS};

use super::diagnostics::{Finding, WarningClass};
use super::finding_lines::{class_of, finding_line, skip_line, OwnLine};
use super::StrictPolicy;

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

    /// Counts the lines [`finding_line`] and [`skip_line`] made for one
    /// file (an earlier build's, or this one's), writing nothing and leaving
    /// out its `duplicate-name` warnings: those span files and are settled
    /// anew (see [`own_lines`](super::finding_lines::own_lines)).
    pub fn count_own(&mut self, lines: &str) {
        for text in lines.lines() {
            // Its class first, then the rest only for a kept example: a
            // backfill counts every finding of every commit (17,000 per
            // commit in a real collection).
            let Some((class, skipped)) = class_of(text) else {
                continue;
            };
            if class == WarningClass::DuplicateName.as_str() {
                continue;
            }
            let counts = match skipped {
                true => &mut self.summary.skipped_counts,
                false => &mut self.summary.warning_counts,
            };
            if !is_example(bump(counts, &class)) {
                continue;
            }
            let Ok(line) = serde_json::from_str::<OwnLine<'_>>(text) else {
                continue;
            };
            if skipped {
                self.keep_skip(SkippedFile {
                    path: line.path.into_owned(),
                    class: line.class.into_owned(),
                    reason: line.message.into_owned(),
                });
            } else {
                self.keep_warning(&line.path, line.line, &line.class, &line.message);
            }
        }
    }

    /// Counts a warning about `path`, writing nothing.
    pub fn count(&mut self, path: &str, finding: &Finding) {
        self.count_warning(path, finding.line, finding.class.as_str(), &finding.message);
    }

    fn count_warning(&mut self, path: &str, line: Option<usize>, class: &str, message: &str) {
        if is_example(bump(&mut self.summary.warning_counts, class)) {
            self.keep_warning(path, line, class, message);
        }
    }

    fn count_skip(&mut self, skipped: SkippedFile) {
        if is_example(bump(&mut self.summary.skipped_counts, &skipped.class)) {
            self.keep_skip(skipped);
        }
    }

    /// Keeps a warning as an example (it is counted already).
    fn keep_warning(&mut self, path: &str, line: Option<usize>, class: &str, message: &str) {
        self.summary.warnings.push(BuildWarning {
            path: path.to_string(),
            line,
            class: class.to_string(),
            message: shorten(message),
        });
    }

    /// Keeps a skipped file as an example (it is counted already).
    fn keep_skip(&mut self, skipped: SkippedFile) {
        self.summary.skipped.push(SkippedFile {
            reason: shorten(&skipped.reason),
            ..skipped
        });
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

/// For each `(path, name)`, in order, the file its `duplicate-name`
/// warning names when another file uses its name: the first other file
/// (in the given order) that uses it; `None` for a unique or missing name.
/// Memory holds two paths per name.
pub fn duplicate_names<'a>(named: &[(&'a str, Option<&'a str>)]) -> Vec<Option<&'a str>> {
    // foldhash: every name of every commit of a backfill is hashed here,
    // and SipHash's resistance to chosen keys buys nothing for names.
    let mut first_two: HashMap<&str, (&str, Option<&str>), foldhash::fast::RandomState> =
        HashMap::with_capacity_and_hasher(named.len(), Default::default());
    for &(path, name) in named {
        let Some(name) = name else { continue };
        first_two
            .entry(name)
            .and_modify(|uses| {
                uses.1.get_or_insert(path);
            })
            .or_insert((path, None));
    }
    named
        .iter()
        .map(|&(path, name)| {
            let (first, second) = first_two.get(name?)?;
            if *first == path {
                *second
            } else {
                Some(*first)
            }
        })
        .collect()
}

/// Adds one to the count of `class` and returns it (the class is copied
/// only the first time: this runs for every finding of every commit).
fn bump(counts: &mut BTreeMap<String, u64>, class: &str) -> u64 {
    match counts.get_mut(class) {
        Some(count) => {
            *count += 1;
            *count
        }
        None => {
            counts.insert(class.to_string(), 1);
            1
        }
    }
}

/// Whether the `count`th finding of a class is kept as an example.
fn is_example(count: u64) -> bool {
    count <= MANIFEST_EXAMPLES_PER_CLASS as u64
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
    use crate::validate::finding_lines::own_lines;

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
    fn counting_keeps_the_first_examples_of_each_class_and_counts_the_rest() {
        let mut log = FindingsLog::new(Vec::new());
        let mut lines = String::new();
        for i in 0..(MANIFEST_EXAMPLES_PER_CLASS + 3) {
            let finding = Finding::at(WarningClass::FrontmatterRecovered, i + 1, "x");
            lines.push_str(&finding_line(&format!("s{i}/SKILL.md"), &finding));
        }
        log.count_own(&lines);
        let (summary, _) = log.finish();
        let total = (MANIFEST_EXAMPLES_PER_CLASS + 3) as u64;
        assert_eq!(summary.warning_counts["frontmatter-recovered"], total);
        assert_eq!(summary.warnings.len(), MANIFEST_EXAMPLES_PER_CLASS);
        assert_eq!(summary.warnings[1].path, "s1/SKILL.md");
        assert_eq!(summary.warnings[1].line, Some(2));
    }

    #[test]
    fn a_name_used_twice_warns_on_every_file_that_uses_it() {
        let named = [
            ("a/pdf/SKILL.md", "pdf"),
            ("b/pdf/SKILL.md", "pdf"),
            ("c/pdf/SKILL.md", "pdf"),
            ("d/docx/SKILL.md", "docx"),
        ];
        let named = named.map(|(path, name)| (path, Some(name)));
        let duplicates = duplicate_names(&named);
        let mut warned: Vec<(&str, &str)> = named
            .iter()
            .zip(&duplicates)
            .filter_map(|((path, _), other)| Some((*path, (*other)?)))
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
        again.count_own(&lines);
        let replayed = own_lines(&lines);
        assert_eq!(replayed, finding_line("a/SKILL.md", &finding));
        let (summary, _) = again.finish();
        assert_eq!(summary.warning_counts["frontmatter-recovered"], 1);
        assert!(!summary.warning_counts.contains_key("duplicate-name"));
        assert_eq!(summary.warnings[0].line, Some(3));
    }
}
