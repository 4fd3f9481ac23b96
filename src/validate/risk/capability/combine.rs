//! Findings from what a whole skill can do: the severity of a capability
//! depends on the others the skill has, in any of its files (a secret
//! read in one script and data sent in another is one theft). Each
//! finding names a rule of the table (a `Combined` one), which carries
//! its class and why; the severity is decided here, by these rules:
//!
//! | capabilities | severity |
//! |---|---|
//! | a secret read, and data sent anywhere (loopback too) | critical |
//! | a shell handed to a socket | critical |
//! | a browser store, wallet, fake password prompt or system secret read | high |
//! | data sent to a drop point (webhook, bot API, DNS, `/dev/tcp`) with data built in | high |
//! | fetched code evaluated; decoded code evaluated | high |
//! | persistence where nothing honest goes (`authorized_keys`, SSH config, an agent's settings or instructions) | high |
//! | other persistence: with a network or run capability, or a URL in it | high, else medium |
//! | privileges raised; an agent's safety switched off | high |
//! | an image URL carrying data, fetch-and-obey, a secret asked for, a forged marker | high |
//! | tool-poisoning tags or "do it silently": with a secret or a send | high, else medium |
//! | a look-alike package index, a typosquatted package | high |
//! | a package manager told to accept unverified packages; a popular package taken from elsewhere | high |

use super::{Capability, Evidence, Secret, Steer};
use crate::validate::risk::rules;
use crate::validate::risk::Severity;

/// One finding to report: its rule, where, how severe, and a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Derived {
    pub rule: &'static str,
    pub file: String,
    pub line: u32,
    pub severity: Severity,
    pub excerpt: String,
    pub note: Option<String>,
}

/// The findings of a skill's capabilities. `runs_fetched` says whether
/// other rules found code fetched and run (it raises persistence).
pub fn findings(evidence: &[Evidence], runs_fetched: bool) -> Vec<Derived> {
    let has = |f: &dyn Fn(&Capability) -> bool| evidence.iter().any(|e| f(&e.capability));
    let secret = evidence.iter().find(|e| match e.capability {
        Capability::ReadSecret(Secret::DotEnv) => dotenv_sent(evidence, e),
        Capability::ReadSecret(_) => true,
        _ => false,
    });
    let send = evidence
        .iter()
        .find(|e| matches!(e.capability, Capability::Send(_)));
    let network_or_run = runs_fetched
        || has(&|c| {
            matches!(
                c,
                Capability::Send(_)
                    | Capability::FetchEval
                    | Capability::DecodeEval
                    | Capability::ReverseShell
            )
        });
    let to_its_service = to_its_service(evidence);
    let mut out = Vec::new();
    let mut add = |rule: &'static str, e: &Evidence, severity: Severity, note: Option<String>| {
        out.push(Derived {
            rule,
            file: e.file.clone(),
            line: e.line,
            severity,
            excerpt: e.excerpt.clone(),
            note,
        });
    };
    for e in evidence {
        match &e.capability {
            Capability::ReadSecret(_) if send.is_some() && to_its_service => add(
                "credential-exfiltration/to-its-service",
                e,
                Severity::Medium,
                None,
            ),
            Capability::ReadSecret(Secret::DotEnv) if !dotenv_sent(evidence, e) => add(
                "credential-access/read",
                e,
                Severity::Low,
                Some("reads a .env file".to_string()),
            ),
            Capability::ReadSecret(kind) => match send {
                Some(s) => add(
                    "credential-exfiltration/secret-sent",
                    e,
                    Severity::Critical,
                    Some(format!(
                        "reads {}; sends data at {}:{}",
                        kind.as_str(),
                        s.file,
                        s.line
                    )),
                ),
                None if kind.alarming_alone() => add(
                    "credential-access/secret-store",
                    e,
                    Severity::High,
                    Some(format!("reads {}", kind.as_str())),
                ),
                None => add(
                    "credential-access/read",
                    e,
                    Severity::Low,
                    Some(format!("reads {}", kind.as_str())),
                ),
            },
            Capability::Send(_) if secret.is_some() && to_its_service => {}
            Capability::Send(carries) => {
                if let Some(r) = secret {
                    let what = match r.capability {
                        Capability::ReadSecret(kind) => kind.as_str(),
                        _ => "a secret",
                    };
                    add(
                        "credential-exfiltration/secret-sent",
                        e,
                        Severity::Critical,
                        Some(format!("sends data; reads {what} at {}:{}", r.file, r.line)),
                    );
                } else if *carries {
                    add("exfiltration/drop-point", e, Severity::High, None);
                }
            }
            Capability::FetchEval => {
                // Only the installer table lowers running what was fetched.
                let worst = e.hosts.iter().map(|t| t.kind).min();
                let severity =
                    worst.map_or(Severity::High, |kind| rules::by_host(rules::FETCHED, kind));
                add("download-execute/fetch-eval", e, severity, None)
            }
            Capability::ClipboardSwap => {
                add("credential-access/clipboard-swap", e, Severity::High, None)
            }
            Capability::Collect => {
                if let Some(s) = sends_away(evidence) {
                    add(
                        "exfiltration/collected",
                        e,
                        Severity::High,
                        Some(format!(
                            "gathers the user's data; sends at {}:{}",
                            s.file, s.line
                        )),
                    );
                }
            }
            Capability::DecodeEval => add("decode-execute/decode-eval", e, Severity::High, None),
            Capability::ReverseShell => {
                add("reverse-shell/socket-shell", e, Severity::Critical, None)
            }
            Capability::Persist(kind, strong) => {
                let raised = *strong || network_or_run || e.excerpt.contains("://");
                let severity = if raised {
                    Severity::High
                } else {
                    Severity::Medium
                };
                add(
                    "persistence/writes",
                    e,
                    severity,
                    Some(format!("writes {}", kind.as_str())),
                );
            }
            Capability::Privilege => add("privilege/raise", e, Severity::High, None),
            Capability::SafetyOff(told) => add(
                "safety-off/agent",
                e,
                if *told {
                    Severity::High
                } else {
                    Severity::Medium
                },
                None,
            ),
            Capability::Steer(kind) => {
                let (rule, severity) = match kind {
                    Steer::ImageExfiltration => {
                        ("agent-manipulation/image-exfiltration", Severity::High)
                    }
                    Steer::FetchAndObey => ("agent-manipulation/fetch-and-obey", Severity::High),
                    Steer::SecretRequest => ("agent-manipulation/secret-request", Severity::High),
                    Steer::ForgedMarker => ("agent-manipulation/forged-marker", Severity::High),
                    Steer::ToolPoisoning | Steer::Covert => {
                        let with = secret.is_some()
                            || has(&|c| {
                                matches!(
                                    c,
                                    Capability::Steer(Steer::SecretRequest)
                                        | Capability::Steer(Steer::FetchAndObey)
                                )
                            });
                        let rule = if *kind == Steer::Covert {
                            "agent-manipulation/covert"
                        } else {
                            "agent-manipulation/tool-poisoning"
                        };
                        (
                            rule,
                            if with {
                                Severity::High
                            } else {
                                Severity::Medium
                            },
                        )
                    }
                };
                add(rule, e, severity, None);
            }
            Capability::LookalikeIndex => {
                add("supply-chain/lookalike-index", e, Severity::High, None)
            }
            Capability::Typosquat => add("supply-chain/typosquat", e, Severity::High, None),
            Capability::UnverifiedSource => {
                add("supply-chain/unverified-source", e, Severity::High, None)
            }
        }
    }
    out
}

