//! `lint`: what a build would say of the skills in one folder, before they
//! are published: the Agent Skills specification's rules and every other
//! finding, each with its file and line, for one skill folder or a whole
//! repository's working tree (uncommitted edits included).
//!
//! The walk, parse and validate stages, and the risk rules over every file
//! a skill ships, are the build's own, so `lint` and the build cannot
//! disagree; only reading the folder is done here.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use agentfinder_skills_serve::present::AgentText;

use crate::config::Config;
use crate::parse::parse_skill;
use crate::parse::read::read_shipped;
use crate::source::identity::{identify, IdentityInputs};
use crate::source::{enclosing_repository, list_folder, Entry, FileReader, ObjectRef, SourceError};
use crate::validate::diagnostics::Finding;
use crate::validate::risk::{scan_folder, RiskFinding, Severity};
use crate::validate::{check_skill, SPEC_CLASSES};
use crate::walk::supporting_files::{folder_files, folder_of, in_folder, shipped_entries};
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
    /// Nothing below the path is a skill.
    #[error("no SKILL.md below {path} ([walk].include: {include}): give a skill's folder (holding its SKILL.md) or a repository of skills")]
    NoSkills {
        /// The folder linted.
        path: String,
        /// The globs that name skill files.
        include: String,
    },
}

/// One finding of `lint`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LintFinding {
    /// The SKILL.md, relative to the folder linted (the author's text,
    /// cleaned as an agent receives it: `lint --json` is read by agents).
    pub path: AgentText,
    /// 1-based line, where one applies.
    pub line: Option<usize>,
    /// The warning class (or the skip reason's class).
    pub class: String,
    /// What was found (quoting the author's text, cleaned).
    pub message: AgentText,
    /// Whether it breaks the Agent Skills specification (a skipped file
    /// does: an agent cannot load it).
    pub spec: bool,
    /// How much it matters: a risk rule's severity; `info` for the
    /// specification's rules and the build's other warnings.
    pub severity: Severity,
    /// For a risk finding: the file's text it was found in, as written
    /// (cut short).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<AgentText>,
}

/// What `lint` found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LintReport {
    /// `owner/name` of the repository the skills were linted as, as a build
    /// of the clone names it (the risk rules weigh downloads by its owner).
    pub repo: String,
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
    /// Whether any finding breaks the specification, or is a risk at
    /// `high` or worse.
    pub fn fails(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.spec || f.severity >= Severity::High)
    }
}

/// Lints the skills below `root` (a skill's folder, a repository, or a
/// SKILL.md) with the walk and parse settings of `config`, as from the
/// repository a build of its clone would name (see [`lint_as`]).
pub fn lint(root: &Path, config: &Config) -> Result<LintReport, LintError> {
    lint_as(root, config, None)
}

/// [`lint`], with the repository named `repo` (`owner/name`) when given;
/// else, as a build of the clone holding `root` names it, from the clone's
/// `origin` remote (the risk rules tell the publisher's own domains from
/// strangers' by its owner), else `[source].repo` when `root` is in the
/// configured `[source].location`, else a local name.
pub fn lint_as(root: &Path, config: &Config, repo: Option<&str>) -> Result<LintReport, LintError> {
    let root = match root.file_name() {
        Some(name) if name == "SKILL.md" && root.is_file() => root.parent().unwrap_or(root),
        _ => root,
    };
    if !root.is_dir() {
        return Err(LintError::NotAFolder(root.display().to_string()));
    }
    let config = &named(root, config, repo);
    // A skill's own folder names the skill whose SKILL.md sits at its top.
    let own_name = std::fs::canonicalize(root)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let entries = list_folder(root)?;
    let rules = WalkRules::new(&config.walk.include, &config.walk.exclude_dirs)?;
    let options = config.parse_options();
    let mut report = LintReport {
        repo: config.repo().to_string(),
        ..LintReport::default()
    };
    let skills = skill_entries(&entries, &rules);
    let skill_paths: Vec<&str> = skills.iter().map(|e| e.path.as_str()).collect();
    let names = folder_files(
        &skill_paths,
        entries.iter().map(|e| e.path.as_str()),
        &rules,
    );
    let shipped = shipped_entries(&names, &entries);
    for entry in skills {
        report.skills += 1;
        let ObjectRef::File(file) = &entry.object else {
            continue;
        };
        let findings = match std::fs::read(file) {
            Err(e) => vec![LintFinding {
                path: AgentText::field(&entry.path),
                line: None,
                class: "unreadable".into(),
                message: AgentText::field(&e.to_string()),
                spec: true,
                severity: Severity::Info,
                excerpt: None,
            }],
            Ok(bytes) => match parse_skill(&bytes, &options) {
                Err(unusable) => vec![LintFinding {
                    path: AgentText::field(&entry.path),
                    line: None,
                    class: unusable.class().to_string(),
                    message: AgentText::field(&format!("skipped: {unusable}")),
                    spec: true,
                    severity: Severity::Info,
                    excerpt: None,
                }],
                Ok(parsed) => {
                    let folder = skill_folder(&entry.path, &own_name);
                    let checks = check_skill(folder, &parsed.fields, &parsed.field_lines);
                    let files = shipped.get(&entry.path).map_or(&[][..], Vec::as_slice);
                    let mut findings: Vec<LintFinding> = parsed
                        .findings
                        .iter()
                        .chain(&checks)
                        .map(|finding| lint_finding(&entry.path, finding))
                        .collect();
                    findings.extend(risk_findings(entry, &bytes, files, config));
                    findings
                }
            },
        };
        if !findings.iter().any(|f| f.spec) {
            report.conforming += 1;
        }
        report.findings.extend(findings);
    }
    if report.skills == 0 {
        return Err(LintError::NoSkills {
            path: root.display().to_string(),
            include: config.walk.include.join(", "),
        });
    }
    report
        .findings
        .sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    for finding in &report.findings {
        *report.counts.entry(finding.class.clone()).or_default() += 1;
    }
    Ok(report)
}

