//! What every read of a store shares: why a read failed ([`ReadError`]),
//! the digest `_SUCCESS` records, retries of a promotion under way, and
//! cutting a stream of NDJSON into whole lines. [`crate::artifact`],
//! [`crate::parts`] and [`crate::documents`] read through these.

use std::time::Duration;

use bytes::Bytes;
use object_store::ObjectStoreExt;
use sha2::{Digest, Sha256};

use crate::contract::{FileDigest, SUCCESS_FILE};
use crate::store::{redact_text, Store};

/// Why an artifact could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// There is no `_SUCCESS` but other files are there: a build or a
    /// promotion is under way (or was interrupted).
    #[error("{location} has no {SUCCESS_FILE}: a build or promotion is in progress (or was interrupted); retry")]
    NotFound {
        /// The directory.
        location: String,
    },
    /// Nothing at all is there: nothing was built into it yet (or a first
    /// promotion has just begun: retrying is right for a reader).
    #[error("{location} is empty: nothing has been built there")]
    Empty {
        /// The directory.
        location: String,
    },
    /// A file is missing or does not match `_SUCCESS`: a promotion is in
    /// progress (or a mount lags); retry later.
    #[error("{location}{file} does not match {SUCCESS_FILE} ({reason}): promotion in progress or a lagging mount, retry")]
    InProgress {
        /// The directory.
        location: String,
        /// The file.
        file: String,
        /// What differed.
        reason: String,
    },
    /// A file matches its digest but breaks the contract.
    #[error("{location}{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        /// The directory.
        location: String,
        /// The file.
        file: String,
        /// 1-based line, where one applies.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// The store failed.
    #[error("store error reading {path}: {message}")]
    Store {
        /// The object's path.
        path: String,
        /// The store's message, redacted.
        message: String,
    },
}

impl ReadError {
    /// A store failure on `path`, its message redacted (it may quote a URL
    /// with credentials).
    pub fn store(path: &impl std::fmt::Display, message: &impl std::fmt::Display) -> Self {
        Self::Store {
            path: path.to_string(),
            message: redact_text(&message.to_string()),
        }
    }

    /// Whether retrying later may succeed (a promotion may be in progress).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::NotFound { .. } | Self::Empty { .. } | Self::InProgress { .. }
        )
    }
}

/// Computes the digest of `bytes` as `_SUCCESS` records it.
pub fn digest_of(bytes: &[u8]) -> FileDigest {
    FileDigest {
        sha256: hex::encode(Sha256::digest(bytes)),
        size: bytes.len() as u64,
    }
}

/// Runs `read` until it succeeds, fails for good, or `attempts` run out;
/// only transient failures (a promotion in progress) are retried.
pub async fn retrying<T, F, Fut>(
    attempts: u32,
    first_pause: Duration,
    mut read: F,
) -> Result<T, ReadError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, ReadError>>,
{
    let mut pause = first_pause;
    let mut attempt = 1;
    loop {
        match read().await {
            Err(e) if e.is_transient() && attempt < attempts => {
                tokio::time::sleep(pause).await;
                pause *= 2;
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// Counts found by checking an artifact's documents
/// ([`crate::artifact::check_documents`], [`crate::documents::check_streamed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DocumentStats {
    /// Lines (documents) in the file.
    pub documents: u64,
    /// Documents of kind `skill`.
    pub skills: u64,
}

/// Gets an object, mapping "not found" to `None`.
pub async fn get_optional(
    store: &Store,
    path: &object_store::path::Path,
) -> Result<Option<Bytes>, ReadError> {
    let store_error = |e: object_store::Error| ReadError::store(&path, &e);
    match store.inner.get(path).await {
        Ok(result) => Ok(Some(result.bytes().await.map_err(store_error)?)),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(store_error(e)),
    }
}

/// A streamed read failed, or the consumer did.
#[derive(Debug)]
pub enum StreamError<E> {
    /// Reading, or the digest check at the end.
    Read(ReadError),
    /// The consumer's own error.
    Consumer(E),
}

/// Where the next batch of `pending` ends: after the last newline within
/// `max_bytes`, else (one long line) after the first newline; `None` when
/// no line is complete yet.
pub fn line_cut(pending: &[u8], max_bytes: usize) -> Option<usize> {
    let within = &pending[..max_bytes.min(pending.len())];
    within
        .iter()
        .rposition(|&b| b == b'\n')
        .or_else(|| pending.iter().position(|&b| b == b'\n'))
        .map(|at| at + 1)
}
