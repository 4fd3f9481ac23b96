//! The capabilities one stretch of code (or prose) shows, line by line,
//! and those that show only when two lines of one program are read
//! together (a socket and a shell; a fetch and an `exec`).

use super::detector::*;
use super::lines::{is_metadata, lookalike_of_forge, popular_from_elsewhere, typosquat, writes_to};
use super::{Capability, Evidence, Secret};
use crate::validate::risk::hosts;
use crate::validate::risk::signals::{OWN_SETTINGS, REAL_INDEXES};
use crate::validate::risk::text::excerpt;

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
    let mut sent_command_line = None;
    let mut talks = false;
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
        // A Unix socket stays on the machine.
        let sends = matched.iter().any(|i| matches!(d.signals[i], Signal::Send))
            && !line.contains("AF_UNIX");
        // (A search whose results the line sends away is no search.)
        let searched = f.matched(F_SEARCH_LINE)
            && !writes_a_file(line, style)
            && !line.contains("||")
            && !sends;
        // What `ssh host '...'` runs, runs on the host the user names.
        let remote = matches!(line.split_whitespace().next(), Some("ssh"));
        let data_only = style != Style::Config
            && (searched || (style == Style::Program && f.matched(F_DATA_LINE)));
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
        // A name built at run time under a fixed domain carries data to
        // whoever serves that domain's DNS (not a cluster's own names).
        let dns_carries = f.matched(F_DNS_BUILT_NAME)
            && d.dns_built_name.find_iter(line).any(|m| {
                let name = m
                    .as_str()
                    .trim_end_matches(['\'', '"', '`', ' ', '\t', '\r', '.']);
                !hosts::is_private_name(name)
            });
        if dns_carries {
            push(Capability::Send(true), targets);
        } else if sends {
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
        if (f.matched(F_UNVERIFIED_SOURCE) && !data_only)
            || (style == Style::Config && is_manifest(file) && popular_from_elsewhere(line))
        {
            push(Capability::UnverifiedSource, Vec::new());
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
        // An evaluator applied straight to a decoder's result
        // (`exec(b64decode(s))`, `eval unpack "u", ...`) runs what it decodes.
        let wrapped = evals && decodes && !data_only && wraps_decoder(&d, line);
        if wrapped {
            push(Capability::DecodeEval, Vec::new());
        }
        let identity_sent = sends && f.matched(F_IDENTITY);
        if (f.matched(F_COLLECTS) || identity_sent) && !data_only {
            push(Capability::Collect, Vec::new());
        }
        first(
            &mut eval_line,
            // (A line that also encodes, `import("data:..." + b64(code))`,
            // still evaluates.)
            evals
                && (!fetches || (!piped && style == Style::Program))
                && !(decodes && (style != Style::Program || wrapped)),
        );
        first(&mut decode_line, decodes && !evals);
        first(&mut socket_line, f.matched(F_SOCKET));
        first(&mut shell_line, f.matched(F_SHELL_ON_SOCKET));
        let runs_sent = f.matched(F_RUNS_SENT_COMMAND)
            && !data_only
            && d.runs_sent_command.captures_iter(line).any(|c| {
                c.get(1).is_some_and(|o| {
                    !OWN_SETTINGS.contains(&o.as_str().to_ascii_lowercase().as_str())
                })
            });
        first(&mut sent_command_line, runs_sent);
        // (A socket: a request, a Slack post, is no channel for commands.)
        talks |= f.matched(F_SOCKET);
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
    together(Capability::ReverseShell, &sent_command_line, talks);
}

/// Whether an evaluator's argument starts with a decoder's call: only
/// names, dots, brackets and spaces between them. Only a short window
/// after each of the line's first evaluators is searched, so a long line
/// of evaluators costs linear time.
fn wraps_decoder(d: &Detector, line: &str) -> bool {
    const BETWEEN: usize = 24;
    const WINDOW: usize = 160;
    // (A shell given a command line runs a decoder as a command: only
    // the evaluators given code count, see `COMMAND_LINE_RUNNERS`.)
    d.code_eval.find_iter(line).take(16).any(|m| {
        // `eval\s+[^{\s]` takes the first letter of what it runs: back to
        // it (only after a space, not the `c` of `sh -c`).
        let mut from = m.end();
        let mut tail = line[m.start()..m.end()].chars().rev();
        if let (Some(last), Some(' ' | '\t')) = (tail.next(), tail.next()) {
            if last.is_alphanumeric() {
                from -= last.len_utf8();
            }
        }
        let mut end = (from + WINDOW).min(line.len());
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        let rest = &line[from..end];
        d.decoder.find(rest).is_some_and(|dec| {
            let between = &rest[..dec.start()];
            between.len() <= BETWEEN
                && between
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '(' | ' ' | '\t' | ':'))
        })
    })
}

/// Whether a line redirects output into a file: `>` or `>>` to anything
/// but `/dev/null` or another descriptor (`2>&1`, `>&-`). In a program,
/// `->` and `=>` are operators, not redirections.
fn writes_a_file(line: &str, style: Style) -> bool {
    line.match_indices('>').any(|(at, _)| {
        let rest = line[at..].trim_start_matches(['>', ' ', '\t']);
        let operator = style == Style::Program && line[..at].ends_with(['=', '-']);
        let descriptor = rest
            .strip_prefix('&')
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit() || c == '-'));
        !(line[..at].ends_with('>') || operator || descriptor || rest.starts_with("/dev/null"))
    })
}

/// Whether `file` lists a project's dependencies.
fn is_manifest(file: &str) -> bool {
    let name = file.rsplit('/').next().unwrap_or(file);
    matches!(
        name,
        "package.json" | "composer.json" | "pyproject.toml" | "deno.json"
    )
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
