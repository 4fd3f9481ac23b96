//! Static risk rules: what a skill's files do that an agent should know
//! before it installs the skill and runs it with the user's files, shell
//! and credentials.
//!
//! Pure: the input is a skill's files (path relative to the skill folder,
//! bytes, executable bit) and the repository they come from; the output is
//! evidence ([`RiskFinding`]: class, severity, file, line, excerpt, why),
//! never a score. Files are read whole up to 8 MiB (a larger one is
//! reported `unscanned`); every pattern is a linear-time pass (finite
//! automata, see [`rules`]), and parsing is bounded in size, depth and
//! nesting.
//!
//! Code is read as code (`code`): scripts and Markdown code blocks are
//! parsed with tree-sitter's grammars and rendered in a normal form that
//! the pattern rules read again; `reading` walks a file's code units, the
//! strings they run and the payloads they decode; `capability` derives
//! what the skill can do from all of that, with file and line, and
//! combines it across the skill's files (its lists are data, one per
//! concept, in `signals`).
//!
//! The rules are data: [`rules::RULES`] is the table (each rule's class,
//! severity, what it matches and why); the modules beside it hold the
//! checks a pattern cannot express:
//!
//! | module | reads |
//! |---|---|
//! | `credentials` | a credential store read, and sent, in one script or code block |
//! | `download` | a file downloaded, then made executable or run |
//! | `decode` | base64, base85, hex and tag-character payloads, decoded and scanned again |
//! | `taint` | decoding split from running, followed through variables |
//! | `hidden` | invisible characters and HTML comments that address the agent |
//! | `hooks` | hook configs that run commands at session start or on agent events |
//! | `homoglyph` | Latin words and hosts written with lookalike letters |
//! | `padding` | a payload pushed out of sight by blank lines or spaces |
//! | `binary` | compiled code, native executables, encrypted archives |
//! | `mismatch` | a script shown in `SKILL.md` that differs from the file shipped |
//! | [`hosts`] | where a fetch goes: a known installer (the only discount), an IP, a drop site... |
//! | `code` | scripts and code blocks parsed, in normal form |
//! | `capability` | capabilities with evidence, and their combinations |
//!
//! `engine` runs the table over a skill, and `context` reads what
//! surrounds a hit for a label beside its severity (`documentation-like`),
//! never a lower one;
//! `text`, `markdown`, `unicode` and `mention` are what the rules
//! read text with, and `hit` what a check reports.

mod binary;
mod capability;
mod code;
mod concepts;
mod context;
mod credentials;
mod decode;
mod download;
mod engine;
mod found;
mod hidden;
mod hit;
mod homoglyph;
mod hooks;
pub mod hosts;
mod literals;
mod markdown;
mod mention;
mod mismatch;
mod packages;
mod padding;
mod reading;
pub mod rules;
mod shared;
mod signals;
mod steering;
mod taint;
mod text;
mod unicode;
mod words;

#[cfg(test)]
mod tests;

pub use agentfinder_skills_reader::contract::{Risk, RiskFinding, Severity};

/// Drops the compiled pattern sets and the caches every scanning thread
/// grew in them (hundreds of MB over a large collection). The next scan
/// compiles them again: call it when a build's scanning is done.
pub fn release_caches() {
    engine::COMPILED.release();
    capability::release();
}

/// One file a skill ships.
#[derive(Debug, Clone, Copy)]
pub struct SkillFile<'a> {
    /// Its path relative to the skill's folder (`SKILL.md`, `scripts/setup.sh`).
    pub path: &'a str,
    /// Its whole content.
    pub bytes: &'a [u8],
    /// Whether its mode is executable.
    pub executable: bool,
}

/// A shipped file read whole: its path relative to the skill's folder, its
/// bytes and whether it is executable.
pub type ShippedFile<'a> = (&'a str, Vec<u8>, bool);

/// A skill's files and the repository they come from.
#[derive(Debug, Clone, Copy)]
pub struct SkillFiles<'a> {
    /// `owner/name` of the repository (the owner decides which domains
    /// are the publisher's own, see [`hosts::INSTALLERS`]).
    pub repo: &'a str,
    /// Every file of the skill's folder.
    pub files: &'a [SkillFile<'a>],
}

