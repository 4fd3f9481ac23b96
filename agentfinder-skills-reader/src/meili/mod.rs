//! Keeping a Meilisearch index in sync with an artifact, and its health.
//! (Searching it is the serving side's: `agentfinder-skills-serve`.)
//!
//! Every Meilisearch call goes through the official `meilisearch-sdk`; this
//! module adds what a serving process needs around it: a timeout on every
//! call, retries with exponential backoff for 429, 5xx and timeouts (never for
//! other 4xx), secret-free errors, and a zero-downtime load (staging index,
//! atomic swap).

mod health;
mod load;
mod retry;
mod sidecar;
mod stale;
mod swap;
mod tasks;

use std::time::Duration;

use meilisearch_sdk::client::Client;

pub use health::{health, ping, HealthReport};
pub use load::{load, sync, LoadOutcome, LoadReport, SyncError, SyncOptions};
pub use retry::{call, RetryPolicy};
pub use sidecar::{LoadedSource, LoadedState};
pub use stale::{decide, Decision, StaleReason};

/// Environment variable with the Meilisearch URL.
pub const URL_ENV: &str = "MEILI_URL";
/// Environment variables tried, in order, for the API key.
pub const KEY_ENVS: [&str; 2] = ["MEILI_MASTER_KEY", "MEILI_API_KEY"];

/// A secret that never prints.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// How to reach Meilisearch and how patiently.
#[derive(Debug, Clone)]
pub struct MeiliConfig {
    /// Base URL, e.g. `http://127.0.0.1:7700`.
    pub url: String,
    /// Master key or API key, from the environment only.
    pub api_key: Option<Secret>,
    /// Longest a single HTTP call may take.
    pub call_timeout: Duration,
    /// Longest a Meilisearch task (indexing a batch, a swap) may take.
    pub task_timeout: Duration,
    /// Pause between polls of a task.
    pub poll_interval: Duration,
    /// Retries of transient failures.
    pub retry: RetryPolicy,
    /// Bytes of NDJSON sent per document batch.
    pub batch_bytes: usize,
}

impl MeiliConfig {
    /// Defaults for `url`, with the key from the environment.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into().trim_end_matches('/').to_string(),
            api_key: KEY_ENVS
                .iter()
                .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
                .map(Secret::new),
            call_timeout: Duration::from_secs(30),
            task_timeout: Duration::from_secs(600),
            poll_interval: Duration::from_millis(100),
            retry: RetryPolicy::default(),
            batch_bytes: 16 * 1024 * 1024,
        }
    }

    /// From `MEILI_URL`, or `None` when it is unset or empty.
    pub fn from_env() -> Option<Self> {
        std::env::var(URL_ENV)
            .ok()
            .filter(|url| !url.trim().is_empty())
            .map(Self::new)
    }

    /// The URL with any credential removed, for logs.
    pub fn display_url(&self) -> String {
        crate::store::redact_url(&self.url)
    }

    /// An SDK client.
    pub fn client(&self) -> Result<Client, MeiliError> {
        Client::new(
            &self.url,
            self.api_key.as_ref().map(|k| k.expose().to_string()),
        )
        .map_err(|e| MeiliError::Rejected {
            what: "client setup".into(),
            message: self.scrub(&e.to_string()),
        })
    }

    /// Removes the key and credentials from a message.
    pub fn scrub(&self, message: &str) -> String {
        let mut text = crate::store::redact_text(message);
        if let Some(key) = &self.api_key {
            if !key.expose().is_empty() {
                text = text.replace(key.expose(), "***");
            }
        }
        text
    }
}

/// A Meilisearch operation failed.
#[derive(Debug, thiserror::Error)]
pub enum MeiliError {
    /// Still failing after every retry (429, 5xx, timeout, connection).
    #[error("Meilisearch unavailable during {what} after {attempts} attempt(s): {message}")]
    Unavailable {
        /// The operation.
        what: String,
        /// Attempts made.
        attempts: u32,
        /// The last failure, scrubbed of secrets.
        message: String,
    },
    /// Refused without retry (a 4xx other than 429, a bad response).
    #[error("Meilisearch refused {what}: {message}")]
    Rejected {
        /// The operation.
        what: String,
        /// Meilisearch's message, scrubbed.
        message: String,
    },
    /// A task ended `failed` (or canceled).
    #[error("Meilisearch task {uid} ({what}) failed: {message}")]
    TaskFailed {
        /// The task id.
        uid: u32,
        /// The operation.
        what: String,
        /// Meilisearch's message.
        message: String,
    },
    /// A task did not finish within the task timeout.
    #[error("Meilisearch task {uid} ({what}) did not finish within {seconds} s")]
    TaskTimeout {
        /// The task id.
        uid: u32,
        /// The operation.
        what: String,
        /// The timeout.
        seconds: u64,
    },
    /// After loading, the staging index does not hold what the manifest says.
    #[error("staging index {index} holds {live} documents where the manifest says {expected}; the live index was left alone")]
    CountMismatch {
        /// Staging index.
        index: String,
        /// Documents found.
        live: u64,
        /// Documents expected.
        expected: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let config = MeiliConfig {
            api_key: Some(Secret::new("s3cr3t-key")),
            ..MeiliConfig::new("http://user:pw@localhost:7700/")
        };
        let debug = format!("{config:?}");
        assert!(!debug.contains("s3cr3t-key"), "{debug}");
        assert_eq!(config.url, "http://user:pw@localhost:7700");
        assert_eq!(config.display_url(), "http://***@localhost:7700");
        assert_eq!(
            config.scrub("bad key s3cr3t-key at http://user:pw@h/x"),
            "bad key *** at http://***@h/x"
        );
    }
}
