//! The capabilities one stretch of code (or prose) shows, line by line,
//! and those that show only when two lines of one program are read
//! together (a socket and a shell; a fetch and an `exec`).

use std::sync::LazyLock;

use super::lines::{is_metadata, lookalike_of_forge, typosquat, writes_to};
use super::{Capability, Evidence, Secret};
use crate::validate::risk::hosts;
use crate::validate::risk::signals::{
    COLLECTS, DECODERS, DROP_ENDPOINTS, EVALUATORS, IDENTITY, INDEX_FLAGS, PERSIST, PRIVILEGE,
    PRIVILEGE_FILES, READS, REAL_INDEXES, REVERSE_SHELLS, SAFETY_OFF, SECRETS, SENDS,
    SHELL_DECODERS, SHELL_ON_SOCKET, SOCKETS, STEER,
};
use crate::validate::risk::text::excerpt;
use crate::validate::risk::words::{Options, WordRegex as Regex, WordSet};

/// What one pattern of the set stands for.
#[derive(Debug, Clone, Copy)]
enum Signal {
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
const F_SEARCH_LINE: usize = 0;
const F_DATA_LINE: usize = 1;
const F_DROP_POINTS: usize = 2;
const F_DATA_IN_LINE: usize = 3;
const F_REQUEST_WITH_DATA: usize = 4;
const F_INSTALL: usize = 5;
const F_PROGRAM_READ: usize = 6;
const F_CLIPBOARD_READ: usize = 7;
const F_CLIPBOARD_WRITE: usize = 8;
const F_WALLET_ADDRESS: usize = 9;
const F_FETCH_CALL: usize = 10;
const F_EVAL_CALL: usize = 11;
const F_DECODER: usize = 12;
const F_IDENTITY: usize = 13;
const F_COLLECTS: usize = 14;
const F_SOCKET: usize = 15;
const F_SHELL_ON_SOCKET: usize = 16;
const F_EXPLICIT_READ: usize = 17;
const F_INSPECT_ONLY: usize = 18;
const F_READS: usize = 19;
const F_PERSIST_COMMANDS: usize = 20;

/// The compiled lists.
pub struct Detector {
    /// Every per-line test below in one set: one pass over a line.
    flags: WordSet,
    set: WordSet,
    signals: Vec<Signal>,
    reads: Regex,
    persist_commands: Regex,
    drop_points: Regex,
    data_in_line: Regex,
    inspect_only: Regex,
    fetch_call: Regex,
    eval_call: Regex,
    decoder: Regex,
    socket: Regex,
    shell_on_socket: Regex,
    index: Regex,
    install: Regex,
    pub(super) public_key: Regex,
    program_read: Regex,
    clipboard_read: Regex,
    clipboard_write: Regex,
    wallet_address: Regex,
    lookalike_host: Regex,
    persist: Vec<(super::Persist, Regex)>,
    privilege_files: Regex,
    explicit_read: Regex,
    pub(super) imperative: Regex,
    pub(super) negated: Regex,
    data_line: Regex,
    search_line: Regex,
    collects: Regex,
    identity: Regex,
    request_with_data: Regex,
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
    dfa_size_limit: Some(64 << 20),
};

fn any_of(patterns: &[&str]) -> Regex {
    regex(&patterns.join("|"))
}

static DETECTOR: LazyLock<Detector> = LazyLock::new(|| {
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
        reads: regex(READS),
        persist_commands: regex(
            r"(?i:\bcrontab\b|\blaunchctl\b|\bsystemctl\b|\bschtasks\b|ScheduledTask|ProxyCommand|LocalCommand|\bgit\s+config\b|hooksPath|\bssh-copy-id\b)",
        ),
        drop_points: any_of(DROP_ENDPOINTS),
        data_in_line: regex(
            r#"\$\(|`|@["']?[~$/]|\bprocess\.env\b\s*[),}]|\bos\.environ\b(?:\s*[),}]|\.(?:items|copy)\(\))|\bbase64\b|\bwhoami\b|\bhostname\b|\bid\b\s*\)"#,
        ),
        inspect_only: regex(r"\|\s*(?:grep|sort|less|more|head|wc|cut|awk|sed|column)\b"),
        fetch_call: regex(
            r"(?i:require\s*\(\s*['\x22]https?['\x22]\s*\)\.get\s*\(|net\.webclient|\burlopen\s*\(|\brequests\.get\s*\(|\bhttpx\.get\s*\(|(?:^|[^.\w])fetch\s*\(|\baxios\.get\s*\(|\bhttps?\.get\s*\(|\b(?:c|client|\w*client|session|sess|resty|http)\.get\s*\(|downloadstring|invoke-webrequest|invoke-restmethod|\birm\b|\biwr\b|\burlretrieve\s*\(|\bcurl\b|\bwget\b)",
        ),
        eval_call: any_of(EVALUATORS),
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
        program_read: regex(
            r"\b(?:readFile\w*|read_text|read_bytes|createReadStream|ReadAll\w+|Get-Content|File\.read|open\s*\()",
        ),
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
        ],
        SETS,
    );
    detector
});

