//! The capabilities one stretch of code (or prose) shows, line by line,
//! and those that show only when two lines of one program are read
//! together (a socket and a shell; a fetch and an `exec`).

use std::sync::LazyLock;

use regex::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};

use super::signals::{
    DECODERS, DROP_ENDPOINTS, EVALUATORS, INDEX_FLAGS, PERSIST, POPULAR_PACKAGES, PRIVILEGE, READS,
    REAL_INDEXES, REVERSE_SHELLS, SAFETY_OFF, SECRETS, SENDS, SHELL_DECODERS, SHELL_ON_SOCKET,
    SOCKETS, STEER, WRITES,
};
use super::{Capability, Evidence, Secret};
use crate::validate::risk::hosts;
use crate::validate::risk::text::excerpt;

/// What one pattern of the set stands for.
#[derive(Debug, Clone, Copy)]
enum Signal {
    Secret(Secret, bool),
    Send,
    Persist(super::Persist, bool),
    Privilege,
    SafetyOff,
    ReverseShell,
    Steer(super::Steer),
}

/// The compiled lists.
pub struct Detector {
    set: RegexSet,
    signals: Vec<Signal>,
    reads: Regex,
    writes: Regex,
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
    public_key: Regex,
    imperative: Regex,
    negated: Regex,
    data_line: Regex,
    steer: RegexSet,
    steer_kinds: Vec<super::Steer>,
    safety: RegexSet,
}

