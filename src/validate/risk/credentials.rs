//! Credential stores read, and data sent to the network, in one script or
//! code block (or one line of prose).
//!
//! A credential file counts as read when the line that names it reads it
//! (`cat`, `open(...)`, `readFileSync`, `tar`, `@file`, a path built in
//! code...), so `ssh -i ~/.ssh/id_rsa` or `[ -f ~/.aws/credentials ]` do
//! not; browser, keychain and wallet stores count whenever code names them.
//! A dump of the whole environment counts; one named variable does not
//! (an honest skill sends its API key to its API). A `.env` file counts
//! only when it goes to the network on the same line.

use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

use super::hit::{Context, Hit};
use super::hosts::{self, HostKind, Target};
use super::text::Text;

fn build(pattern: &str) -> Regex {
    RegexBuilder::new(pattern)
        .unicode(false)
        .multi_line(true)
        .build()
        .expect("credential pattern")
}

/// Stores that have no business in a skill's code: browser passwords and
/// cookies, keychains, wallets, cloud metadata credentials, shadow and
/// shell history.
static STORES: LazyLock<Regex> = LazyLock::new(|| {
    build(
        r#"(?i:\b(?:chrome|chromium|brave(?:software)?|edge|opera|vivaldi|firefox|mozilla|safari)\b)[^\n]{0,80}?[/\\"'](?:Login Data|Web Data|Local State|Cookies|logins\.json|key[34]\.db|cookies\.sqlite|signons\.sqlite)\b|(?i:cookies\.binarycookies|\bbrowser_cookie3\b|\bdump-keychain\b|\blogin\.keychain(?:-db)?\b|/keychains/login|\bwallet\.dat\b|\bexodus\.wallet\b|\.electrum/|solana/id\.json|\.ethereum/keystore|nkbihfbeogaeaoehlefnkodbefgpgknn|local extension settings)|169\.254\.169\.254/[^\s'"]*(?:security-credentials|identity|token)|metadata\.google\.internal/[^\s'"]*token|/etc/shadow\b|\.(?:bash|zsh)_history\b|\.gnupg/(?:private-keys|secring)"#,
    )
});

/// Credential files an honest script may name without reading.
static FILES: LazyLock<Regex> = LazyLock::new(|| {
    build(
        r#"\.ssh/(?:id_[a-z0-9]+|[a-z0-9_.-]*(?:_rsa|_ed25519|_ecdsa|_dsa|\.pem|\.key))\b(?:\.pub)?|["']id_(?:rsa|ed25519|ecdsa|dsa)["']|(?:~|\$HOME|\$\{HOME\})/\.ssh/?(?:["'\s]|$)|\.aws/credentials\b|\.aws["'][ \t]*,[ \t]*["']credentials|\.netrc\b|\.git-credentials\b|\.docker/config\.json|\.kube/config\b|\.npmrc\b|\.pypirc\b|gh/hosts\.yml|gcloud/(?:credentials\.db|application_default_credentials\.json|access_tokens\.db|legacy_credentials)|\.azure/(?:accessTokens\.json|msal_token_cache)|/var/run/secrets/kubernetes\.io|\.claude/\.credentials\.json|\.codex/auth\.json|\.password-store/"#,
    )
});

/// A line that reads what it names.
static READS: LazyLock<Regex> = LazyLock::new(|| {
    build(
        r#"\b(?:cat|less|more|head|tail|base64|xxd|od|strings|tar|zip|7z|gzip|cp|scp|rsync|open|read|readFile|readFileSync|read_text|read_bytes|readlines|Get-Content|gc|load|loads|slurp|expanduser|homedir|os\.path\.join|path\.join|Path\.home|File\.read|ReadAllText|ReadAllBytes)\b|<[ \t]*["']?(?:~|\$HOME)|\$\(<|@["']?(?:~|\$HOME|\$\{HOME\}|/)"#,
    )
});

/// The whole environment, serialized.
static ENV_DUMP: LazyLock<Regex> = LazyLock::new(|| {
    build(
        r"(?:json\.dumps|dict|str|repr)[ \t]*\([ \t]*(?:dict[ \t]*\([ \t]*)?os\.environ[ \t]*(?:\.(?:copy|items)\([ \t]*\))?[ \t]*\)|JSON\.stringify\([ \t]*process\.env[ \t]*[,)]|(?i:(?:get-childitem|gci)[ \t]+env:)|\[(?:System\.)?Environment\]::GetEnvironmentVariables\(\)|\b(?:env|printenv|set)[ \t]*\|[^\n]*\b(?:curl|wget|nc|ncat|base64)\b",
    )
});

