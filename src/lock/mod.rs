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
//!
//! A lock stays held for as long as its holder works: a heartbeat renews the
//! lease every third of it with a conditional update, and a [`LockGuard`]
//! tells the holder, before each write, whether it may still write. The
//! moment the lease has run out (a builder paused past it, whose heartbeat
//! stopped too) or the lock is found in another builder's hands, the guard
//! refuses, and the holder stops before touching another file. An expired
//! lease is never renewed: once another builder may have taken it over, it
//! is lost. Releasing is conditional too: the record is replaced (If-Match)
//! by a released one that anyone may take, or, on a local folder, deleted
//! only if it is still ours.

mod lease;
mod record;

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use object_store::path::Path;
use object_store::{ObjectStoreExt, PutMode};

use agentfinder_skills_reader::store::{redact_text, Store};

use self::lease::{heartbeat, Lease};
use self::record::{put, read_record, LockRecord};

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
    /// The lock was lost while held: its lease ran out, or another builder
    /// took it over. The holder stopped writing.
    #[error("lock {path} was lost: {reason}")]
    Lost {
        /// The lock object.
        path: String,
        /// What happened.
        reason: String,
    },
    /// The lock object kept changing under every attempt (released, taken
    /// over or refused a conditional write each time) until the wait ran out.
    #[error("{path} changed under each of {attempts} attempts to take it and was not taken within {waited} s; is another builder taking and releasing it in a loop, or does the store refuse conditional writes?")]
    Contended {
        /// The lock object.
        path: String,
        /// Attempts that lost a race.
        attempts: u32,
        /// Seconds waited.
        waited: u64,
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

/// What one attempt at a lock found.
enum Attempt {
    /// The lock is ours.
    Taken(StoreLock),
    /// A live holder has it (or its record cannot be read).
    Held(LockRecord),
    /// It changed in between: released, or taken over by another taker.
    Changed,
}

/// A held lock; release it with [`StoreLock::release`]. While it lives, a
/// heartbeat renews its lease.
#[derive(Debug)]
pub struct StoreLock {
    store: Store,
    path: Path,
    token: String,
    /// False when the store has no create-only writes and the lock is advisory.
    pub exclusive: bool,
    lease: Arc<Lease>,
    heartbeat: Option<tokio::task::JoinHandle<()>>,
    /// Given up by [`StoreLock::release`] (else dropping it gives it up).
    released: bool,
}

/// Tells a lock's holder whether it may still write (see [`StoreLock::guard`]).
#[derive(Debug, Clone)]
pub struct LockGuard {
    lease: Option<Arc<Lease>>,
    path: String,
}

impl LockGuard {
    /// A guard that always allows: for writes no lock protects.
    pub fn none() -> Self {
        Self {
            lease: None,
            path: String::new(),
        }
    }

    /// `Ok` while the lock is held; an error once it is lost.
    pub fn check(&self) -> Result<(), LockError> {
        match self.lease.as_ref().and_then(|lease| lease.refusal()) {
            None => Ok(()),
            Some(reason) => Err(LockError::Lost {
                path: self.path.clone(),
                reason,
            }),
        }
    }
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

/// Environment variable overriding the lease, in seconds (tests shorten it).
pub const LOCK_TTL_ENV: &str = "AGENTFINDER_LOCK_TTL_SECS";

impl LockTimes {
    /// The defaults, with the lease from `AGENTFINDER_LOCK_TTL_SECS` when set.
    pub fn from_env() -> Self {
        let mut times = Self::default();
        if let Some(secs) = std::env::var(LOCK_TTL_ENV)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|&s| s > 0)
        {
            times.ttl = Duration::from_secs(secs);
        }
        times
    }
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
        let mut changed = 0u32;
        loop {
            let held = match Self::attempt(store, &path, purpose, times).await? {
                Attempt::Taken(lock) => return Ok(lock),
                Attempt::Changed => {
                    changed += 1;
                    None
                }
                Attempt::Held(record) => Some(record),
            };
            // Every way round the loop checks the deadline and pauses, so a
            // store that keeps answering "changed" (412, 404) cannot spin.
            if started.elapsed() >= times.wait {
                return Err(match held {
                    Some(held) => LockError::Busy {
                        path: path.to_string(),
                        holder: format!("pid {} on {}", held.pid, held.host),
                        purpose: held.purpose,
                        waited: started.elapsed().as_secs(),
                        expires_at: held.expires_at,
                    },
                    None => LockError::Contended {
                        path: path.to_string(),
                        attempts: changed,
                        waited: started.elapsed().as_secs(),
                    },
                });
            }
            let pause = match held {
                Some(_) => times.poll,
                // Lost a race: try again soon, backing off to the poll pause.
                None => (Duration::from_millis(5) * 2u32.saturating_pow(changed.min(16)))
                    .min(times.poll),
            };
            tokio::time::sleep(pause).await;
        }
    }

    /// One try at taking the lock: taken, found held (by a live holder, or
    /// unreadable), or changed under us (released or taken over in between).
    async fn attempt(
        store: &Store,
        path: &Path,
        purpose: &str,
        times: LockTimes,
    ) -> Result<Attempt, LockError> {
        let error = |message: String| LockError::Store {
            path: path.to_string(),
            message: redact_text(&message),
        };
        let record = LockRecord::new(purpose, times.ttl);
        let lock = |exclusive| StoreLock::held(store, path, &record, exclusive, times.ttl);
        match put(store, path, &record, PutMode::Create).await {
            Ok(()) => return Ok(Attempt::Taken(lock(true))),
            Err(object_store::Error::NotImplemented { .. }) => {
                crate::logging::global().warn(
                    "lock",
                    format!(
                        "{} has no create-only writes; the lock {path} is advisory",
                        store.display
                    ),
                );
                put(store, path, &record, PutMode::Overwrite)
                    .await
                    .map_err(|e| error(e.to_string()))?;
                return Ok(Attempt::Taken(lock(false)));
            }
            Err(object_store::Error::AlreadyExists { .. }) => {}
            Err(e) => return Err(error(e.to_string())),
        }
        // Held: by whom, and are they still there?
        let current = read_record(store, path)
            .await
            .map_err(|e| error(e.to_string()))?;
        let Some((held, version)) = current else {
            return Ok(Attempt::Changed); // released in between
        };
        if let Some(live) = held.filter(|held| !held.is_stale()) {
            return Ok(Attempt::Held(live));
        }
        match put(store, path, &record, PutMode::Update(version)).await {
            Ok(()) => Ok(Attempt::Taken(lock(true))),
            Err(
                object_store::Error::Precondition { .. } | object_store::Error::NotFound { .. },
            ) => Ok(Attempt::Changed),
            Err(object_store::Error::NotImplemented { .. }) => {
                // A local folder: remove the stale lock, then race fairly on create.
                match store.inner.delete(path).await {
                    Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(Attempt::Changed),
                    Err(e) => Err(error(e.to_string())),
                }
            }
            Err(e) => Err(error(e.to_string())),
        }
    }

    /// A lock just taken, with its heartbeat running.
    fn held(
        store: &Store,
        path: &Path,
        record: &LockRecord,
        exclusive: bool,
        ttl: Duration,
    ) -> Self {
        let lease = Arc::new(Lease {
            expires_at: AtomicU64::new(record.expires_at),
            ttl,
            lost: Mutex::new(None),
        });
        let heartbeat = tokio::spawn(heartbeat(
            store.clone(),
            path.clone(),
            record.clone(),
            lease.clone(),
        ));
        Self {
            store: store.clone(),
            path: path.clone(),
            token: record.token.clone(),
            exclusive,
            lease,
            heartbeat: Some(heartbeat),
            released: false,
        }
    }

    /// A guard for the writes this lock protects.
    pub fn guard(&self) -> LockGuard {
        LockGuard {
            lease: Some(self.lease.clone()),
            path: self.path.to_string(),
        }
    }

    /// Stops the heartbeat and gives the lock up if this builder still
    /// holds it: a conditional update to a released record (anyone may take
    /// it), or on a store without conditional updates, a delete after
    /// checking the record is ours. A lost lock is left to its new holder.
    pub async fn release(mut self) {
        if let Some(heartbeat) = self.heartbeat.take() {
            heartbeat.abort();
        }
        self.released = true;
        give_up(&self.store, &self.path, &self.token, &self.lease).await;
    }
}