fn regex(pattern: &str) -> Regex {
    RegexBuilder::new(pattern)
        .multi_line(true)
        .size_limit(32 << 20)
        .build()
        .unwrap_or_else(|e| panic!("capability pattern {pattern}: {e}"))
}

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
    let set = RegexSetBuilder::new(&patterns)
        .multi_line(true)
        .size_limit(64 << 20)
        .dfa_size_limit(64 << 20)
        .build()
        .unwrap_or_else(|e| panic!("capability patterns: {e}"));
    let steer_kinds: Vec<super::Steer> = STEER.iter().map(|(k, _)| *k).collect();
    let steer = RegexSetBuilder::new(STEER.iter().map(|(_, p)| *p))
        .size_limit(32 << 20)
        .build()
        .unwrap_or_else(|e| panic!("steer patterns: {e}"));
    let safety = RegexSetBuilder::new(SAFETY_OFF)
        .size_limit(32 << 20)
        .build()
        .unwrap_or_else(|e| panic!("safety patterns: {e}"));
    Detector {
        set,
        signals,
        reads: regex(READS),
        writes: regex(WRITES),
        persist_commands: regex(
            r"(?i:\bcrontab\b|\blaunchctl\b|\bsystemctl\b|\bschtasks\b|ScheduledTask|ProxyCommand|LocalCommand|\bgit\s+config\b|hooksPath|\bssh-copy-id\b)",
        ),
        drop_points: any_of(DROP_ENDPOINTS),
        data_in_line: regex(
            r#"\$\(|`|@["']?[~$/]|\bprocess\.env\b|\bos\.environ\b|\$\{?[A-Z_]{2,}|\bbase64\b|\bwhoami\b|\bhostname\b|\bid\b\s*\)"#,
        ),
        inspect_only: regex(r"\|\s*(?:grep|sort|less|more|head|wc|cut|awk|sed|column)\b"),
        fetch_call: regex(
            r"(?i:\burlopen\s*\(|\brequests\.get\s*\(|\bhttpx\.get\s*\(|(?:^|[^.\w])fetch\s*\(|\baxios\.get\s*\(|\bhttps?\.get\s*\(|downloadstring|invoke-webrequest|invoke-restmethod|\birm\b|\biwr\b|\burlretrieve\s*\(|\bcurl\b|\bwget\b)",
        ),
        eval_call: any_of(EVALUATORS),
        decoder: regex(&[DECODERS, SHELL_DECODERS].concat().join("|")),
        socket: regex(SOCKETS),
        shell_on_socket: any_of(SHELL_ON_SOCKET),
        index: regex(INDEX_FLAGS),
        install: regex(
            r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b|\bnpm\s+(?:install|i|add)\b|\b(?:yarn|pnpm|bun)\s+add\b|\bpoetry\s+add\b|\buv\s+add\b",
        ),
        imperative: regex(
            r"(?i:\b(?:switch|enable|turn\s+on|set|use|run|start|launch|always|add|put)\b)",
        ),
        negated: regex(r"(?i:\b(?:never|don'?t|do\s+not|avoid|outside|unless|only\s+in)\b)"),
        public_key: regex(r"[\w./~$-]*\.pub\b"),
        data_line: regex(
            r#"^\s*(?:r?['"(\[{]|[A-Z_][A-Z0-9_]*\s*=\s*[\[({]|#|(?:\w+\s*=\s*)?(?:print|console\.(?:log|error|warn|info)|logger\.\w+|logging\.\w+|log\.\w+|Write-(?:Host|Output)|puts)\s*\(?(?:[^$`|>]|\$[A-Za-z_{])*$)"#,
        ),
        steer,
        steer_kinds,
        safety,
    }
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
    line_of: &dyn Fn(usize) -> u32,
    out: &mut Vec<Evidence>,
) {
    let d = Detector::get();
    let mut offset = 0;
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
        let keyless = d.public_key.replace_all(line, "public-key");
        let matched = d.set.matches(&keyless);
        let data_only = d.data_line.is_match(line);
        let sends = matched.iter().any(|i| matches!(d.signals[i], Signal::Send));
        for i in matched.iter() {
            match d.signals[i] {
                Signal::Secret(kind, names_read) => {
                    let read = match kind {
                        // An honest app loads its own `.env`: only one
                        // that goes to the network on that line counts.
                        Secret::DotEnv => {
                            sends
                                && !matches!(line.split_whitespace().next(), Some("scp" | "rsync"))
                        }
                        Secret::Environment => sends || !d.inspect_only.is_match(line),
                        _ => !data_only && (names_read || d.reads.is_match(line)),
                    };
                    if read {
                        push(Capability::ReadSecret(kind), Vec::new());
                    }
                }
                Signal::Send => {}
                Signal::Persist(kind, strong) => {
                    if d.writes.is_match(line) || d.persist_commands.is_match(line) {
                        push(Capability::Persist(kind, strong), Vec::new());
                    }
                }
                Signal::Privilege => push(Capability::Privilege, Vec::new()),
                Signal::SafetyOff => push(Capability::SafetyOff(true), Vec::new()),
                Signal::ReverseShell => push(Capability::ReverseShell, Vec::new()),
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
            let drop = d.drop_points.is_match(line)
                || line.contains("/dev/tcp/")
                || line.contains("/dev/udp/")
                || matches!(
                    line.split_whitespace().next(),
                    Some("dig" | "nslookup" | "host")
                );
            let carries = d.data_in_line.is_match(line);
            push(Capability::Send(drop && carries), targets);
        } else if d.drop_points.is_match(line)
            && (d.data_in_line.is_match(line) || line.contains('{'))
        {
            push(Capability::Send(true), hosts::targets(line));
        }
        if let Some(caps) = d.index.captures(line) {
            let host = caps.get(1).map_or("", |m| m.as_str()).to_ascii_lowercase();
            if !REAL_INDEXES.iter().any(|real| hosts::is_under(&host, real)) {
                push(Capability::LookalikeIndex, Vec::new());
            }
        }
        if d.install.is_match(line) && typosquat(line).is_some() {
            push(Capability::Typosquat, Vec::new());
        }
        let first = |slot: &mut Option<(usize, String)>, hit: bool| {
            if hit && slot.is_none() {
                *slot = Some((at, line.to_string()));
            }
        };
        // What one line does alone, the pattern rules read with its host;
        // here only what two lines do together.
        let fetches = d.fetch_call.is_match(line);
        let evals = d.eval_call.is_match(line);
        let decodes = d.decoder.is_match(line);
        first(&mut fetch_line, fetches && !evals);
        first(&mut eval_line, evals && !fetches && !decodes);
        first(&mut decode_line, decodes && !evals);
        first(&mut socket_line, d.socket.is_match(line));
        first(&mut shell_line, d.shell_on_socket.is_match(line));
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
    together(Capability::FetchEval, &eval_line, fetch_line.is_some());
    together(Capability::DecodeEval, &eval_line, decode_line.is_some());
    together(Capability::ReverseShell, &socket_line, shell_line.is_some());
}

/// What prose (a Markdown file's text, a string an agent reads) tells the
/// agent to do.
pub fn detect_prose(
    file: &str,
    prose: &str,
    line_of: &dyn Fn(usize) -> u32,
    out: &mut Vec<Evidence>,
) {
    let d = Detector::get();
    let mut offset = 0;
    for line in prose.split('\n') {
        let at = offset;
        offset += line.len() + 1;
        if line.trim().is_empty() {
            continue;
        }
        let mut push = |capability: Capability| {
            out.push(Evidence {
                capability,
                file: file.to_string(),
                line: line_of(at),
                excerpt: excerpt(line, 0, |_| false),
                hosts: Vec::new(),
            });
        };
        for i in d.steer.matches(line).iter() {
            push(Capability::Steer(d.steer_kinds[i]));
        }
        if d.safety.is_match(line) {
            let told = d.imperative.is_match(line) && !d.negated.is_match(line);
            push(Capability::SafetyOff(told));
        }
    }
}

/// Whether `host` is a cloud metadata service.
fn is_metadata(host: &str) -> bool {
    matches!(
        host,
        "169.254.169.254" | "metadata.google.internal" | "fd00:ec2::254"
    )
}

/// The package on an install line one edit away from a popular one.
fn typosquat(line: &str) -> Option<&str> {
    line.split_whitespace()
        .skip_while(|w| !matches!(*w, "install" | "add" | "i"))
        .skip(1)
        .map(|w| {
            w.trim_matches(|c| matches!(c, '"' | '\'' | ';' | ')'))
                .split(['=', '<', '>', '~', '[', '@'])
                .next()
                .unwrap_or("")
        })
        .filter(|w| !w.starts_with('-') && w.len() >= 4)
        .find(|w| {
            let w = w.to_ascii_lowercase();
            !POPULAR_PACKAGES.contains(&w.as_str())
                && POPULAR_PACKAGES.iter().any(|p| one_edit(&w, p))
        })
}

/// Whether `a` is one insertion, deletion, substitution or swap of two
/// neighbours away from `b`.
fn one_edit(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a == b || a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (ra, rb) = (&a[prefix..], &b[prefix..]);
    match ra.len().cmp(&rb.len()) {
        std::cmp::Ordering::Equal => {
            ra[1..] == rb[1..]
                || (ra.len() >= 2 && ra[0] == rb[1] && ra[1] == rb[0] && ra[2..] == rb[2..])
        }
        std::cmp::Ordering::Greater => ra[1..] == *rb,
        std::cmp::Ordering::Less => *ra == rb[1..],
    }
}

#[cfg(test)]
mod tests {
    use super::one_edit;

    #[test]
    fn one_edit_finds_misspellings_only() {
        assert!(one_edit("reqeusts", "requests"));
        assert!(one_edit("requets", "requests"));
        assert!(one_edit("colourama", "colorama"));
        assert!(!one_edit("requests", "requests"));
        assert!(!one_edit("flask", "django"));
    }
}