/// Whether every secret read is a token file of one service and every
/// line that sends data names only that service's hosts: a token used for
/// its own API (still the user's keys in a skill's hands: medium).
fn to_its_service(evidence: &[Evidence]) -> bool {
    use crate::validate::risk::credentials::SERVICES;
    let secrets: Vec<&Evidence> = evidence
        .iter()
        .filter(|e| matches!(e.capability, Capability::ReadSecret(_)))
        .collect();
    let sends: Vec<&Evidence> = evidence
        .iter()
        .filter(|e| matches!(e.capability, Capability::Send(_)))
        .collect();
    if secrets.is_empty() || sends.is_empty() {
        return false;
    }
    let domains: Option<Vec<&[&str]>> = secrets
        .iter()
        .map(|e| {
            SERVICES
                .iter()
                .find(|(file, _)| e.excerpt.contains(file))
                .map(|(_, domains)| *domains)
        })
        .collect();
    let Some(domains) = domains else {
        return false;
    };
    sends.iter().all(|s| {
        !s.hosts.is_empty()
            && s.hosts.iter().all(|t| {
                domains.iter().all(|ds| {
                    ds.iter()
                        .any(|d| crate::validate::risk::hosts::is_under(&t.host, d))
                })
            })
    })
}

/// Whether the `.env` read at `read` leaves: sent on its own line, or the
/// skill uploads files (an app that loads its `.env` and calls its API
/// sends data, not files).
fn dotenv_sent(evidence: &[Evidence], read: &Evidence) -> bool {
    const UPLOADS: &[&str] = &[
        " -T ",
        " -F ",
        "--upload-file",
        "--data-binary @",
        "-d @",
        "--post-file",
        "files=",
        "Upload",
        "-InFile",
        "sendDocument",
    ];
    evidence.iter().any(|e| {
        matches!(e.capability, Capability::Send(_))
            && ((e.file == read.file && e.line == read.line)
                || UPLOADS.iter().any(|u| e.excerpt.contains(u)))
    })
}

/// A line that sends data away: not over SSH (`scp`, `rsync` go where the
/// user logs in), not only to a language model's API, and to a host
/// written in the code (a drop point, a fixed domain, loopback included).
fn sends_away(evidence: &[Evidence]) -> Option<&Evidence> {
    use crate::validate::risk::hosts::is_under;
    use crate::validate::risk::signals::MODEL_APIS;
    evidence.iter().find(|e| {
        let Capability::Send(drop) = e.capability else {
            return false;
        };
        let ssh = matches!(e.excerpt.split_whitespace().next(), Some("scp" | "rsync"));
        let model = !e.hosts.is_empty()
            && e.hosts
                .iter()
                .all(|t| MODEL_APIS.iter().any(|m| is_under(&t.host, m)));
        let fixed = drop
            || e.excerpt.contains("/dev/tcp/")
            || e.excerpt.split('|').any(|part| {
                let mut words = part.split_whitespace().skip_while(|w| w.starts_with('-'));
                matches!(words.next(), Some("nc" | "ncat" | "netcat"))
                    && words
                        .find(|w| !w.starts_with('-'))
                        .is_some_and(|host| !host.starts_with('$'))
            })
            || e.hosts.iter().any(|t| !t.host.is_empty())
            || e.excerpt
                .split_whitespace()
                .next()
                .is_some_and(|w| matches!(w, "nc" | "ncat" | "netcat"));
        !ssh && !model && fixed
    })
}
