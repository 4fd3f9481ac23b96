//! Named crash and pause points for crash-safety tests.
//!
//! When `AGENTFINDER_FAILPOINT` names a point, the process aborts there, as a
//! `kill -9` would stop it: no destructors, no flushing. When
//! `AGENTFINDER_PAUSE` is `<point>:<seconds>`, the process freezes there for
//! that long, as a stopped process or a suspended machine would: the
//! thread sleeps and lock heartbeats skip their beats. Unset, each costs one
//! environment lookup per point.

use std::sync::atomic::{AtomicBool, Ordering};

/// Environment variable naming the point to abort at.
pub const FAILPOINT_ENV: &str = "AGENTFINDER_FAILPOINT";
/// Environment variable naming a point to freeze at, as `<point>:<seconds>`.
pub const PAUSE_ENV: &str = "AGENTFINDER_PAUSE";

static PAUSED: AtomicBool = AtomicBool::new(false);

/// Aborts the process if `AGENTFINDER_FAILPOINT` equals `name`; freezes it
/// if `AGENTFINDER_PAUSE` names `name`.
pub fn failpoint(name: &str) {
    if std::env::var_os(FAILPOINT_ENV).is_some_and(|v| v == name) {
        eprintln!("failpoint {name}: aborting");
        std::process::abort();
    }
    let Some(pause) = std::env::var(PAUSE_ENV).ok() else {
        return;
    };
    let Some((point, seconds)) = pause.rsplit_once(':') else {
        return;
    };
    if point == name {
        let seconds: f64 = seconds.parse().unwrap_or(0.0);
        eprintln!("failpoint {name}: pausing {seconds} s");
        PAUSED.store(true, Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_secs_f64(seconds.max(0.0)));
        PAUSED.store(false, Ordering::SeqCst);
    }
}

/// Whether the process is frozen at a pause point (heartbeats skip).
pub fn paused() -> bool {
    PAUSED.load(Ordering::SeqCst)
}

/// Every fail point, in the order a build that writes and promotes passes them.
pub const FAILPOINTS: [&str; 12] = [
    "commit-after-lock",
    "commit-after-pack",
    "commit-after-parts",
    "commit-after-manifest.json",
    "commit-after-success",
    "promote-after-lock",
    "promote-after-remove-success",
    "promote-after-hf-skills.ndjson",
    "promote-after-ai-catalog.json",
    "promote-after-findings.ndjson",
    "promote-after-manifest.json",
    "promote-after-latest-success",
];

/// Fail points in sharing the vector cache through the store: after a new
/// segment is uploaded, after a merged segment is uploaded, and after the
/// first merged-away segment is deleted.
pub const SHARE_FAILPOINTS: [&str; 3] = [
    "share-after-segment",
    "share-after-merge",
    "share-after-first-delete",
];
