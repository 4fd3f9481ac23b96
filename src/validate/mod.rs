//! Validate stage: the Agent Skills rules per skill, duplicate names across
//! skills, the contract per document, and the `--strict` policy.
//!
//! A rule broken by a skill is a warning, never a drop: the skill is still
//! indexed. Pure: it sees parsed skills and documents, never a disk.
//!
//! What every stage reports is in this stage's terms: the warning classes
//! and skip reasons ([`diagnostics`]), and a build's findings, streamed to
//! `findings.ndjson` and counted ([`findings`]).

pub mod diagnostics;
pub mod finding_lines;
pub mod findings;
pub mod risk;

use std::collections::{BTreeMap, HashSet};

use agentfinder_skills_reader::contract::{Document, DocumentRules};
use serde_json::{Map, Value};

use self::diagnostics::{Finding, WarningClass};

/// Longest `name` the Agent Skills spec allows.
pub const MAX_NAME_CHARS: usize = 64;
/// Longest `description` the Agent Skills spec allows.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Longest `compatibility` the Agent Skills spec allows.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;
/// The frontmatter fields the Agent Skills specification defines.
pub const SPEC_FIELDS: [&str; 6] = [
    "name",
    "description",
    "license",
    "allowed-tools",
    "metadata",
    "compatibility",
];

/// The warning classes that are the Agent Skills specification's rules
/// (`--strict=spec`, and what `lint` fails on): frontmatter that is not a
/// YAML mapping, and each field rule.
pub const SPEC_CLASSES: [WarningClass; 12] = [
    WarningClass::FrontmatterRecovered,
    WarningClass::FrontmatterNotMapping,
    WarningClass::FrontmatterMissing,
    WarningClass::FrontmatterUnclosed,
    WarningClass::NameMissing,
    WarningClass::NameInvalid,
    WarningClass::NameMismatch,
    WarningClass::DescriptionMissing,
    WarningClass::DescriptionTooLong,
    WarningClass::CompatibilityTooLong,
    WarningClass::MetadataInvalid,
    WarningClass::FieldUnknown,
];

/// Checks the frontmatter `fields` of a skill in folder `folder` against
/// the Agent Skills specification; `lines` gives each key's line. Each
/// broken rule is a warning (the specification's lenient loading: the
/// skill is still indexed).
pub fn check_skill(
    folder: &str,
    fields: &Map<String, Value>,
    lines: &BTreeMap<String, usize>,
) -> Vec<Finding> {
    let at = |key: &str, class: WarningClass, message: String| match lines.get(key) {
        Some(&line) => Finding::at(class, line, message),
        None => Finding::file(class, message),
    };
    let text = |key: &str| {
        fields
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let mut findings = Vec::new();
    match text("name") {
        None => findings.push(at(
            "name",
            WarningClass::NameMissing,
            format!("no name; the folder name `{folder}` stands in"),
        )),
        Some(name) => {
            if !is_valid_name(name) {
                findings.push(at(
                    "name",
                    WarningClass::NameInvalid,
                    format!("name `{name}` is not 1-{MAX_NAME_CHARS} lowercase letters, digits and single hyphens"),
                ));
            }
            if name != folder {
                findings.push(at(
                    "name",
                    WarningClass::NameMismatch,
                    format!("name `{name}` differs from the folder name `{folder}`"),
                ));
            }
        }
    }
    match text("description") {
        None => findings.push(at(
            "description",
            WarningClass::DescriptionMissing,
            "no description; agents will find this skill by its name and body only".into(),
        )),
        Some(d) if d.chars().count() > MAX_DESCRIPTION_CHARS => findings.push(at(
            "description",
            WarningClass::DescriptionTooLong,
            format!(
                "description is {} characters, over the {MAX_DESCRIPTION_CHARS} the spec allows",
                d.chars().count()
            ),
        )),
        Some(_) => {}
    }
    if let Some(compatibility) = fields.get("compatibility") {
        let length = compatibility.as_str().map_or_else(
            || compatibility.to_string().chars().count(),
            |c| c.chars().count(),
        );
        if length > MAX_COMPATIBILITY_CHARS {
            findings.push(at(
                "compatibility",
                WarningClass::CompatibilityTooLong,
                format!("compatibility is {length} characters, over the {MAX_COMPATIBILITY_CHARS} the spec allows"),
            ));
        }
    }
    if let Some(metadata) = fields.get("metadata") {
        let strings = metadata
            .as_object()
            .is_some_and(|map| map.values().all(Value::is_string));
        if !strings {
            findings.push(at(
                "metadata",
                WarningClass::MetadataInvalid,
                "metadata is not a map of strings to strings".into(),
            ));
        }
    }
    for key in fields.keys().filter(|k| !SPEC_FIELDS.contains(&k.as_str())) {
        findings.push(at(
            key,
            WarningClass::FieldUnknown,
            format!(
                "field `{key}` is not in the Agent Skills specification ({}); it is kept as metadata",
                SPEC_FIELDS.join(", ")
            ),
        ));
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
            if name == "spec" {
                classes.extend(SPEC_CLASSES);
                continue;
            }
            let class = WarningClass::parse(name).ok_or_else(|| {
                let known: Vec<&str> = WarningClass::ALL.iter().map(|c| c.as_str()).collect();
                format!(
                    "unknown warning class `{name}` (known: all, spec, {})",
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

    /// The findings of a SKILL.md's frontmatter in folder `folder`.
    fn check(folder: &str, frontmatter: &str) -> Vec<(WarningClass, Option<usize>)> {
        let text = format!("---\n{frontmatter}---\n# Body\n");
        let parsed = crate::parse::frontmatter::read(&text);
        let lines = crate::parse::frontmatter::field_lines(&text);
        check_skill(folder, &parsed.fields, &lines)
            .into_iter()
            .map(|f| (f.class, f.line))
            .collect()
    }

    #[test]
    fn each_specification_rule_is_a_warning_at_its_line() {
        use WarningClass::*;
        let ok = "name: pdf\ndescription: Reads PDFs\nlicense: MIT\nallowed-tools: Bash\nmetadata:\n  author: me\ncompatibility: linux\n";
        assert_eq!(check("pdf", ok), []);
        assert_eq!(
            check("pdf", "name: PDF Tool\n"),
            [
                (NameInvalid, Some(2)),
                (NameMismatch, Some(2)),
                (DescriptionMissing, None)
            ]
        );
        assert_eq!(check("pdf", "description: Reads\n"), [(NameMissing, None)]);
        assert_eq!(
            check("pdf", "name: pdf\ndescription: \"\"\n"),
            [(DescriptionMissing, Some(3))]
        );
        let long = format!(
            "name: pdf\ndescription: {}\ncompatibility: {}\n",
            "x".repeat(1025),
            "y".repeat(501)
        );
        assert_eq!(
            check("pdf", &long),
            [
                (DescriptionTooLong, Some(3)),
                (CompatibilityTooLong, Some(4))
            ]
        );
        assert_eq!(
            check(
                "pdf",
                "name: pdf\ndescription: d\nmetadata:\n  n: true\nversion: 2\n"
            ),
            [(MetadataInvalid, Some(4)), (FieldUnknown, Some(6))]
        );
        assert_eq!(
            check("pdf", "name: pdf\ndescription: d\nmetadata: [a]\n"),
            [(MetadataInvalid, Some(4))]
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
        let spec = StrictPolicy::named(&["spec".into()]).unwrap();
        assert!(
            spec.fails_on(WarningClass::FieldUnknown) && spec.fails_on(WarningClass::NameMismatch)
        );
        assert!(!spec.fails_on(WarningClass::DuplicateName));
    }
}
