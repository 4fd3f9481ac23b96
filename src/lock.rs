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

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
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
}

/// What the holder and its heartbeat share.
#[derive(Debug)]
struct Lease {
    /// When the lease runs out, Unix seconds (as last written).
    expires_at: AtomicU64,
    /// The lease's length.
    ttl: Duration,
    /// Why the lock was lost, once it is.
    lost: Mutex<Option<String>>,
}

impl Lease {
    fn lose(&self, reason: String) {
        self.lost
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get_or_insert(reason);
    }

    /// Why the lock was lost, if it was.
    fn lost(&self) -> Option<String> {
        self.lost
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Why the holder may no longer write, if it may not. The lease is
    /// treated as over a sixth of it early, so a write begun just before
    /// never ends after another builder could take the lock.
    fn refusal(&self) -> Option<String> {
        if let Some(reason) = self.lost() {
            return Some(reason);
        }
        let margin = (self.ttl / 6).as_millis() as u64;
        let expires_ms = self.expires_at.load(Ordering::SeqCst) * 1000;
        (unix_now_ms() + margin >= expires_ms).then(|| {
            format!(
                "its lease ran out at {} (Unix time) before it could be renewed; another builder may hold it now",
                self.expires_at.load(Ordering::SeqCst)
            )
        })
    }
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
        if self.lease.lost().is_some() {
            return;
        }
        let Ok(Some((record, version))) = read_record(&self.store, &self.path).await else {
            return;
        };
        if record.as_ref().is_none_or(|r| r.token != self.token) {
            return;
        }
        let released = LockRecord {
            purpose: "released".into(),
            expires_at: 0,
            ..record.unwrap_or_else(|| LockRecord::new("released", Duration::ZERO))
        };
        match put(&self.store, &self.path, &released, PutMode::Update(version)).await {
            Ok(()) | Err(object_store::Error::Precondition { .. }) => {}
            Err(_) => {
                let _ = self.store.inner.delete(&self.path).await;
            }
        }
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        if let Some(heartbeat) = self.heartbeat.take() {
            heartbeat.abort();
        }
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

/// The lock record at `path` and its version; `None` when there is none.
async fn read_record(
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

/// Renews the lease every third of it until the lock is released or lost.
async fn heartbeat(store: Store, path: Path, mut record: LockRecord, lease: Arc<Lease>) {
    let every = (lease.ttl / 3).max(Duration::from_millis(50));
    loop {
        tokio::time::sleep(every).await;
        if crate::failpoint::paused() {
            continue; // a paused process: its heartbeat stops too
        }
        if let Some(reason) = lease.refusal() {
            lease.lose(reason);
            return;
        }
        match renew(&store, &path, &mut record, lease.ttl).await {
            Ok(()) => lease.expires_at.store(record.expires_at, Ordering::SeqCst),
            Err(Renewal::Lost(reason)) => {
                lease.lose(reason);
                return;
            }
            // A passing store failure: try again at the next beat; the
            // guard refuses writes if the lease runs out meanwhile.
            Err(Renewal::Failed(message)) => crate::logging::global().warn(
                "lock",
                format!("renewing {path}: {}", redact_text(&message)),
            ),
        }
    }
}

enum Renewal {
    Lost(String),
    Failed(String),
}

/// Extends the lease of `record` with a conditional update of the version
/// read (a plain overwrite on a store without conditional updates, after
/// checking the record is still ours).
async fn renew(
    store: &Store,
    path: &Path,
    record: &mut LockRecord,
    ttl: Duration,
) -> Result<(), Renewal> {
    let current = read_record(store, path)
        .await
        .map_err(|e| Renewal::Failed(e.to_string()))?;
    let Some((held, version)) = current else {
        return Err(Renewal::Lost("its record was deleted".into()));
    };
    match held {
        Some(held) if held.token == record.token => {}
        Some(held) => {
            return Err(Renewal::Lost(format!(
                "pid {} on {} took it over ({})",
                held.pid, held.host, held.purpose
            )))
        }
        None => return Err(Renewal::Lost("its record is unreadable".into())),
    }
    let mut renewed = record.clone();
    renewed.expires_at = unix_now() + ttl.as_secs().max(1);
    match put(store, path, &renewed, PutMode::Update(version)).await {
        Ok(()) => {}
        Err(object_store::Error::NotImplemented { .. }) => {
            put(store, path, &renewed, PutMode::Overwrite)
                .await
                .map_err(|e| Renewal::Failed(e.to_string()))?;
        }
        Err(object_store::Error::Precondition { .. } | object_store::Error::NotFound { .. }) => {
            return Err(Renewal::Lost("it changed while being renewed".into()))
        }
        Err(e) => return Err(Renewal::Failed(e.to_string())),
    }
    *record = renewed;
    Ok(())
}

async fn put(
    store: &Store,
    path: &Path,
    record: &LockRecord,
    mode: PutMode,
) -> Result<(), object_store::Error> {
    let bytes = Bytes::from(serde_json::to_vec(record).unwrap_or_default());
    crate::store::put::put_raw(store, path, bytes, mode).await
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
    crate::time::unix_seconds().max(0) as u64
}

use crate::time::unix_millis as unix_now_ms;

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

    /// A store whose lock always exists when created yet is never there
    /// when read: each attempt loses a race, forever.
    #[derive(Debug)]
    struct AlwaysChanged(object_store::memory::InMemory);

    impl std::fmt::Display for AlwaysChanged {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("always-changed")
        }
    }

    #[async_trait::async_trait]
    impl object_store::ObjectStore for AlwaysChanged {
        async fn put_opts(
            &self,
            location: &Path,
            payload: object_store::PutPayload,
            opts: object_store::PutOptions,
        ) -> object_store::Result<object_store::PutResult> {
            if opts.mode == PutMode::Create {
                return Err(object_store::Error::AlreadyExists {
                    path: location.to_string(),
                    source: "held".into(),
                });
            }
            self.0.put_opts(location, payload, opts).await
        }
        async fn put_multipart_opts(
            &self,
            location: &Path,
            opts: object_store::PutMultipartOptions,
        ) -> object_store::Result<Box<dyn object_store::MultipartUpload>> {
            self.0.put_multipart_opts(location, opts).await
        }
        async fn get_opts(
            &self,
            location: &Path,
            _options: object_store::GetOptions,
        ) -> object_store::Result<object_store::GetResult> {
            Err(object_store::Error::NotFound {
                path: location.to_string(),
                source: "released".into(),
            })
        }
        fn delete_stream(
            &self,
            locations: futures::stream::BoxStream<'static, object_store::Result<Path>>,
        ) -> futures::stream::BoxStream<'static, object_store::Result<Path>> {
            self.0.delete_stream(locations)
        }
        fn list(
            &self,
            prefix: Option<&Path>,
        ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>>
        {
            self.0.list(prefix)
        }
        async fn list_with_delimiter(
            &self,
            prefix: Option<&Path>,
        ) -> object_store::Result<object_store::ListResult> {
            self.0.list_with_delimiter(prefix).await
        }
        async fn copy_opts(
            &self,
            from: &Path,
            to: &Path,
            options: object_store::CopyOptions,
        ) -> object_store::Result<()> {
            self.0.copy_opts(from, to, options).await
        }
    }

    #[test]
    fn a_lock_that_keeps_changing_is_given_up_at_the_deadline_without_spinning() {
        let store = Store {
            inner: Arc::new(AlwaysChanged(object_store::memory::InMemory::new())),
            display: "always-changed".into(),
            local_root: None,
        };
        // On a thread of its own, so that a loop that never yields fails
        // this test instead of hanging it.
        let (sent, answer) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .unwrap();
            let taken = runtime.block_on(StoreLock::acquire(&store, "latest", "promote", quick()));
            let _ = sent.send(taken.map(|_| ()));
        });
        let refused = answer
            .recv_timeout(Duration::from_secs(10))
            .expect("acquire neither took the lock nor gave up in 10 s")
            .unwrap_err();
        match refused {
            LockError::Contended { attempts, .. } => {
                // Paused between attempts: a spinning loop makes thousands.
                assert!((2..100).contains(&attempts), "{attempts} attempts");
            }
            other => panic!("{other}"),
        }
    }
}