impl Detector {
    /// The compiled lists.
    pub fn get() -> &'static Detector {
        &DETECTOR
    }
}

/// The capabilities code shows. `lines` gives, for a byte offset of
/// `code`, the file's 1-based line; `file` names it.
pub fn detect_code(
    file: &str,
    code: &str,
    style: Style,
    line_of: &dyn Fn(usize) -> u32,
    out: &mut Vec<Evidence>,
) {
    let d = Detector::get();
    let mut offset = 0;
    let mut secret_named: Option<(usize, String, Secret)> = None;
    let (mut clip_read, mut clip_write, mut wallet_literal) = (None, false, false);
    let mut file_read = false;
    let mut fetch_line = None;
    let mut eval_line = None;
    let mut decode_line = None;
    let mut socket_line = None;
    let mut shell_line = None;
    for line in code.split('\n') {
        let at = offset;
        offset += line.len() + 1;
        if line.trim().is_empty() {
            continue;
        }
        let mut push = |capability: Capability, hosts: Vec<hosts::Target>| {
            out.push(Evidence {
                capability,
                file: file.to_string(),
                line: line_of(at),
                excerpt: excerpt(line, 0, |_| false),
                hosts,
            });
        };
        // A public key is no secret; a line that is only data (a list of
        // paths a scanner looks for) reads nothing.
        let keyless = if line.contains(".pub") {
            d.public_key.replace_all(line, "public-key")
        } else {
            std::borrow::Cow::Borrowed(line)
        };
        let matched = d.set.matches(&keyless);
        let f = d.flags.matches(line);
        // A search's pattern is data; so are a program's literal lists
        // and printed text (a scanner's list of paths); a config's lists
        // are its settings.
        let searched = f.matched(F_SEARCH_LINE) && !line.contains('>') && !line.contains("||");
        // What `ssh host '...'` runs, runs on the host the user names.
        let remote = matches!(line.split_whitespace().next(), Some("ssh"));
        let data_only = style != Style::Config
            && (searched || (style == Style::Program && f.matched(F_DATA_LINE)));
        // A Unix socket stays on the machine.
        let sends = matched.iter().any(|i| matches!(d.signals[i], Signal::Send))
            && !line.contains("AF_UNIX");
        for i in matched.iter() {
            match d.signals[i] {
                Signal::Secret(kind, names_read) => {
                    let read = match kind {
                        // Only a line that sends it, or reads the file
                        // itself (`find -name .env`, `cat .env`), counts;
                        // whether it then leaves is the combination's call.
                        Secret::DotEnv => {
                            !data_only
                                && (sends || f.matched(F_EXPLICIT_READ))
                                && !matches!(line.split_whitespace().next(), Some("scp" | "rsync"))
                        }
                        Secret::Environment => sends || !f.matched(F_INSPECT_ONLY),
                        _ => !data_only && (names_read || f.matched(F_READS)),
                    };
                    if !read && style == Style::Program && secret_named.is_none() {
                        secret_named = Some((at, line.to_string(), kind));
                    }
                    if read {
                        push(Capability::ReadSecret(kind), Vec::new());
                    }
                }
                Signal::Send => {}
                Signal::Persist(kind, strong) => {
                    let written = d
                        .persist
                        .iter()
                        .filter(|(k, _)| *k == kind)
                        .any(|(_, re)| re.find_iter(line).any(|m| writes_to(line, m.start())));
                    if !data_only && !remote && (written || f.matched(F_PERSIST_COMMANDS)) {
                        push(Capability::Persist(kind, strong), Vec::new());
                    }
                }
                Signal::PrivilegeFile => {
                    let written = d
                        .privilege_files
                        .find_iter(line)
                        .any(|m| writes_to(line, m.start()));
                    if !data_only && !remote && written {
                        push(Capability::Privilege, Vec::new());
                    }
                }
                Signal::Privilege if !data_only && !remote => {
                    push(Capability::Privilege, Vec::new())
                }
                Signal::Privilege => {}
                Signal::SafetyOff if !data_only => push(Capability::SafetyOff(true), Vec::new()),
                Signal::ReverseShell if !data_only => push(Capability::ReverseShell, Vec::new()),
                Signal::SafetyOff | Signal::ReverseShell => {}
                Signal::Steer(kind) => push(Capability::Steer(kind), Vec::new()),
            }
        }
        // A request to the cloud metadata service fetches from it; it
        // sends nothing away.
        let targets = hosts::targets(line);
        let sends = sends
            && !(line.contains("169.254.169.254") || line.contains("metadata.google.internal"))
            || (sends && targets.iter().any(|t| !is_metadata(&t.host)));
        if sends {
            let drop = f.matched(F_DROP_POINTS)
                || line.contains("/dev/tcp/")
                || line.contains("/dev/udp/")
                || matches!(
                    line.split_whitespace().next(),
                    Some("dig" | "nslookup" | "host" | "ping")
                );
            let carries = f.matched(F_DATA_IN_LINE);
            push(Capability::Send(drop && carries), targets);
        } else if f.matched(F_DROP_POINTS)
            && (f.matched(F_DATA_IN_LINE) || f.matched(F_REQUEST_WITH_DATA))
        {
            push(Capability::Send(true), hosts::targets(line));
        }
        if let Some(caps) = d.index.captures(line) {
            let host = caps.get(1).map_or("", |m| m.as_str()).to_ascii_lowercase();
            if !REAL_INDEXES.iter().any(|real| hosts::is_under(&host, real)) {
                push(Capability::LookalikeIndex, Vec::new());
            }
        }
        if (f.matched(F_INSTALL) || style == Style::Config) && typosquat(line).is_some() {
            push(Capability::Typosquat, Vec::new());
        }
        if (line.contains("://") || f.matched(F_INSTALL))
            && d.lookalike_host
                .captures_iter(line)
                .filter_map(|c| c.get(1))
                .any(|m| lookalike_of_forge(&m.as_str().to_ascii_lowercase()))
        {
            push(Capability::LookalikeIndex, Vec::new());
        }
        let first = |slot: &mut Option<(usize, String)>, hit: bool| {
            if hit && slot.is_none() {
                *slot = Some((at, line.to_string()));
            }
        };
        // What one line does alone, the pattern rules read with its host;
        // here only what two lines do together.
        file_read |= f.matched(F_PROGRAM_READ);
        if clip_read.is_none() && f.matched(F_CLIPBOARD_READ) {
            clip_read = Some((at, line.to_string()));
        }
        clip_write |= f.matched(F_CLIPBOARD_WRITE);
        wallet_literal |= f.matched(F_WALLET_ADDRESS);
        let fetches = f.matched(F_FETCH_CALL);
        let evals = f.matched(F_EVAL_CALL);
        let decodes = f.matched(F_DECODER);
        // In a program, a fetch evaluated on its own line
        // (`new Function(await (await fetch(u)).text())`) is one too; in
        // shell, that line is the pattern rules' (with the installer table).
        let piped = line.contains('|') || line.contains("$(") || line.contains('`');
        if fetches && evals && !piped && style == Style::Program {
            first(&mut fetch_line, true);
        }
        first(&mut fetch_line, fetches && !evals);
        let identity_sent = sends && f.matched(F_IDENTITY);
        if (f.matched(F_COLLECTS) || identity_sent) && !data_only {
            push(Capability::Collect, Vec::new());
        }
        first(
            &mut eval_line,
            evals && (!fetches || (!piped && style == Style::Program)) && !decodes,
        );
        first(&mut decode_line, decodes && !evals);
        first(&mut socket_line, f.matched(F_SOCKET));
        first(&mut shell_line, f.matched(F_SHELL_ON_SOCKET));
    }
    // In a program, a secret's path named on one line and a file read on
    // another (`paths = [join(home, '.ssh', 'id_rsa')]` ... `readFileSync(p)`).
    if let (Some((at, line, kind)), true) = (&secret_named, file_read) {
        out.push(Evidence {
            capability: Capability::ReadSecret(*kind),
            file: file.to_string(),
            line: line_of(*at),
            excerpt: excerpt(line, 0, |_| false),
            hosts: Vec::new(),
        });
    }
    if let (Some((at, line)), true, true) = (&clip_read, clip_write, wallet_literal) {
        out.push(Evidence {
            capability: Capability::ClipboardSwap,
            file: file.to_string(),
            line: line_of(*at),
            excerpt: excerpt(line, 0, |_| false),
            hosts: Vec::new(),
        });
    }
    if let (Some((at, line)), Some((_, fetched))) = (&eval_line, &fetch_line) {
        out.push(Evidence {
            capability: Capability::FetchEval,
            file: file.to_string(),
            line: line_of(*at),
            excerpt: excerpt(line, 0, |_| false),
            hosts: hosts::targets(fetched),
        });
    }
    let mut together = |capability: Capability, at: &Option<(usize, String)>, other: bool| {
        if let (Some((at, line)), true) = (at, other) {
            out.push(Evidence {
                capability,
                file: file.to_string(),
                line: line_of(*at),
                excerpt: excerpt(line, 0, |_| false),
                hosts: Vec::new(),
            });
        }
    };
    together(Capability::DecodeEval, &eval_line, decode_line.is_some());
    together(Capability::ReverseShell, &socket_line, shell_line.is_some());
}

/// How a stretch of code is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Shell: one command a line.
    Shell,
    /// A program (Python, JavaScript, PowerShell...): lines of one program
    /// are read together.
    Program,
    /// Configuration: every value is a setting.
    Config,
}
