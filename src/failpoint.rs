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
