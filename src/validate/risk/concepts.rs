//! The kinds of thing the capability rules name: secret stores, places a
//! program persists, ways text steers an agent. The lists that recognise
//! them are in `signals`.

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
