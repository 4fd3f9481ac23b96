//! The compiled lists the capability reader matches lines with: one set
//! of every list's patterns (one pass a line), and the per-line tests.

use crate::validate::risk::shared::Shared;

use super::Secret;
use crate::validate::risk::signals::{
    CHAT_TOKENS, CODE_READS, COLLECTS, COMMAND_LINE_RUNNERS, DECODERS, DNS_BUILT_NAME,
    DROP_ENDPOINTS, EVALUATORS, IDENTITY, INDEX_FLAGS, PERSIST, PRIVILEGE, PRIVILEGE_FILES, READS,
    REVERSE_SHELLS, RUNS_SENT_COMMAND, SAFETY_OFF, SECRETS, SENDS, SHELL_DECODERS, SHELL_ON_SOCKET,
    SOCKETS, STEER, UNVERIFIED_SOURCES,
};
use crate::validate::risk::words::{Options, WordRegex as Regex, WordSet};

/// What one pattern of the set stands for.
#[derive(Debug, Clone, Copy)]
pub(super) enum Signal {
    Secret(Secret, bool),
    Send,
    Persist(super::Persist, bool),
    Privilege,
    PrivilegeFile,
    SafetyOff,
    ReverseShell,
    Steer(super::Steer),
}

/// Indices of the per-line tests in `Detector::flags`.
pub(super) const F_SEARCH_LINE: usize = 0;
pub(super) const F_DATA_LINE: usize = 1;
pub(super) const F_DROP_POINTS: usize = 2;
pub(super) const F_DATA_IN_LINE: usize = 3;
pub(super) const F_REQUEST_WITH_DATA: usize = 4;
pub(super) const F_INSTALL: usize = 5;
pub(super) const F_PROGRAM_READ: usize = 6;
pub(super) const F_CLIPBOARD_READ: usize = 7;
pub(super) const F_CLIPBOARD_WRITE: usize = 8;
pub(super) const F_WALLET_ADDRESS: usize = 9;
pub(super) const F_FETCH_CALL: usize = 10;
pub(super) const F_EVAL_CALL: usize = 11;
pub(super) const F_DECODER: usize = 12;
pub(super) const F_IDENTITY: usize = 13;
pub(super) const F_COLLECTS: usize = 14;
pub(super) const F_SOCKET: usize = 15;
pub(super) const F_SHELL_ON_SOCKET: usize = 16;
pub(super) const F_EXPLICIT_READ: usize = 17;
pub(super) const F_INSPECT_ONLY: usize = 18;
pub(super) const F_READS: usize = 19;
pub(super) const F_PERSIST_COMMANDS: usize = 20;
pub(super) const F_DNS_BUILT_NAME: usize = 21;
pub(super) const F_RUNS_SENT_COMMAND: usize = 22;
pub(super) const F_UNVERIFIED_SOURCE: usize = 23;

/// The compiled lists.
pub struct Detector {
    /// Every per-line test below in one set: one pass over a line.
    pub(super) flags: WordSet,
    pub(super) set: WordSet,
    pub(super) signals: Vec<Signal>,
    pub(super) reads: Regex,
    pub(super) persist_commands: Regex,
    pub(super) dns_built_name: Regex,
    pub(super) runs_sent_command: Regex,
    /// A chat-template token written bare, not quoted as a value
    /// (`--eos_token '<|im_end|>'` is a tokenizer's argument).
    pub(super) forged_unquoted: Regex,
    pub(super) drop_points: Regex,
    pub(super) data_in_line: Regex,
    pub(super) inspect_only: Regex,
    pub(super) fetch_call: Regex,
    pub(super) eval_call: Regex,
    /// The evaluators given code, not a shell's command line.
    pub(super) code_eval: Regex,
    pub(super) decoder: Regex,
    pub(super) socket: Regex,
    pub(super) shell_on_socket: Regex,
    pub(super) index: Regex,
    pub(super) install: Regex,
    pub(super) public_key: Regex,
    pub(super) program_read: Regex,
    pub(super) clipboard_read: Regex,
    pub(super) clipboard_write: Regex,
    pub(super) wallet_address: Regex,
    pub(super) lookalike_host: Regex,
    pub(super) persist: Vec<(super::Persist, Regex)>,
    pub(super) privilege_files: Regex,
    pub(super) explicit_read: Regex,
    pub(super) imperative: Regex,
    pub(super) negated: Regex,
    pub(super) data_line: Regex,
    pub(super) search_line: Regex,
    pub(super) collects: Regex,
    pub(super) identity: Regex,
    pub(super) request_with_data: Regex,
    pub(super) any_safety: Regex,
    pub(super) steer: WordSet,
    pub(super) steer_kinds: Vec<super::Steer>,
}

