//! Validate stage: the Agent Skills rules per skill, duplicate names across
//! skills, the contract per document, and the `--strict` policy.
//!
//! A rule broken by a skill is a warning, never a drop: the skill is still
//! indexed. Pure: it sees parsed skills and documents, never a disk.

use std::collections::HashSet;

use agentfinder_skills_reader::contract::{Document, DocumentRules};

use crate::diagnostics::{Finding, WarningClass};

/// Longest `name` the Agent Skills spec allows.
pub const MAX_NAME_CHARS: usize = 64;
/// Longest `description` the Agent Skills spec allows.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Checks `name` and `description` of a skill in folder `folder`.
pub fn check_skill(folder: &str, name: Option<&str>, description: Option<&str>) -> Vec<Finding> {
    let mut findings = Vec::new();
    match name {
        None => {}
        Some(name) => {
            if !is_valid_name(name) {
                findings.push(Finding::file(
                    WarningClass::NameInvalid,
                    format!("name `{name}` is not 1-{MAX_NAME_CHARS} lowercase letters, digits and single hyphens"),
                ));
            }
            if name != folder {
                findings.push(Finding::file(
                    WarningClass::NameMismatch,
                    format!("name `{name}` differs from the folder name `{folder}`"),
                ));
            }
        }
    }
    match description {
        None => findings.push(Finding::file(
            WarningClass::DescriptionMissing,
            "no description; agents will find this skill by its name and body only",
        )),
        Some(d) if d.chars().count() > MAX_DESCRIPTION_CHARS => findings.push(Finding::file(
            WarningClass::DescriptionTooLong,
            format!(
                "description is {} characters, over the {MAX_DESCRIPTION_CHARS} the spec allows",
                d.chars().count()
            ),
        )),
        Some(_) => {}
    }
    findings
}

/// The Agent Skills `name` rule: 1-64 of `[a-z0-9-]`, no leading, trailing
/// or doubled hyphen.
pub fn is_valid_name(name: &str) -> bool {
    (1..=MAX_NAME_CHARS).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// A document breaks the contract; the build stops, since this is a bug.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("document `{id}` from {path}: {problem}")]
pub struct DocumentError {
    /// The document's id.
    pub id: String,
    /// Its source file.
    pub path: String,
    /// What is wrong.
    pub problem: String,
}

/// The contract's per-document rules (they live in the reader crate, so
/// writer and readers cannot drift), with the error a build stops on.
#[derive(Debug, Default)]
pub struct DocumentChecker {
    rules: DocumentRules,
}

impl DocumentChecker {
    /// Checks one document: a valid id never seen before, and non-empty content.
    pub fn check(&mut self, doc: &Document) -> Result<(), DocumentError> {
        self.rules.check(doc).map_err(|violation| DocumentError {
            id: doc.id.clone(),
            path: doc.path.clone(),
            problem: violation.to_string(),
        })
    }
}

/// What `--strict` turns into a failed build.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StrictPolicy {
    /// Fail when any file is skipped.
    pub skips: bool,
    /// Fail on warnings of these classes.
    pub classes: HashSet<WarningClass>,
}

impl StrictPolicy {
    /// No strictness.
    pub fn off() -> Self {
        Self::default()
    }

    /// `--strict` without names: every skip and every warning.
    pub fn all() -> Self {
        Self {
            skips: true,
            classes: WarningClass::ALL.into_iter().collect(),
        }
    }

    /// `--strict=a,b`: every skip, and warnings of the named classes.
    pub fn named(names: &[String]) -> Result<Self, String> {
        let mut classes = HashSet::new();
        for name in names
            .iter()
            .flat_map(|n| n.split(','))
            .map(str::trim)
            .filter(|n| !n.is_empty())
        {
            if name == "all" {
                return Ok(Self::all());
            }
            let class = WarningClass::parse(name).ok_or_else(|| {
                let known: Vec<&str> = WarningClass::ALL.iter().map(|c| c.as_str()).collect();
                format!(
                    "unknown warning class `{name}` (known: all, {})",
                    known.join(", ")
                )
            })?;
            classes.insert(class);
        }
        Ok(Self {
            skips: true,
            classes,
        })
    }

    /// Whether a warning of `class` fails the build.
    pub fn fails_on(&self, class: WarningClass) -> bool {
        self.classes.contains(&class)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_rules() {
        for ok in ["pdf", "a1-b2", &"a".repeat(64)] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in [
            "",
            "PDF",
            "a_b",
            "-a",
            "a-",
            "a--b",
            "a b",
            &"a".repeat(65),
            "é",
        ] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn rule_violations_are_warnings() {
        let classes = |f: Vec<Finding>| f.into_iter().map(|f| f.class).collect::<Vec<_>>();
        assert!(check_skill("pdf", Some("pdf"), Some("Reads PDFs")).is_empty());
        assert_eq!(
            classes(check_skill("pdf", Some("PDF Tool"), None)),
            [
                WarningClass::NameInvalid,
                WarningClass::NameMismatch,
                WarningClass::DescriptionMissing
            ]
        );
        let long = "x".repeat(1025);
        assert_eq!(
            classes(check_skill("a", None, Some(&long))),
            [WarningClass::DescriptionTooLong]
        );
    }

    #[test]
    fn strict_policy_parses_names() {
        let p = StrictPolicy::named(&["name-invalid,duplicate-name".into()]).unwrap();
        assert!(
            p.skips
                && p.fails_on(WarningClass::NameInvalid)
                && !p.fails_on(WarningClass::NameMismatch)
        );
        assert!(StrictPolicy::named(&["bogus".into()])
            .unwrap_err()
            .contains("bogus"));
        assert!(StrictPolicy::all().fails_on(WarningClass::SymlinkAlias));
    }
}
