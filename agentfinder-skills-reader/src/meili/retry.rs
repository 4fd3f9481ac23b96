//! A timeout on every call, and retries with backoff for transient failures.

use std::future::Future;
use std::time::Duration;

use meilisearch_sdk::errors::{Error, ErrorType};

use super::{MeiliConfig, MeiliError};

/// Pauses between attempts; one retry per entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Pause before each retry.
    pub delays: Vec<Duration>,
}

impl RetryPolicy {
    /// `retries` retries, the first after `first`, each pause doubling.
    pub fn exponential(first: Duration, retries: u32) -> Self {
        Self {
            delays: (0..retries).map(|i| first * 2u32.pow(i)).collect(),
        }
    }
}

impl Default for RetryPolicy {
    /// 1 s, 2 s, 4 s.
    fn default() -> Self {
        Self::exponential(Duration::from_secs(1), 3)
    }
}

/// Whether a failure may pass if tried again.
enum Failure {
    Transient(String),
    Permanent(String),
}

/// Runs `op` (one Meilisearch call through the SDK) with the call
/// timeout, retrying transient failures per the policy.
pub async fn call<T, F, Fut>(config: &MeiliConfig, what: &str, mut op: F) -> Result<T, MeiliError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    let mut attempt: u32 = 0;
    loop {
        attempt += 1;
        let failure = match tokio::time::timeout(config.call_timeout, op()).await {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(error)) => classify(&error),
            Err(_) => Failure::Transient(format!(
                "no answer within {:.1} s (call timeout)",
                config.call_timeout.as_secs_f64()
            )),
        };
        match failure {
            Failure::Permanent(message) => {
                return Err(MeiliError::Rejected {
                    what: what.to_string(),
                    message: config.scrub(&message),
                })
            }
            Failure::Transient(message) => match config.retry.delays.get(attempt as usize - 1) {
                Some(pause) => tokio::time::sleep(*pause).await,
                None => {
                    return Err(MeiliError::Unavailable {
                        what: what.to_string(),
                        attempts: attempt,
                        message: config.scrub(&message),
                    })
                }
            },
        }
    }
}

fn classify(error: &Error) -> Failure {
    let text = error.to_string();
    match error {
        Error::Meilisearch(e)
            if matches!(e.error_type, ErrorType::Internal | ErrorType::Unknown) =>
        {
            Failure::Transient(text)
        }
        Error::MeilisearchCommunication(e) if e.status_code == 429 || e.status_code >= 500 => {
            Failure::Transient(format!("HTTP {}: {text}", e.status_code))
        }
        Error::HttpError(e) => match e.status() {
            Some(status) if status.as_u16() != 429 && status.is_client_error() => {
                Failure::Permanent(text)
            }
            _ if e.is_builder() => Failure::Permanent(text),
            _ => Failure::Transient(text),
        },
        _ => Failure::Permanent(text),
    }
}
