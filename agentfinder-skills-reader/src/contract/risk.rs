//! The risk findings of a skill: evidence found by static rules in its
//! files, each with its class, severity, file, line, excerpt and why.

use serde::{Deserialize, Serialize};

/// How much a risk finding matters, lowest first; `none` is the level of
/// a skill with no finding (a finding is never `none`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// No finding.
    #[default]
    None,
    /// Worth knowing; no harm expected.
    Info,
    /// Unusual, harmless in most skills.
    Low,
    /// Does something an agent should look at before running it (an
    /// installer piped to a shell from its publisher's own domain).
    Medium,
    /// Looks like an attack or hides what it does.
    High,
    /// What known attacks do: credentials sent away, a payload fetched or
    /// decoded and run.
    Critical,
}

impl Severity {
    /// Every level, lowest first.
    pub const ALL: [Severity; 6] = [
        Severity::None,
        Severity::Info,
        Severity::Low,
        Severity::Medium,
        Severity::High,
        Severity::Critical,
    ];

    /// Its name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Info => "info",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Critical => "critical",
        }
    }

    /// The level named `text` (any case).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|level| level.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing a static rule found in a skill's files, with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RiskFinding {
    /// The rule's class (`credential-exfiltration`, `download-execute`, ...).
    pub class: String,
    /// How much it matters.
    pub severity: Severity,
    /// The file, relative to the skill's folder (`SKILL.md`, `scripts/setup.sh`).
    pub file: String,
    /// 1-based line of the file, where one applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// What was found, as written (cut short).
    pub excerpt: String,
    /// Why it matters.
    pub why: String,
    /// What surrounds it, when that reads as documentation
    /// (`documentation-like`): a label beside the severity, which the
    /// author's text never lowers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

/// The risk findings of a skill, and its level: the highest severity
/// among them (`none` without any). Evidence, not a score.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Risk {
    /// The highest severity found.
    pub level: Severity,
    /// What was found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<RiskFinding>,
}

impl Risk {
    /// The risk of `findings`: their highest severity, and them.
    pub fn of(findings: Vec<RiskFinding>) -> Self {
        Self {
            level: findings
                .iter()
                .map(|f| f.severity)
                .max()
                .unwrap_or_default(),
            findings,
        }
    }
}
