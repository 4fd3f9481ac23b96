//! What a skill can do, read from its code in normal form (see `code`),
//! each capability with the file and line that shows it; then findings
//! from their combination across all the files of the skill, since one
//! script may read a secret and another send it.
//!
//! Pure. The lists are data in [`signals`]; the severities of the
//! combinations are [`combine`]'s, one rule each in the rule table.

mod combine;
mod detect;
pub mod signals;

pub use combine::findings;
pub use detect::{detect_code, detect_prose, Style};

use super::hosts::Target;

/// A kind of secret store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Secret {
    /// SSH private keys.
    SshKey,
    /// Cloud and cluster credentials.
    Cloud,
    /// Token files (`.netrc`, `.npmrc`, `.pypirc`, git credentials...).
    Tokens,
    /// A `.env` file.
    DotEnv,
    /// A browser's passwords, cookies or profile.
    Browser,
    /// A cryptocurrency wallet.
    Wallet,
    /// The system keychain.
    Keychain,
    /// A fake password prompt.
    PasswordPrompt,
    /// The whole environment.
    Environment,
    /// The clipboard.
    Clipboard,
    /// System secrets (`/etc/shadow`, shell history, cloud metadata).
    System,
}

impl Secret {
    /// What it is, for a finding's why.
    pub fn as_str(self) -> &'static str {
        match self {
            Secret::SshKey => "an SSH key",
            Secret::Cloud => "cloud credentials",
            Secret::Tokens => "a token file",
            Secret::DotEnv => "a .env file",
            Secret::Browser => "a browser's passwords or cookies",
            Secret::Wallet => "a wallet",
            Secret::Keychain => "the keychain",
            Secret::PasswordPrompt => "a password asked for in a fake dialog",
            Secret::Environment => "the whole environment",
            Secret::Clipboard => "the clipboard",
            Secret::System => "system secrets",
        }
    }

    /// Whether reading it alone, with nothing sending it, is already
    /// what no honest skill does.
    pub fn alarming_alone(self) -> bool {
        matches!(
            self,
            Secret::Browser | Secret::Wallet | Secret::PasswordPrompt | Secret::System
        )
    }
}

/// A place a program makes itself run again later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Persist {
    Cron,
    Launchd,
    Systemd,
    ShellStartup,
    AuthorizedKeys,
    SshConfig,
    GitHooks,
    AgentSettings,
    AgentInstructions,
}

impl Persist {
    /// What it is, for a finding's why.
    pub fn as_str(self) -> &'static str {
        match self {
            Persist::Cron => "a scheduled task (cron, schtasks)",
            Persist::Launchd => "a launchd agent",
            Persist::Systemd => "a systemd unit",
            Persist::ShellStartup => "a shell startup file",
            Persist::AuthorizedKeys => "SSH's authorized_keys",
            Persist::SshConfig => "SSH's config (a command run on connect)",
            Persist::GitHooks => "git hooks",
            Persist::AgentSettings => "an agent's settings or hooks",
            Persist::AgentInstructions => "an agent's instruction file",
        }
    }
}

/// A way text steers the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Steer {
    /// Data put in an image URL the agent's client loads.
    ImageExfiltration,
    /// Tags that dress an instruction as the system's (tool poisoning).
    ToolPoisoning,
    /// Fetch remote text and obey it.
    FetchAndObey,
    /// Do it silently, do not tell the user.
    Covert,
    /// Asks the agent to read or pass on a secret.
    SecretRequest,
    /// A forged end-of-data or system marker.
    ForgedMarker,
}

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
