//! The release binary stays small: `[profile.release]` carries no debug
//! info (with line tables the binary was 306 MB; without, 58 MiB), and the
//! `profiling` profile keeps line tables for perf and flamegraphs.

use std::path::{Path, PathBuf};

/// The largest release binary accepted, in bytes.
const MAX_RELEASE_BYTES: u64 = 60 * 1024 * 1024;

fn manifest() -> toml::Table {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn release_builds_carry_no_debug_info_and_profiling_builds_keep_line_tables() {
    let manifest = manifest();
    let profiles = manifest["profile"].as_table().expect("[profile] tables");
    let release = profiles["release"].as_table().expect("[profile.release]");
    let no_debug = match release.get("debug") {
        None => true,
        Some(toml::Value::Boolean(on)) => !on,
        Some(toml::Value::Integer(level)) => *level == 0,
        Some(toml::Value::String(level)) => level == "none",
        Some(_) => false,
    };
    assert!(
        no_debug,
        "[profile.release] debug = {:?}: debug info made the binary 306 MB; use --profile profiling",
        release.get("debug")
    );
    let strip_off = match release.get("strip") {
        Some(toml::Value::Boolean(on)) => !on,
        Some(toml::Value::String(what)) => what == "none",
        _ => false,
    };
    assert!(
        !strip_off,
        "[profile.release] strip is off: std's debug info would ship"
    );
    let profiling = profiles["profiling"]
        .as_table()
        .expect("[profile.profiling], for perf and flamegraphs");
    assert_eq!(profiling["inherits"].as_str(), Some("release"));
    assert_eq!(profiling["debug"].as_str(), Some("line-tables-only"));
}

/// `target/release/agentfinder-skills` beside this test's own target folder.
fn release_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/deps/<test>: up to target/.
    let target = exe.parent()?.parent()?.parent()?;
    Some(target.join("release/agentfinder-skills"))
}

#[test]
fn a_release_binary_built_since_the_profile_changed_is_at_most_60_mib() {
    let Some(binary) = release_binary().filter(|b| b.is_file()) else {
        eprintln!("skipped: no release binary (cargo build --release)");
        return;
    };
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    if modified(&binary) < modified(&manifest) {
        eprintln!("skipped: {} is older than Cargo.toml", binary.display());
        return;
    }
    let size = std::fs::metadata(&binary).unwrap().len();
    assert!(
        size <= MAX_RELEASE_BYTES,
        "{} is {size} bytes ({:.1} MiB), over 60 MiB",
        binary.display(),
        size as f64 / 1048576.0
    );
}