fn regex(pattern: &str) -> Regex {
    let options = Options {
        multi_line: true,
        size_limit: 32 << 20,
        dfa_size_limit: None,
    };
    Regex::new(pattern, options)
}

/// How the sets are compiled.
const SETS: Options = Options {
    multi_line: true,
    size_limit: 64 << 20,
    dfa_size_limit: Some(crate::validate::risk::words::SET_CACHE_LIMIT),
};

fn any_of(patterns: &[&str]) -> Regex {
    regex(&patterns.join("|"))
}

static DETECTOR: Shared<Detector> = Shared::new(compile);

fn compile() -> Detector {
    let mut patterns: Vec<String> = Vec::new();
    let mut signals = Vec::new();
    for (kind, names_read, pattern) in SECRETS {
        patterns.push(pattern.to_string());
        signals.push(Signal::Secret(*kind, *names_read));
    }
    for pattern in SENDS {
        patterns.push(pattern.to_string());
        signals.push(Signal::Send);
    }
    for (kind, strong, pattern) in PERSIST {
        patterns.push(pattern.to_string());
        signals.push(Signal::Persist(*kind, *strong));
    }
    patterns.push(PRIVILEGE_FILES.to_string());
    signals.push(Signal::PrivilegeFile);
    for pattern in PRIVILEGE {
        patterns.push(pattern.to_string());
        signals.push(Signal::Privilege);
    }
    for pattern in SAFETY_OFF {
        patterns.push(pattern.to_string());
        signals.push(Signal::SafetyOff);
    }
    for pattern in REVERSE_SHELLS {
        patterns.push(pattern.to_string());
        signals.push(Signal::ReverseShell);
    }
    for (kind, pattern) in STEER {
        if matches!(kind, super::Steer::ImageExfiltration) {
            patterns.push(pattern.to_string());
            signals.push(Signal::Steer(*kind));
        }
    }
    let set = WordSet::new(&patterns, SETS);
    let steer_kinds: Vec<super::Steer> = STEER.iter().map(|(k, _)| *k).collect();
    let steer_options = Options {
        multi_line: false,
        size_limit: 32 << 20,
        dfa_size_limit: None,
    };
    let steer = WordSet::one_by_one(
        &STEER.iter().map(|(_, p)| *p).collect::<Vec<_>>(),
        steer_options,
    );
    let mut detector = Detector {
        flags: WordSet::new(&[""; 0], SETS),
        set,
        signals,
        reads: regex(&format!("{READS}|{CODE_READS}")),
        persist_commands: regex(
            r"(?i:\bcrontab\b|\blaunchctl\b|\bsystemctl\b|\bschtasks\b|ScheduledTask|ProxyCommand|LocalCommand|\bgit\s+config\b|hooksPath|\bssh-copy-id\b)",
        ),
        dns_built_name: regex(DNS_BUILT_NAME),
        runs_sent_command: regex(RUNS_SENT_COMMAND),
        forged_unquoted: regex(&format!(r#"(?:^|[^'"]){CHAT_TOKENS}(?:[^'"]|$)"#)),
        drop_points: any_of(DROP_ENDPOINTS),
        // (`https://h/x?{q}`: a query string carrying a program's value.)
        data_in_line: regex(
            r#"https?://[^\s'"`]*\?[^\s'"`]*(?:\{[A-Za-z_]|\$\{|#\{|%s|['"`]\s*\+)|\$\(|`|@["']?[~$/]|\bprocess\.env\b\s*[),}]|\bos\.environ\b(?:\s*[),}]|\.(?:items|copy)\(\))|\bbase64\b|\bwhoami\b|\bhostname\b|\bid\b\s*\)"#,
        ),
        inspect_only: regex(r"\|\s*(?:grep|sort|less|more|head|wc|cut|awk|sed|column)\b"),
        fetch_call: regex(
            r"(?i:require\s*\(\s*['\x22]https?['\x22]\s*\)\.get\s*\(|net\.webclient|\burlopen\s*\(|\brequests\.get\s*\(|\bhttpx\.get\s*\(|(?:^|[^.\w])fetch\s*\(|\baxios\.get\s*\(|\bhttps?\.get\s*\(|\b(?:c|client|\w*client|session|sess|resty|http)\.get\s*\(|downloadstring|invoke-webrequest|invoke-restmethod|\birm\b|\biwr\b|\burlretrieve\s*\(|\bcurl\b|\bwget\b)",
        ),
        eval_call: any_of(&[EVALUATORS, COMMAND_LINE_RUNNERS].concat()),
        code_eval: any_of(EVALUATORS),
        decoder: regex(&[DECODERS, SHELL_DECODERS].concat().join("|")),
        socket: regex(SOCKETS),
        shell_on_socket: any_of(SHELL_ON_SOCKET),
        index: regex(INDEX_FLAGS),
        install: regex(
            r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b|\bnpm\s+(?:install|i|add)\b|\b(?:yarn|pnpm|bun)\s+add\b|\bpoetry\s+add\b|\buv\s+add\b|\bnpx\s|\buvx\s|\bpipx\s+(?:install|run)\b|\bgo\s+(?:install|get)\b",
        ),
        imperative: regex(
            r"(?i:\b(?:switch|enable|turn\s+on|set|use|run|start|launch|always|add|put)\b)",
        ),
        negated: regex(r"(?i:\b(?:never|don'?t|do\s+not|avoid|outside|unless|only\s+in)\b)"),
        persist: PERSIST.iter().map(|(k, _, p)| (*k, regex(p))).collect(),
        privilege_files: regex(PRIVILEGE_FILES),
        explicit_read: regex(
            r"\b(?:cat|cp|tar|zip|7z|find|xargs|open|readFile\w*|Get-Content|gc|read_text|read_bytes|rsync|base64)\b",
        ),
        clipboard_read: regex(
            r"\bpbpaste\b|\bxclip\b[^\n]*-o\b|\bxsel\b[^\n]*(?:-o\b|--output)|\bwl-paste\b|(?i:Get-Clipboard)|pyperclip\.paste|clipboard\.readText|clipboardy\.read|Clipboard\.GetText",
        ),
        clipboard_write: regex(
            r"\bpbcopy\b|\bxclip\b[^\n]*-(?:i|selection)\b|\bwl-copy\b|(?i:Set-Clipboard)|pyperclip\.copy|clipboard\.writeText|clipboardy\.write|Clipboard\.SetText",
        ),
        wallet_address: regex(
            r"\b(?:bc1[ac-hj-np-z02-9]{25,62}|[13][a-km-zA-HJ-NP-Z1-9]{25,34}|0x[a-fA-F0-9]{40}|T[1-9A-HJ-NP-Za-km-z]{33})\b",
        ),
        program_read: regex(CODE_READS),
        lookalike_host: regex(r"(?i)\b(?:[a-z0-9-]+\.)*([a-z0-9-]+\.(?:com|org|io|dev|net))\b"),
        public_key: regex(r"[\w./~$-]*\.pub\b"),
        search_line: regex(
            r"\bre\.(?:compile|search|match|findall|finditer|sub)\s*\(|\bRegExp\s*\(|\b(?:grep|egrep|rg|findstr)\b|(?i:select-string)",
        ),
        data_line: regex(
            r#"^\s*(?:r?['"(\[{]|[A-Z_][A-Z0-9_]*\s*=\s*[\[({]|#|(?:\w+\s*=\s*)?(?:print|console\.(?:log|error|warn|info)|logger\.\w+|logging\.\w+|log\.\w+|Write-(?:Host|Output)|puts)\s*\(?(?:[^$`|>]|\$[A-Za-z_{])*$)"#,
        ),
        collects: any_of(COLLECTS),
        identity: regex(IDENTITY),
        request_with_data: regex(r"\b(?:params|data|json|body)\s*[=:]|\s-d\s|--data|[?&]text="),
        any_safety: any_of(SAFETY_OFF),
        steer,
        steer_kinds,
    };
    detector.flags = WordSet::new(
        &[
            detector.search_line.as_str(),
            detector.data_line.as_str(),
            detector.drop_points.as_str(),
            detector.data_in_line.as_str(),
            detector.request_with_data.as_str(),
            detector.install.as_str(),
            detector.program_read.as_str(),
            detector.clipboard_read.as_str(),
            detector.clipboard_write.as_str(),
            detector.wallet_address.as_str(),
            detector.fetch_call.as_str(),
            detector.eval_call.as_str(),
            detector.decoder.as_str(),
            detector.identity.as_str(),
            detector.collects.as_str(),
            detector.socket.as_str(),
            detector.shell_on_socket.as_str(),
            detector.explicit_read.as_str(),
            detector.inspect_only.as_str(),
            detector.reads.as_str(),
            detector.persist_commands.as_str(),
            detector.dns_built_name.as_str(),
            detector.runs_sent_command.as_str(),
            UNVERIFIED_SOURCES,
        ],
        SETS,
    );
    detector
}

/// Drops the compiled lists and their caches (see `risk::shared`).
pub fn release() {
    DETECTOR.release();
}

impl Detector {
    /// The compiled lists.
    pub fn get() -> std::sync::Arc<Detector> {
        DETECTOR.get()
    }

    /// The sets matched with a literal prefilter (their answers are
    /// checked against one plain set's in the risk tests).
    #[cfg(test)]
    pub fn sets(&self) -> [&WordSet; 2] {
        [&self.set, &self.flags]
    }
}
