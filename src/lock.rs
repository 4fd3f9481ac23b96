//! Exclusive leases in the artifact store, so that builders running at once
//! (a scheduled Job and an Actions fallback, sharded backfills) never
//! interleave their writes to one directory.
//!
//! A lock is a small JSON object under `locks/` created with a create-only
//! write (`If-None-Match: *` on S3; an atomic link on a local folder); only
//! one creator wins. A lock whose holder is gone (a process on this host that
//! no longer exists, or any holder past its expiry) is taken over with a
//! conditional update on the version that was read, so two builders cannot
//! both take it over. A local folder has no conditional update: there the
//! stale lock is deleted and re-created create-only, which is safe against
//! every race but one (two takers deleting the same stale lock in the same
//! instant), acceptable for a folder on one machine. Locks are for builders
//! only; readers never look at them.

use std::time::Duration;

use bytes::Bytes;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutMode, UpdateVersion};
use serde::{Deserialize, Serialize};

use agentfinder_skills_reader::store::{redact_text, Store};

/// A lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another builder holds it and did not let go in time.
    #[error("{path} is held by {holder} (purpose: {purpose}) and was not released within {waited} s; if that builder is gone, the lock expires at {expires_at} (Unix time)")]
    Busy {
        /// The lock object.
        path: String,
        /// Who holds it.
        holder: String,
        /// What for.
        purpose: String,
        /// Seconds waited.
        waited: u64,
        /// When it expires.
        expires_at: u64,
    },
    /// The store failed.
    #[error("lock {path}: {message}")]
    Store {
        /// The lock object.
        path: String,
        /// Why.
        message: String,
    },
}

/// What a lock object says.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
struct LockRecord {
    token: String,
    host: String,
    pid: u32,
    purpose: String,
    acquired_at: u64,
    expires_at: u64,
}

/// A held lock; release it with [`StoreLock::release`].
#[derive(Debug)]
pub struct StoreLock {
    store: Store,
    path: Path,
    token: String,
    /// False when the store has no create-only writes and the lock is advisory.
    pub exclusive: bool,
}

/// How long to hold and to wait.
#[derive(Debug, Clone, Copy)]
pub struct LockTimes {
    /// A holder's lease; past it, the lock may be taken over.
    pub ttl: Duration,
    /// Longest to wait for a held lock.
    pub wait: Duration,
    /// Pause between attempts.
    pub poll: Duration,
}

impl Default for LockTimes {
    fn default() -> Self {
        Self {
            ttl: Duration::from_secs(30 * 60),
            wait: Duration::from_secs(15 * 60),
            poll: Duration::from_millis(250),
        }
    }
}

impl StoreLock {
    /// Takes the lock `locks/<name>.json`, waiting while another live builder holds it.
    pub async fn acquire(
        store: &Store,
        name: &str,
        purpose: &str,
        times: LockTimes,
    ) -> Result<Self, LockError> {
        let path = Path::from(format!("locks/{name}.json"));
        let started = std::time::Instant::now();
        let error = |message: String| LockError::Store {
            path: path.to_string(),
            message: redact_text(&message),
        };
        loop {
            let record = LockRecord::new(purpose, times.ttl);
            let token = record.token.clone();
            let lock = |exclusive| StoreLock {
                store: store.clone(),
                path: path.clone(),
                token: token.clone(),
                exclusive,
            };
            match put(store, &path, &record, PutMode::Create).await {
                Ok(()) => return Ok(lock(true)),
                Err(object_store::Error::NotImplemented { .. }) => {
                    crate::report::global().warn(
                        "lock",
                        format!(
                            "{} has no create-only writes; the lock {path} is advisory",
                            store.display
                        ),
                    );
                    put(store, &path, &record, PutMode::Overwrite)
                        .await
                        .map_err(|e| error(e.to_string()))?;
                    return Ok(lock(false));
                }
                Err(object_store::Error::AlreadyExists { .. }) => {}
                Err(e) => return Err(error(e.to_string())),
            }
            // Held: by whom, and are they still there?
            let current = match store.inner.get(&path).await {
                Ok(result) => {
                    let version = UpdateVersion {
                        e_tag: result.meta.e_tag.clone(),
                        version: result.meta.version.clone(),
                    };
                    let bytes = result.bytes().await.map_err(|e| error(e.to_string()))?;
                    Some((serde_json::from_slice::<LockRecord>(&bytes).ok(), version))
                }
                Err(object_store::Error::NotFound { .. }) => None,
                Err(e) => return Err(error(e.to_string())),
            };
            let Some((held, version)) = current else {
                continue; // released in between: try again at once
            };
            let stale = held.as_ref().is_none_or(LockRecord::is_stale);
            if stale {
                match put(store, &path, &record, PutMode::Update(version)).await {
                    Ok(()) => return Ok(lock(true)),
                    Err(
                        object_store::Error::Precondition { .. }
                        | object_store::Error::NotFound { .. },
                    ) => continue,
                    Err(object_store::Error::NotImplemented { .. }) => {
                        // A local folder: remove the stale lock, then race fairly on create.
                        match store.inner.delete(&path).await {
                            Ok(()) | Err(object_store::Error::NotFound { .. }) => continue,
                            Err(e) => return Err(error(e.to_string())),
                        }
                    }
                    Err(e) => return Err(error(e.to_string())),
                }
            }
            if started.elapsed() >= times.wait {
                let held = held.unwrap_or_else(|| LockRecord::new("?", Duration::ZERO));
                return Err(LockError::Busy {
                    path: path.to_string(),
                    holder: format!("pid {} on {}", held.pid, held.host),
                    purpose: held.purpose,
                    waited: started.elapsed().as_secs(),
                    expires_at: held.expires_at,
                });
            }
            tokio::time::sleep(times.poll).await;
        }
    }

