//! A held lock's lease: what the holder and its heartbeat share, and the
//! heartbeat that renews it every third of it with a conditional update
//! until the lock is released or lost.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use object_store::path::Path;
use object_store::PutMode;

use agentfinder_skills_reader::store::{redact_text, Store};

use super::record::{put, read_record, unix_now, LockRecord};
use crate::time::unix_millis as unix_now_ms;

/// What the holder and its heartbeat share.
#[derive(Debug)]
pub(super) struct Lease {
    /// When the lease runs out, Unix seconds (as last written).
    pub(super) expires_at: AtomicU64,
    /// The lease's length.
    pub(super) ttl: Duration,
    /// Why the lock was lost, once it is.
    pub(super) lost: Mutex<Option<String>>,
}

impl Lease {
    fn lose(&self, reason: String) {
        self.lost
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get_or_insert(reason);
    }

    /// Why the lock was lost, if it was.
    pub(super) fn lost(&self) -> Option<String> {
        self.lost
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Why the holder may no longer write, if it may not. The lease is
    /// treated as over a sixth of it early, so a write begun just before
    /// never ends after another builder could take the lock.
    pub(super) fn refusal(&self) -> Option<String> {
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

/// Renews the lease every third of it until the lock is released or lost.
pub(super) async fn heartbeat(store: Store, path: Path, mut record: LockRecord, lease: Arc<Lease>) {
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
