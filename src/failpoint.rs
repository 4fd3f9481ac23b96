//! Named crash points for crash-safety tests.
//!
//! When `AGENTFINDER_FAILPOINT` names a point, the process aborts there, as a
//! `kill -9` would stop it: no destructors, no flushing. Unset, it costs one
//! environment lookup per point.

/// Environment variable naming the point to abort at.
pub const FAILPOINT_ENV: &str = "AGENTFINDER_FAILPOINT";

/// Aborts the process if `AGENTFINDER_FAILPOINT` equals `name`.
pub fn failpoint(name: &str) {
    if std::env::var_os(FAILPOINT_ENV).is_some_and(|v| v == name) {
        eprintln!("failpoint {name}: aborting");
        std::process::abort();
    }
}

/// Every fail point, in the order a build that writes and promotes passes them.
pub const FAILPOINTS: [&str; 11] = [
    "commit-after-lock",
    "commit-after-hf-skills.ndjson",
    "commit-after-ai-catalog.json",
    "commit-after-manifest.json",
    "commit-after-success",
    "promote-after-lock",
    "promote-after-remove-success",
    "promote-after-ai-catalog.json",
    "promote-after-hf-skills.ndjson",
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