/// `config` with the identity of the repository `root` is in (see
/// [`lint_as`]): the same inputs a build of that source decides it from.
fn named(root: &Path, config: &Config, repo: Option<&str>) -> Config {
    let canonical = |path: &Path| std::fs::canonicalize(path).ok();
    let root = canonical(root).unwrap_or_else(|| root.to_path_buf());
    let mut source = config.source.clone();
    let configured = source
        .location
        .as_deref()
        .map(Path::new)
        .and_then(canonical);
    let (location, remote) = match configured {
        // In [source].location: as a build of it names it (a clone's root
        // by its origin and [source].repo; a plain folder by the latter).
        Some(configured) if root.starts_with(&configured) => {
            let remote = enclosing_repository(&configured)
                .filter(|(work_tree, _)| canonical(work_tree).as_ref() == Some(&configured))
                .and_then(|(_, remote)| remote);
            (configured, remote)
        }
        // Elsewhere: as a build of the clone holding it; [source].repo and
        // url describe another folder (as for `build --source`).
        _ => {
            (source.repo, source.url) = (None, None);
            match enclosing_repository(&root) {
                Some((work_tree, remote)) => (work_tree, remote),
                None => (root, None),
            }
        }
    };
    if let Some(repo) = repo {
        source.repo = Some(repo.to_string());
    }
    let location = location.display().to_string();
    let identity = identify(IdentityInputs {
        explicit_repo: source.repo.as_deref(),
        explicit_url: source.url.as_deref(),
        remote_url: remote.as_deref(),
        location: &location,
        naming_advice: &source.naming_advice(),
    });
    config.for_source(&identity, false)
}

fn lint_finding(path: &str, finding: &Finding) -> LintFinding {
    LintFinding {
        path: AgentText::field(path),
        line: finding.line,
        class: finding.class.as_str().to_string(),
        message: AgentText::field(&finding.message),
        spec: SPEC_CLASSES.contains(&finding.class),
        severity: Severity::Info,
        excerpt: None,
    }
}

/// The risk rules' findings over `skill` (its SKILL.md `bytes`) and the
/// files its folder ships (`shipped`), each read whole; a file that cannot
/// be read is a finding of its own.
fn risk_findings(
    skill: &Entry,
    bytes: &[u8],
    shipped: &[Entry],
    config: &Config,
) -> Vec<LintFinding> {
    let folder = folder_of(&skill.path);
    let (contents, unreadable) = read_shipped(&FileReader::Folder, &skill.path, shipped);
    let mut findings: Vec<LintFinding> = unreadable
        .into_iter()
        .map(|(relative, e)| LintFinding {
            path: AgentText::field(&in_folder(folder, relative)),
            line: None,
            class: "shipped-unreadable".into(),
            message: AgentText::field(&format!("could not be read for the risk rules: {e}")),
            spec: false,
            severity: Severity::Info,
            excerpt: None,
        })
        .collect();
    let scanned = scan_folder(config.repo(), (bytes, skill.executable), &contents);
    findings.extend(scanned.into_iter().map(|f| risk_finding(folder, f)));
    findings
}

fn risk_finding(folder: &str, finding: RiskFinding) -> LintFinding {
    LintFinding {
        path: AgentText::field(&in_folder(folder, &finding.file)),
        line: finding.line.map(|l| l as usize),
        class: finding.class,
        message: AgentText::field(&finding.why),
        spec: false,
        severity: finding.severity,
        excerpt: Some(AgentText::field(&finding.excerpt)),
    }
}
