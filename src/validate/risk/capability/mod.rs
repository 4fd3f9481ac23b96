//! What a skill can do, read from its code in normal form (see `code`),
//! each capability with the file and line that shows it; then findings
//! from their combination across all the files of the skill, since one
//! script may read a secret and another send it.
//!
//! Pure. The lists are data in `risk::signals`; the severities of the
//! combinations are [`combine`]'s, one rule each in the rule table.

mod combine;
mod detect;
mod detector;
mod lines;
mod prose;

pub use combine::findings;
pub use detect::{detect_code, Style};
pub use detector::release;
pub use prose::detect_prose;

pub use super::concepts::{Persist, Secret, Steer};
use super::hosts::Target;
// After every `use`: tests/layout.rs reads a file up to its first
// `#[cfg(test)]`.
#[cfg(test)]
pub use detector::Detector;

/// What a skill can do.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    /// Reads a secret store.
    ReadSecret(Secret),
    /// Sends data out of the machine (`true`: to a drop point that needs
    /// no server of the sender's: a webhook, a bot API, DNS, an image URL).
    Send(bool),
    /// Runs code it fetched (found by co-occurrence in one program).
    FetchEval,
    /// Decodes a payload and runs code, in one program.
    DecodeEval,
    /// Hands a shell to a socket.
    ReverseShell,
    /// Makes itself run again later (`true`: where nothing honest goes).
    Persist(Persist, bool),
    /// Raises its privileges.
    Privilege,
    /// Switches an agent's permission checks or sandbox off (`true`: in
    /// code, or told to in prose; `false`: a flag named in prose).
    SafetyOff(bool),
    /// Steers the agent.
    Steer(Steer),
    /// Replaces what the clipboard holds with a fixed wallet address.
    ClipboardSwap,
    /// Gathers the user's data in bulk (the workspace, its history, the
    /// screen, the machine's identity).
    Collect,
    /// Installs packages from an index that is not the real one.
    LookalikeIndex,
    /// Installs a package one letter away from a popular one.
    Typosquat,
    /// Makes a package manager accept what it cannot verify, or takes a
    /// popular package from somewhere other than its real index.
    UnverifiedSource,
}

/// One capability, where it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// What.
    pub capability: Capability,
    /// The file, relative to the skill's folder.
    pub file: String,
    /// 1-based line of the file.
    pub line: u32,
    /// The code as read (normal form), cut short.
    pub excerpt: String,
    /// Where a sending line sends to (empty when no host is written).
    pub hosts: Vec<Target>,
}
