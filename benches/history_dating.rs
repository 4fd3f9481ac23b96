//! What dating every skill file by its last change costs on a cold build:
//! the first-parent history walk of `source::Snapshot::last_changed`, alone,
//! over a local git repository at HEAD.
//!
//! `cargo bench --bench history_dating -- REPO [DEPTH...]` prints, for each
//! depth (commits walked at most; default: the configured default), the
//! skill files, how many were dated exactly and how many "at or before" the
//! walk's oldest commit, and the seconds it took.

use std::time::Instant;

use agentfinder_skills::config::tables::WalkConfig;
use agentfinder_skills::source::{open, Fetching, SourceSpec};
use agentfinder_skills::walk::{skill_entries, WalkRules};

/// The value, or the error printed and exit status 1.
fn or_exit<T, E: std::fmt::Display>(result: Result<T, E>) -> T {
    result.unwrap_or_else(|e| {
        eprintln!("history_dating: {e}");
        std::process::exit(1)
    })
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let Some(repo) = args.first() else {
        eprintln!("usage: cargo bench --bench history_dating -- REPO [DEPTH...]");
        return;
    };
    let walk = WalkConfig::default();
    let depths: Vec<usize> = match args[1..].iter().map(|d| d.parse()).collect() {
        Ok(depths) if !args[1..].is_empty() => depths,
        _ => vec![walk.history_depth],
    };
    let fetching = Fetching {
        cache_dir: std::env::temp_dir(),
        default_branch: "main".into(),
        connect_timeout: std::time::Duration::from_secs(10),
        // A URL is cloned whole: each depth measured walks its own part.
        history_depth: 0,
    };
    let snapshot = or_exit(open(&SourceSpec::parse(repo), None, &fetching));
    let rules = or_exit(WalkRules::new(&walk.include, &walk.exclude_dirs));
    let entries = or_exit(snapshot.list());
    let skills = skill_entries(&entries, &rules);
    let paths: Vec<&str> = skills.iter().map(|e| e.path.as_str()).collect();
    for depth in depths {
        let started = Instant::now();
        let changes = or_exit(snapshot.last_changed(&paths, None, depth));
        let seconds = started.elapsed().as_secs_f64();
        let bounded = changes.values().filter(|c| c.at_or_before).count();
        println!(
            "history_dating: commit={} skills={} depth={depth} exact={} at_or_before={bounded} undated={} seconds={seconds:.2}",
            &snapshot.version.id[..12.min(snapshot.version.id.len())],
            paths.len(),
            changes.len() - bounded,
            paths.len() - changes.len(),
        );
    }
}