/// A `.env` file read on a line that also sends.
static DOTENV: LazyLock<Regex> =
    LazyLock::new(|| build(r#"(?:^|[\s"'(=@<:/])\.env(?:\.[a-z]+)?\b"#));

/// Data going to the network.
static SENDS: LazyLock<Regex> = LazyLock::new(|| {
    build(
        r#"\bcurl\b[^\n]*?[ \t](?:-[a-zA-Z]*[dFT]\b|--data\b|--data-[a-z]+|--form\b|--upload-file\b|--json\b|-X[ \t]*["']?(?:POST|PUT|PATCH)\b)|\bwget\b[^\n]*--post-(?:data|file)|\b(?:nc|ncat|netcat|socat)\b[ \t]+[^\n]*?(?:\b[0-9]{2,5}\b|tcp)|/dev/(?:tcp|udp)/|\b(?:requests|httpx|session|client|http)\.(?:post|put|patch)[ \t]*\(|\burlopen[ \t]*\([^\n]*\bdata[ \t]*=|\bRequest[ \t]*\([^\n]*\bdata[ \t]*=|\bfetch[ \t]*\([^\n]*\bmethod[ \t]*:[ \t]*["'](?:POST|PUT|PATCH)|\baxios\.(?:post|put|patch)[ \t]*\(|\bnavigator\.sendBeacon\b|(?i:invoke-(?:webrequest|restmethod)[^\n]*-(?:method[ \t]+["']?(?:post|put)|body|infile))|discord(?:app)?\.com/api/webhooks|hooks\.slack\.com/services|api\.telegram\.org/bot|webhook\.site|pipedream\.net|\bsmtplib\b|\bftplib\b"#,
    )
});

/// Credential files that belong to one service, and its domains: a
/// script that reads one and talks only to those domains is using the
/// token for its API.
pub const SERVICES: &[(&str, &[&str])] = &[
    (".git-credentials", GIT_HOSTS),
    ("git credential", GIT_HOSTS),
    (".netrc", GIT_HOSTS),
    ("gh/hosts.yml", &["github.com"]),
    (".npmrc", &["npmjs.org", "npmjs.com", "github.com"]),
    (".pypirc", &["pypi.org"]),
    (
        ".docker/config.json",
        &[
            "docker.io",
            "docker.com",
            "ghcr.io",
            "gcr.io",
            "quay.io",
            "amazonaws.com",
            "azurecr.io",
        ],
    ),
    (".aws", &["amazonaws.com", "aws.amazon.com"]),
    ("gcloud/", &["googleapis.com", "google.com"]),
    (
        ".azure/",
        &[
            "azure.com",
            "azure.net",
            "microsoft.com",
            "microsoftonline.com",
            "windows.net",
        ],
    ),
    (".claude/", &["anthropic.com", "claude.ai"]),
    (".codex/", &["openai.com", "chatgpt.com"]),
];
const GIT_HOSTS: &[&str] = &[
    "github.com",
    "githubusercontent.com",
    "gitlab.com",
    "gitcode.com",
    "gitee.com",
    "bitbucket.org",
    "codeberg.org",
    "huggingface.co",
];

/// A line that says not to touch what it names ("never read
/// `~/.codex/auth.json`"), up to the source, with no clause break after.
static NEVER: LazyLock<Regex> = LazyLock::new(|| {
    build(
        r"(?i:\b(?:never|don'?t|do[ \t]+not|must[ \t]+not|should[ \t]+not)[ \t]+(?:read|open|cat|access|touch|send|upload|share|commit|print|log|expose|copy|include)\b(?:[^.,;:\n]|\.[^\s])*$)",
    )
});

/// Whether the source at `at` is named in a "never read ..." clause.
fn forbidden(text: &Text<'_>, at: usize) -> bool {
    let line = text.line_at(at);
    NEVER.is_match(&text.raw.as_bytes()[line.start..at])
}

/// Stores whose very name is a read (`security dump-keychain`).
static SELF_READING: LazyLock<Regex> =
    LazyLock::new(|| build(r"(?i:dump-keychain|browser_cookie3)"));

/// A pattern's source (`\.ssh`, `.*`, `\s+`, `(?i)`), or text only
/// printed: a line that names a store without reading it.
static NOT_A_READ: LazyLock<Regex> = LazyLock::new(|| {
    build(
        r#"\\[.sbdwS]|\.\*|\(\?[:i]|\[\^|^[ \t]*(?:echo|printf|print|puts|console\.log|Write-Host|logger\.\w+)\b(?:[^$`]|\$[^(])*$"#,
    )
});

fn not_a_read(line: &str) -> bool {
    NOT_A_READ.is_match(line.as_bytes())
}

/// Whether the name at byte `at` of `line` is an item of a list, set or
/// map literal (a scanner's list of sensitive paths): inside an open `[`
/// or `{`, on a line that is one quoted item, or a quoted item followed
/// by `,` or `:`.
fn listed(line: &str, at: usize) -> bool {
    let before = &line[..at];
    let open = |o: char, c: char| before.matches(o).count() > before.matches(c).count();
    if open('[', ']') || open('{', '}') || line.trim_start().starts_with(['"', '\'']) {
        return true;
    }
    let after = &line[at..];
    let close = after.find(['"', '\'']).map(|i| &after[i + 1..]);
    close.is_some_and(|rest| rest.trim_start().starts_with([',', ':', ']', '}']))
}

/// Sources read per text, and sends: each is paired with the other's
/// lines, so bounds keep a file that names a store or a POST ten thousand
/// times (on one line, even) linear.
const MAX_SOURCES: usize = 64;
const MAX_SENDS: usize = 256;

/// What the three credential rules read in a text: its sources and the
/// offsets of its sends, found once.
#[derive(Debug, Clone)]
struct Reading {
    sources: Vec<Source>,
    sends: Vec<usize>,
}

/// The credential reads and sends of `text`, found on first use and kept
/// in the text's slot (found again, not taken as none, should the slot
/// ever hold something else).
fn reading<'t>(text: &'t Text<'_>) -> std::borrow::Cow<'t, Reading> {
    let find = || {
        let sources = sources(text);
        let sends = if sources.is_empty() {
            Vec::new()
        } else {
            sends(text)
        };
        Reading { sources, sends }
    };
    match text
        .derived
        .get_or_init(|| Box::new(find()))
        .downcast_ref::<Reading>()
    {
        Some(kept) => std::borrow::Cow::Borrowed(kept),
        None => std::borrow::Cow::Owned(find()),
    }
}

/// One credential source found in a text.
#[derive(Debug, Clone)]
struct Source {
    at: usize,
    /// A `.env` file: counts only with a send on its own line.
    same_line_only: bool,
    /// The domains of the service the credential is for (empty: none).
    services: &'static [&'static str],
}

/// The credential sources `text` reads (in code; in prose, only on a
/// line that also sends).
fn sources(text: &Text<'_>) -> Vec<Source> {
    let norm = text.norm.as_bytes();
    let mut out = Vec::new();
    let in_code = |at: usize| text.in_code(at);
    for m in STORES.find_iter(norm).take(4 * MAX_SOURCES) {
        let at = text.to_raw(m.start());
        let line = &text.raw[text.line_at(at)];
        let reads_itself = SELF_READING.is_match(m.as_bytes());
        let within = at - text.line_at(at).start;
        let named = reads_itself || READS.is_match(line.as_bytes()) || !listed(line, within);
        if in_code(at) && named && !not_a_read(line) {
            out.push(Source {
                at,
                same_line_only: false,
                services: &[],
            });
        }
    }
    for m in ENV_DUMP.find_iter(norm).take(4 * MAX_SOURCES) {
        let at = text.to_raw(m.start());
        let line = &text.raw[text.line_at(at)];
        if in_code(at) && !not_a_read(line) && !listed(line, at - text.line_at(at).start) {
            out.push(Source {
                at,
                same_line_only: false,
                services: &[],
            });
        }
    }
    for m in FILES.find_iter(norm).take(4 * MAX_SOURCES) {
        if m.as_bytes().ends_with(b".pub") {
            continue;
        }
        let at = text.to_raw(m.start());
        let line = &text.raw[text.line_at(at)];
        if in_code(at) && READS.is_match(line.as_bytes()) && !not_a_read(line) {
            let matched = String::from_utf8_lossy(m.as_bytes());
            let services = SERVICES
                .iter()
                .find(|(needle, _)| matched.contains(needle))
                .map_or(&[][..], |(_, domains)| *domains);
            out.push(Source {
                at,
                same_line_only: false,
                services,
            });
        }
    }
    for m in DOTENV.find_iter(norm).take(4 * MAX_SOURCES) {
        let at = text.to_raw(m.start());
        let line = &text.raw[text.line_at(at)];
        if READS.is_match(line.as_bytes()) || line.contains('|') {
            out.push(Source {
                at,
                same_line_only: true,
                services: &[],
            });
        }
    }
    out.retain(|s| !forbidden(text, s.at));
    out.sort_by_key(|s| s.at);
    out.truncate(MAX_SOURCES);
    out
}

/// The hosts of the URLs in `text` (`scheme://host`).
fn url_hosts(text: &str) -> Vec<Target> {
    text.match_indices("://")
        .map(|(i, _)| {
            let scheme = text[..i]
                .rsplit(|c: char| !c.is_ascii_alphabetic())
                .next()
                .unwrap_or("");
            hosts::classify(&text[i + 3..], scheme.eq_ignore_ascii_case("http"), "")
        })
        .collect()
}

/// Where `text` sends data to the network (offsets as written); a send
/// whose line names only local addresses (a cloud metadata service,
/// localhost) stays on the machine.
fn sends(text: &Text<'_>) -> Vec<usize> {
    SENDS
        .find_iter(text.norm.as_bytes())
        .take(MAX_SENDS)
        .map(|m| text.to_raw(m.start()))
        .filter(|&at| {
            let hosts = url_hosts(&text.raw[text.line_at(at)]);
            hosts.is_empty() || hosts.iter().any(|h| h.kind != HostKind::Local)
        })
        .collect()
}

/// Whether every URL in the unit of `source` goes to the service its
/// credential is for (and there is one).
fn to_its_service(text: &Text<'_>, source: &Source) -> bool {
    if source.services.is_empty() {
        return false;
    }
    let hosts = url_hosts(&text.raw[text.segment(source.at)]);
    !hosts.is_empty()
        && hosts
            .iter()
            .all(|h| source.services.iter().any(|d| hosts::is_under(&h.host, d)))
}

/// The first send in the same unit as `source` (its script or code
/// block; its line for prose and `.env`).
fn send_for(text: &Text<'_>, source: &Source, sends: &[usize]) -> Option<usize> {
    let unit = if source.same_line_only {
        text.line_at(source.at)
    } else {
        text.segment(source.at)
    };
    sends.iter().copied().find(|s| unit.contains(s))
}

/// Credential stores read and sent (see the module).
pub fn read_and_send(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    let reading = reading(text);
    let Reading { sources, sends } = &*reading;
    sources
        .iter()
        .filter(|source| !to_its_service(text, source))
        .filter_map(|source| {
            let send = send_for(text, source, sends)?;
            Some(Hit::at(source.at).note(format!("sent at line {}", text.line_of(send))))
        })
        .collect()
}

/// Credential files read and sent only to their own service.
pub fn read_and_send_to_service(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    let reading = reading(text);
    let Reading { sources, sends } = &*reading;
    sources
        .iter()
        .filter(|source| to_its_service(text, source))
        .filter_map(|source| {
            let send = send_for(text, source, sends)?;
            Some(Hit::at(source.at).note(format!("sent at line {}", text.line_of(send))))
        })
        .collect()
}

/// Credential stores read with no send beside them (`.env` files and
/// environment dumps aside: reading those is what configuration does).
pub fn read_only(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    let reading = reading(text);
    let Reading { sources, sends } = &*reading;
    sources
        .iter()
        .filter(|s| !s.same_line_only && send_for(text, s, sends).is_none())
        .filter(|s| !ENV_DUMP.is_match(text.raw[text.line_at(s.at)].as_bytes()))
        .map(|s| Hit::at(s.at))
        .collect()
}