    /// Releases the lock if this builder still holds it.
    pub async fn release(self) {
        if let Ok(result) = self.store.inner.get(&self.path).await {
            if let Ok(bytes) = result.bytes().await {
                let ours = serde_json::from_slice::<LockRecord>(&bytes)
                    .is_ok_and(|r| r.token == self.token);
                if ours {
                    let _ = self.store.inner.delete(&self.path).await;
                }
            }
        }
    }
}

async fn put(
    store: &Store,
    path: &Path,
    record: &LockRecord,
    mode: PutMode,
) -> Result<(), object_store::Error> {
    let bytes = Bytes::from(serde_json::to_vec(record).unwrap_or_default());
    crate::write::put_raw(store, path, bytes, mode).await
}

impl LockRecord {
    fn new(purpose: &str, ttl: Duration) -> Self {
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
    fn is_stale(&self) -> bool {
        if unix_now() >= self.expires_at {
            return true;
        }
        self.host == this_host() && self.pid != std::process::id() && !process_alive(self.pid)
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_str().unwrap()).unwrap();
        (dir, store)
    }

    fn quick() -> LockTimes {
        LockTimes {
            ttl: Duration::from_secs(60),
            wait: Duration::from_millis(300),
            poll: Duration::from_millis(20),
        }
    }

    #[tokio::test]
    async fn a_held_lock_keeps_others_out_until_released() {
        let (_dir, store) = store();
        let held = StoreLock::acquire(&store, "latest", "promote", quick())
            .await
            .unwrap();
        assert!(held.exclusive);
        let busy = StoreLock::acquire(&store, "latest", "promote", quick())
            .await
            .unwrap_err();
        assert!(matches!(busy, LockError::Busy { .. }), "{busy}");
        assert!(busy.to_string().contains("promote"));
        held.release().await;
        StoreLock::acquire(&store, "latest", "promote", quick())
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_lock_of_a_dead_process_or_past_its_lease_is_taken_over() {
        let (dir, store) = store();
        let lock_file = dir.path().join("locks/latest.json");
        std::fs::create_dir_all(lock_file.parent().unwrap()).unwrap();
        let mut dead = LockRecord::new("promote", Duration::from_secs(3600));
        dead.pid = u32::MAX - 1; // no such process
        std::fs::write(&lock_file, serde_json::to_vec(&dead).unwrap()).unwrap();
        StoreLock::acquire(&store, "latest", "promote", quick())
            .await
            .unwrap()
            .release()
            .await;

        let mut expired = LockRecord::new("promote", Duration::ZERO);
        expired.host = "another-host".into();
        std::fs::create_dir_all(lock_file.parent().unwrap()).unwrap();
        std::fs::write(&lock_file, serde_json::to_vec(&expired).unwrap()).unwrap();
        StoreLock::acquire(&store, "latest", "promote", quick())
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_live_lock_of_another_host_is_respected() {
        let (dir, store) = store();
        let lock_file = dir.path().join("locks/latest.json");
        std::fs::create_dir_all(lock_file.parent().unwrap()).unwrap();
        let mut other = LockRecord::new("promote", Duration::from_secs(3600));
        other.host = "another-host".into();
        std::fs::write(&lock_file, serde_json::to_vec(&other).unwrap()).unwrap();
        let err = StoreLock::acquire(&store, "latest", "promote", quick())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("another-host"), "{err}");
    }
}