/// What a rule is about; each finding names one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Credentials or keys read and sent to the network.
    CredentialExfiltration,
    /// A credential store read, with nothing in the same place sending it.
    CredentialAccess,
    /// A script fetched from the network and run unseen.
    DownloadExecute,
    /// An encoded payload decoded and run.
    DecodeExecute,
    /// Lookalike letters from another script in Latin words and hosts.
    Homoglyph,
    /// Text an agent reads and a person does not see: invisible
    /// characters, HTML comments addressed to the agent.
    HiddenText,
    /// Content pushed out of sight by blank lines or a run of spaces.
    Padding,
    /// Logic only in compiled or binary form.
    OpaqueCode,
    /// Hooks that run by themselves (at session start, on every prompt).
    SessionHook,
    /// A script shown in `SKILL.md` that differs from the file shipped.
    ScriptMismatch,
    /// Text telling the agent to approve everything, not to look, to hurry
    /// or to keep things from the user.
    AgentManipulation,
    /// A password-protected archive, or one unpacked with a password.
    EncryptedArchive,
    /// A URL whose host is a raw public IP address.
    RawIp,
    /// Data sent to a drop point (a webhook, a bot API, DNS, a socket).
    Exfiltration,
    /// An interactive shell handed to a socket.
    ReverseShell,
    /// Code that makes itself run again later (cron, launchd, shell
    /// startup files, `authorized_keys`, an agent's settings...).
    Persistence,
    /// Privileges raised (sudoers, setuid).
    Privilege,
    /// An agent's permission checks or sandbox switched off.
    SafetyOff,
    /// Packages from a look-alike index, or a typosquatted name.
    SupplyChain,
    /// The scan gave up on a file (too large, or a rule failed).
    Unscanned,
}

impl Class {
    /// Every class, in the order above.
    pub const ALL: [Class; 20] = [
        Class::CredentialExfiltration,
        Class::CredentialAccess,
        Class::DownloadExecute,
        Class::DecodeExecute,
        Class::Homoglyph,
        Class::HiddenText,
        Class::Padding,
        Class::OpaqueCode,
        Class::SessionHook,
        Class::ScriptMismatch,
        Class::AgentManipulation,
        Class::EncryptedArchive,
        Class::RawIp,
        Class::Exfiltration,
        Class::ReverseShell,
        Class::Persistence,
        Class::Privilege,
        Class::SafetyOff,
        Class::SupplyChain,
        Class::Unscanned,
    ];

    /// Its name in findings.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::CredentialExfiltration => "credential-exfiltration",
            Class::CredentialAccess => "credential-access",
            Class::DownloadExecute => "download-execute",
            Class::DecodeExecute => "decode-execute",
            Class::Homoglyph => "homoglyph",
            Class::HiddenText => "hidden-text",
            Class::Padding => "padding",
            Class::OpaqueCode => "opaque-code",
            Class::SessionHook => "session-hook",
            Class::ScriptMismatch => "script-mismatch",
            Class::AgentManipulation => "agent-manipulation",
            Class::EncryptedArchive => "encrypted-archive",
            Class::RawIp => "raw-ip",
            Class::Exfiltration => "exfiltration",
            Class::ReverseShell => "reverse-shell",
            Class::Persistence => "persistence",
            Class::Privilege => "privilege",
            Class::SafetyOff => "safety-off",
            Class::SupplyChain => "supply-chain",
            Class::Unscanned => "unscanned",
        }
    }
}

/// Every finding of the rules in `skill`'s files, most severe first (then
/// by file and line). At most one finding per class and line of a file
/// (the most severe), and a bounded number per rule and file.
///
/// A rule that fails (a panic) does not end the build: the skill gets one
/// `unscanned` finding saying the scan gave up, and the rest is built.
pub fn scan(skill: &SkillFiles<'_>) -> Vec<RiskFinding> {
    let scanned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| engine::scan(skill)));
    scanned.unwrap_or_else(|_| {
        let why =
            "the scan gave up on this skill: a rule failed on its files, so nothing was checked";
        vec![RiskFinding {
            class: Class::Unscanned.as_str().to_string(),
            severity: Severity::Medium,
            file: "SKILL.md".to_string(),
            line: None,
            excerpt: String::new(),
            why: why.to_string(),
            context: None,
        }]
    })
}

/// The findings over a skill folder's SKILL.md (`skill_md`: its bytes and
/// executable bit) and the other files it ships (`shipped`: path relative
/// to the folder, bytes, executable bit), from the repository `repo`.
pub fn scan_folder(
    repo: &str,
    skill_md: (&[u8], bool),
    shipped: &[ShippedFile<'_>],
) -> Vec<RiskFinding> {
    let mut files = vec![SkillFile {
        path: "SKILL.md",
        bytes: skill_md.0,
        executable: skill_md.1,
    }];
    files.extend(shipped.iter().map(|(path, bytes, executable)| SkillFile {
        path,
        bytes,
        executable: *executable,
    }));
    scan(&SkillFiles {
        repo,
        files: &files,
    })
}

/// The risk of `skill`: its findings and their highest severity.
pub fn risk(skill: &SkillFiles<'_>) -> Risk {
    Risk::of(scan(skill))
}
