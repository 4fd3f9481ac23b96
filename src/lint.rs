//! `lint`: what a build would say of the skills in one folder, before they
//! are published: the Agent Skills specification's rules and every other
//! finding, each with its file and line, for one skill folder or a whole
//! repository's working tree (uncommitted edits included).
//!
//! The walk, parse and validate stages are the build's own, so `lint` and
//! the build cannot disagree; only reading the folder is done here.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::config::Config;
use crate::parse::parse_skill;
use crate::source::{list_folder, ObjectRef, SourceError};
use crate::validate::diagnostics::Finding;
use crate::validate::{check_skill, SPEC_CLASSES};
use crate::walk::{skill_entries, skill_folder, GlobError, WalkRules};

/// Why a folder could not be linted.
#[derive(Debug, thiserror::Error)]
pub enum LintError {
    /// The path is not a folder (or a SKILL.md in one).
    #[error("{0} is not a folder of skills (give a skill's folder or a repository)")]
    NotAFolder(String),
    /// The folder could not be listed.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The configured walk globs are invalid.
    #[error(transparent)]
    Glob(#[from] GlobError),
}

/// One finding of `lint`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LintFinding {
    /// The SKILL.md, relative to the folder linted.
    pub path: String,
    /// 1-based line, where one applies.
    pub line: Option<usize>,
    /// The warning class (or the skip reason's class).
    pub class: String,
    /// What was found.
    pub message: String,
    /// Whether it breaks the Agent Skills specification (a skipped file
    /// does: an agent cannot load it).
    pub spec: bool,
}

/// What `lint` found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LintReport {
    /// SKILL.md files found.
    pub skills: usize,
    /// Skills with no specification finding.
    pub conforming: usize,
    /// Every finding, by path then line.
    pub findings: Vec<LintFinding>,
    /// Findings per class.
    pub counts: BTreeMap<String, usize>,
}

impl LintReport {
    /// Whether any finding breaks the specification.
    pub fn fails(&self) -> bool {
        self.findings.iter().any(|f| f.spec)
    }
}

/// Lints the skills below `root` (a skill's folder, a repository, or a
/// SKILL.md) with the walk and parse settings of `config`.
pub fn lint(root: &Path, config: &Config) -> Result<LintReport, LintError> {
    let root = match root.file_name() {
        Some(name) if name == "SKILL.md" && root.is_file() => root.parent().unwrap_or(root),
        _ => root,
    };
    if !root.is_dir() {
        return Err(LintError::NotAFolder(root.display().to_string()));
    }
    // A skill's own folder names the skill whose SKILL.md sits at its top.
    let own_name = std::fs::canonicalize(root)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let entries = list_folder(root)?;
    let rules = WalkRules::new(&config.walk.include, &config.walk.exclude_dirs)?;
    let options = config.parse_options();
    let mut report = LintReport::default();
    for entry in skill_entries(&entries, &rules) {
        report.skills += 1;
        let ObjectRef::File(file) = &entry.object else {
            continue;
        };
        let findings = match std::fs::read(file) {
            Err(e) => vec![LintFinding {
                path: entry.path.clone(),
                line: None,
                class: "unreadable".into(),
                message: e.to_string(),
                spec: true,
            }],
            Ok(bytes) => match parse_skill(&bytes, &options) {
                Err(unusable) => vec![LintFinding {
                    path: entry.path.clone(),
                    line: None,
                    class: unusable.class().to_string(),
                    message: format!("skipped: {unusable}"),
                    spec: true,
                }],
                Ok(parsed) => {
                    let folder = skill_folder(&entry.path, &own_name);
                    let checks = check_skill(folder, &parsed.fields, &parsed.field_lines);
                    parsed
                        .findings
                        .iter()
                        .chain(&checks)
                        .map(|finding| lint_finding(&entry.path, finding))
                        .collect()
                }
            },
        };
        if !findings.iter().any(|f| f.spec) {
            report.conforming += 1;
        }
        report.findings.extend(findings);
    }
    report
        .findings
        .sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    for finding in &report.findings {
        *report.counts.entry(finding.class.clone()).or_default() += 1;
    }
    Ok(report)
}

fn lint_finding(path: &str, finding: &Finding) -> LintFinding {
    LintFinding {
        path: path.to_string(),
        line: finding.line,
        class: finding.class.as_str().to_string(),
        message: finding.message.clone(),
        spec: SPEC_CLASSES.contains(&finding.class),
    }
}