/// Gives the lock at `path` up if `token` still holds it (see
/// [`StoreLock::release`]).
async fn give_up(store: &Store, path: &Path, token: &str, lease: &Lease) {
    if lease.lost().is_some() {
        return;
    }
    let Ok(Some((record, version))) = read_record(store, path).await else {
        return;
    };
    if record.as_ref().is_none_or(|r| r.token != token) {
        return;
    }
    let released = LockRecord {
        purpose: "released".into(),
        expires_at: 0,
        ..record.unwrap_or_else(|| LockRecord::new("released", Duration::ZERO))
    };
    match put(store, path, &released, PutMode::Update(version)).await {
        Ok(()) | Err(object_store::Error::Precondition { .. }) => {}
        Err(_) => {
            let _ = store.inner.delete(path).await;
        }
    }
}

impl Drop for StoreLock {
    /// A lock dropped unreleased (its work stopped by a timeout, or a
    /// panic) is given up in the background on the runtime it was taken
    /// on, so a retry need not wait out its lease.
    fn drop(&mut self) {
        if let Some(heartbeat) = self.heartbeat.take() {
            heartbeat.abort();
        }
        if self.released {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return; // no runtime left: the lease runs out instead
        };
        let (store, path, token, lease) = (
            self.store.clone(),
            self.path.clone(),
            std::mem::take(&mut self.token),
            self.lease.clone(),
        );
        runtime.spawn(async move { give_up(&store, &path, &token, &lease).await });
    }
}

/// Runs `work` under `lock` and releases the lock afterwards, whatever
/// `work` returned, so that no error path leaves a lock behind.
pub async fn with_lock<T, E>(
    lock: StoreLock,
    work: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, E> {
    let result = work.await;
    lock.release().await;
    result
}

#[cfg(test)]
mod tests;
