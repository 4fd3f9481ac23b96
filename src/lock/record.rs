//! The lock object: what it records (holder, purpose, lease), reading it
//! with its version for a conditional update, writing it, and telling a
//! holder that is gone (its lease past, or its process on this host dead).

use std::time::Duration;

use bytes::Bytes;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutMode, UpdateVersion};
use serde::{Deserialize, Serialize};

use agentfinder_skills_reader::store::Store;

/// What a lock object says.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(super) struct LockRecord {
    pub(super) token: String,
    pub(super) host: String,
    pub(super) pid: u32,
    pub(super) purpose: String,
    pub(super) acquired_at: u64,
    pub(super) expires_at: u64,
}

/// The lock record at `path` and its version; `None` when there is none.
pub(super) async fn read_record(
    store: &Store,
    path: &Path,
) -> Result<Option<(Option<LockRecord>, UpdateVersion)>, object_store::Error> {
    let result = match store.inner.get(path).await {
        Ok(result) => result,
        Err(object_store::Error::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let version = UpdateVersion {
        e_tag: result.meta.e_tag.clone(),
        version: result.meta.version.clone(),
    };
    let bytes = result.bytes().await?;
    Ok(Some((serde_json::from_slice(&bytes).ok(), version)))
}

pub(super) async fn put(
    store: &Store,
    path: &Path,
    record: &LockRecord,
    mode: PutMode,
) -> Result<(), object_store::Error> {
    let bytes = Bytes::from(serde_json::to_vec(record).unwrap_or_default());
    crate::store::put::put_raw(store, path, bytes, mode).await
}

impl LockRecord {
    pub(super) fn new(purpose: &str, ttl: Duration) -> Self {
        let now = unix_now();
        let host = this_host();
        let pid = std::process::id();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        Self {
            token: format!("{host}-{pid}-{now}-{nanos}"),
            host,
            pid,
            purpose: purpose.to_string(),
            acquired_at: now,
            expires_at: now + ttl.as_secs(),
        }
    }

    /// Past its lease, or held by a process of this host that has exited.
    pub(super) fn is_stale(&self) -> bool {
        if unix_now() >= self.expires_at {
            return true;
        }
        self.host == this_host() && self.pid != std::process::id() && !process_alive(self.pid)
    }
}

pub(super) fn unix_now() -> u64 {
    crate::time::unix_seconds().max(0) as u64
}

fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown-host".to_string())
}

fn process_alive(pid: u32) -> bool {
    let proc_root = std::path::Path::new("/proc");
    if !proc_root.exists() {
        return true; // cannot tell: rely on the lease
    }
    match std::fs::read_to_string(proc_root.join(pid.to_string()).join("stat")) {
        // A zombie ("Z") has exited already.
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}
