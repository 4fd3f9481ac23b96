//! Ctrl-C (SIGINT) and SIGTERM during a build or a backfill: the binary
//! catches the first one and calls [`request`]; the build then stops where
//! it can stop cleanly (before the next batch it parses or embeds, before
//! it waits for a lock or starts promoting), keeps the vectors it embedded
//! (the cache is flushed after every slice of the model's work), removes
//! its staging folder and ends with [`super::BuildError::Interrupted`].
//! A promotion under way runs to its end, as a deadline lets it (stopped
//! halfway it would leave `latest/` without `_SUCCESS`).
//!
//! The state is the process's: a signal is sent to a process, not to one
//! of its builds.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// A signal that asks the process to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM (`kill`, a job's cancellation, a container's stop).
    Terminate,
}

impl Signal {
    /// Its name, as `kill -l` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Interrupt => "SIGINT",
            Self::Terminate => "SIGTERM",
        }
    }

    /// The exit code of a process it stopped: 128 + the signal's number,
    /// as a shell reports a process the signal killed.
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Interrupt => 130,
            Self::Terminate => 143,
        }
    }
}

static REQUESTED: AtomicBool = AtomicBool::new(false);
/// 0: none; 1: SIGINT; 2: SIGTERM.
static SIGNAL: AtomicU8 = AtomicU8::new(0);
static NOTIFY: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Records that `signal` asked the process to stop, and wakes whatever
/// waits in [`wait`]. The first signal recorded is the one reported.
pub fn request(signal: Signal) {
    let code = match signal {
        Signal::Interrupt => 1,
        Signal::Terminate => 2,
    };
    let _ = SIGNAL.compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst);
    REQUESTED.store(true, Ordering::SeqCst);
    NOTIFY.notify_waiters();
}

/// The signal that asked the process to stop, if one did.
pub fn requested() -> Option<Signal> {
    if !REQUESTED.load(Ordering::SeqCst) {
        return None;
    }
    match SIGNAL.load(Ordering::SeqCst) {
        2 => Some(Signal::Terminate),
        _ => Some(Signal::Interrupt),
    }
}

/// The flag [`request`] sets, for work that checks it between slices
/// without knowing of builds (the embedder).
pub fn flag() -> &'static AtomicBool {
    &REQUESTED
}

/// Waits until a signal asks the process to stop; returns at once when
/// one already has.
pub async fn wait() -> Signal {
    loop {
        let notified = NOTIFY.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Some(signal) = requested() {
            return signal;
        }
        notified.await;
    }
}

/// Runs `work` unless a signal asks the process to stop first: then
/// `work` is dropped (it must be safe to drop: waiting for a lock, opening
/// a source) and the build ends with [`super::BuildError::Interrupted`].
pub async fn unless_interrupted<T>(
    work: impl std::future::Future<Output = Result<T, super::BuildError>>,
) -> Result<T, super::BuildError> {
    if let Some(signal) = requested() {
        return Err(super::BuildError::Interrupted(signal));
    }
    tokio::select! {
        done = work => done,
        signal = wait() => Err(super::BuildError::Interrupted(signal)),
    }
}
