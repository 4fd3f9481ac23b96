//! What can go wrong reaching a remote source, told apart: a server that
//! does not accept a connection in time, one that rate-limits (HTTP 429),
//! one that fails (5xx), a call that times out.
//!
//! gix's HTTP client (reqwest) waits 20 s for a connection whatever its
//! configuration says, so a clone or fetch is preceded by a connection of
//! our own with the configured timeout: an unreachable host costs that
//! timeout, not gix's.

use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Why a remote source could not be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetworkFailure {
    /// The server answered HTTP 429.
    RateLimited,
    /// The server answered with this 5xx status.
    ServerError(u16),
    /// No connection within the connect timeout, or a call timed out.
    Timeout,
    /// The connection was refused, or the host name does not resolve.
    Unreachable,
}

impl NetworkFailure {
    /// Whether trying again later may succeed on its own (only a rate limit
    /// is retried by a build: the others would cost their timeout again).
    pub fn is_rate_limit(&self) -> bool {
        matches!(self, Self::RateLimited)
    }
}

impl std::fmt::Display for NetworkFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::RateLimited => f.write_str("rate limited"),
            Self::ServerError(status) => write!(f, "server error (HTTP {status})"),
            Self::Timeout => f.write_str("timed out"),
            Self::Unreachable => f.write_str("unreachable"),
        }
    }
}

/// Classifies the message of a failed clone or fetch (with its causes).
pub fn classify(message: &str) -> Option<NetworkFailure> {
    if let Some(status) = http_status(message) {
        return match status {
            429 => Some(NetworkFailure::RateLimited),
            500..=599 => Some(NetworkFailure::ServerError(status)),
            _ => None,
        };
    }
    let lower = message.to_ascii_lowercase();
    if lower.contains("timed out") || lower.contains("timeout") {
        Some(NetworkFailure::Timeout)
    } else if lower.contains("connection refused")
        || lower.contains("error trying to connect")
        || lower.contains("dns error")
        || lower.contains("failed to lookup address")
        || lower.contains("connection reset")
    {
        Some(NetworkFailure::Unreachable)
    } else {
        None
    }
}

/// The status of gix's "Received HTTP status NNN", if the message has one.
fn http_status(message: &str) -> Option<u16> {
    let (_, rest) = message.split_once("HTTP status ")?;
    rest.get(..3)?.parse().ok()
}

/// Opens (and closes) a TCP connection to the host of `url` within
/// `timeout`; `Ok` for URLs that are not reached over TCP (`file://`).
pub fn probe(url: &str, timeout: Duration) -> Result<(), (NetworkFailure, String)> {
    let Some((host, port)) = host_and_port(url) else {
        return Ok(());
    };
    let addresses: Vec<_> = match (host.as_str(), port).to_socket_addrs() {
        Ok(addresses) => addresses.collect(),
        Err(e) => {
            return Err((
                NetworkFailure::Unreachable,
                format!("cannot resolve {host}: {e}"),
            ))
        }
    };
    let mut last = (
        NetworkFailure::Unreachable,
        format!("{host} has no address"),
    );
    for address in addresses {
        match TcpStream::connect_timeout(&address, timeout) {
            Ok(_) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                last = (
                    NetworkFailure::Timeout,
                    format!(
                        "no connection to {host}:{port} within {} s",
                        timeout.as_secs_f64()
                    ),
                );
            }
            Err(e) => last = (NetworkFailure::Unreachable, format!("{host}:{port}: {e}")),
        }
    }
    Err(last)
}

/// Host and port of an `http(s)://`, `ssh://`, `git://` or scp-like URL.
fn host_and_port(url: &str) -> Option<(String, u16)> {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (scheme, rest),
        None if url.contains('@') && url.contains(':') => ("ssh", url),
        None => return None,
    };
    let default_port = match scheme {
        "https" => 443,
        "http" => 80,
        "ssh" | "git+ssh" => 22,
        "git" => 9418,
        _ => return None,
    };
    let authority = rest.split(['/', '?']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    if let Some(bracketed) = authority.strip_prefix('[') {
        let (host, after) = bracketed.split_once(']')?;
        let port = after.strip_prefix(':').and_then(|p| p.parse().ok());
        return Some((host.to_string(), port.unwrap_or(default_port)));
    }
    let scp_like = !url.contains("://");
    match authority.rsplit_once(':') {
        Some((host, port)) if !scp_like => Some((host.to_string(), port.parse().ok()?)),
        Some((host, _)) => Some((host.to_string(), default_port)),
        None => Some((authority.to_string(), default_port)),
    }
}

/// `error` and its causes, joined with `: ` (gix puts the HTTP status in a cause).
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let more = inner.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = inner.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_told_apart_by_their_messages() {
        let gix = |s: &str| {
            format!("An IO error occurred when talking to the server: Received HTTP status {s}")
        };
        assert_eq!(classify(&gix("429")), Some(NetworkFailure::RateLimited));
        assert_eq!(
            classify(&gix("503")),
            Some(NetworkFailure::ServerError(503))
        );
        assert_eq!(classify(&gix("404")), None);
        assert_eq!(
            classify("error sending request: operation timed out"),
            Some(NetworkFailure::Timeout)
        );
        assert_eq!(
            classify("tcp connect error: Connection refused (os error 111)"),
            Some(NetworkFailure::Unreachable)
        );
        assert_eq!(classify("repository not found"), None);
    }

    #[test]
    fn hosts_and_ports_come_from_every_url_shape() {
        let hp = |u: &str| host_and_port(u).map(|(h, p)| format!("{h}:{p}"));
        assert_eq!(
            hp("https://github.com/o/r.git").as_deref(),
            Some("github.com:443")
        );
        assert_eq!(
            hp("http://user:pw@127.0.0.1:8080/r.git").as_deref(),
            Some("127.0.0.1:8080")
        );
        assert_eq!(
            hp("git@github.com:o/r.git").as_deref(),
            Some("github.com:22")
        );
        assert_eq!(hp("ssh://[::1]:2222/r").as_deref(), Some("::1:2222"));
        assert_eq!(hp("file:///tmp/r"), None);
    }

    #[test]
    fn a_closed_port_is_unreachable_at_once() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let started = std::time::Instant::now();
        let failure = probe(
            &format!("http://127.0.0.1:{port}/r.git"),
            Duration::from_secs(8),
        );
        assert_eq!(failure.unwrap_err().0, NetworkFailure::Unreachable);
        assert!(started.elapsed() < Duration::from_secs(8));
    }
}
