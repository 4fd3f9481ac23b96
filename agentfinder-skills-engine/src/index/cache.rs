//! Housekeeping of the local index cache: which builds are under way,
//! which versions were used last, and removing what is left over.
//!
//! A build writes into `<cache>/.build-<random>/` and holds an exclusive
//! lock on its `.lock` file until it renames the folder into place; a
//! build that was killed leaves its folder with the lock free, and
//! [`tidy`] removes it. Every open of a version touches its `used` file;
//! [`tidy`] keeps the `keep` versions used last (the one in use among
//! them) and removes the others, so a long-running `serve` whose store is
//! promoted every day keeps two copies, not one per day.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Prefix of a build's temporary folder.
pub const BUILD_PREFIX: &str = ".build-";
/// The file a build holds locked while it runs.
pub const BUILD_LOCK: &str = ".lock";
/// The file whose modification time says when a version was last opened.
pub const USED: &str = "used";
/// Versions kept by default: the one in use and the previous one.
pub const DEFAULT_KEEP: usize = 2;

/// A build's hold on its temporary folder, released when dropped.
#[derive(Debug)]
pub struct BuildLock {
    _file: File,
}

impl BuildLock {
    /// Takes the lock of the build folder `dir` (just made, so it is free).
    pub fn take(dir: &Path) -> std::io::Result<Self> {
        let file = File::create(dir.join(BUILD_LOCK))?;
        file.lock()?;
        Ok(Self { _file: file })
    }
}

/// The right to build one key's folder, held by one build at a time in
/// this process and in any other sharing the cache folder
/// (`<cache>/<key>.lock`, an exclusive file lock, released when dropped
/// or when its process dies). The file is removed when the lock is
/// dropped: a build that waited on it then finds the folder done, and one
/// that comes later takes a new file, finds the folder done too, or
/// (after a failed build) builds beside another; the first rename wins.
#[derive(Debug)]
pub struct KeyLock {
    path: PathBuf,
    _file: File,
}

impl KeyLock {
    /// Waits (blocking) until no other build of `key` holds its lock, then
    /// holds it.
    pub fn wait(cache: &Path, key: &str) -> std::io::Result<Self> {
        let path = cache.join(format!("{key}{KEY_LOCK_SUFFIX}"));
        let file = File::create(&path)?;
        file.lock()?;
        Ok(Self { path, _file: file })
    }
}

impl Drop for KeyLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Suffix of a key's build lock file beside its folder.
pub const KEY_LOCK_SUFFIX: &str = ".lock";

/// Records that the version in `dir` was opened now.
pub fn mark_used(dir: &Path) {
    let _ = File::create(dir.join(USED)).and_then(|f| f.set_modified(SystemTime::now()));
}

/// What [`tidy`] removed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tidied {
    /// Folders of builds that were killed.
    pub abandoned_builds: Vec<PathBuf>,
    /// Versions past the ones kept.
    pub old_versions: Vec<PathBuf>,
}

/// Removes from `cache` the folders of killed builds and the versions
/// past the `keep` used last; `in_use` (a version folder) is always kept.
/// A folder that cannot be removed is left for the next time.
pub fn tidy(cache: &Path, in_use: &Path, keep: usize) -> Tidied {
    let mut tidied = Tidied::default();
    let Ok(entries) = std::fs::read_dir(cache) else {
        return tidied;
    };
    let mut versions: Vec<(SystemTime, PathBuf)> = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !path.is_dir() {
            continue;
        }
        if name.starts_with(BUILD_PREFIX) {
            if build_is_abandoned(&path) && std::fs::remove_dir_all(&path).is_ok() {
                tidied.abandoned_builds.push(path);
            }
        } else if path.join("meta.json").is_file() {
            versions.push((last_used(&path), path));
        }
    }
    versions.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut kept = usize::from(versions.iter().any(|(_, p)| p == in_use));
    for (_, path) in versions {
        if path == in_use {
            continue;
        }
        if kept < keep.max(1) {
            kept += 1;
            continue;
        }
        if std::fs::remove_dir_all(&path).is_ok() {
            tidied.old_versions.push(path);
        }
    }
    tidied
}

/// Whether the build in `dir` is not running: its lock is free, or it
/// has no lock file and is a day old (killed before it took one).
fn build_is_abandoned(dir: &Path) -> bool {
    match File::open(dir.join(BUILD_LOCK)) {
        Ok(file) => file.try_lock().is_ok(),
        Err(_) => std::fs::metadata(dir)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(24 * 3600)),
    }
}

/// When the version in `dir` was last opened (else built).
fn last_used(dir: &Path) -> SystemTime {
    [dir.join(USED), dir.join("meta.json")]
        .iter()
        .find_map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(cache: &Path, name: &str, age_seconds: u64) -> PathBuf {
        let dir = cache.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("meta.json"), "{}").unwrap();
        let when = SystemTime::now() - Duration::from_secs(age_seconds);
        File::create(dir.join(USED))
            .unwrap()
            .set_modified(when)
            .unwrap();
        dir
    }

    #[test]
    fn keeps_the_versions_used_last_and_the_one_in_use() {
        let cache = tempfile::tempdir().unwrap();
        let newest = version(cache.path(), "a", 10);
        let previous = version(cache.path(), "b", 100);
        let older = version(cache.path(), "c", 1_000);
        let oldest_in_use = version(cache.path(), "d", 10_000);
        let tidied = tidy(cache.path(), &oldest_in_use, 2);
        assert!(oldest_in_use.exists() && newest.exists());
        assert!(!previous.exists() && !older.exists());
        assert_eq!(tidied.old_versions.len(), 2);
        // Marking a version used makes it the newest.
        let again = version(cache.path(), "e", 50_000);
        mark_used(&again);
        tidy(cache.path(), &oldest_in_use, 2);
        assert!(again.exists() && oldest_in_use.exists() && !newest.exists());
    }

    #[test]
    fn removes_a_killed_build_but_not_one_under_way() {
        let cache = tempfile::tempdir().unwrap();
        let in_use = version(cache.path(), "v", 0);
        let running = cache.path().join(".build-running");
        let killed = cache.path().join(".build-killed");
        for dir in [&running, &killed] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let held = BuildLock::take(&running).unwrap();
        drop(BuildLock::take(&killed).unwrap());
        let tidied = tidy(cache.path(), &in_use, 2);
        assert_eq!(tidied.abandoned_builds, vec![killed.clone()]);
        assert!(running.exists() && !killed.exists() && in_use.exists());
        drop(held);
        tidy(cache.path(), &in_use, 2);
        assert!(!running.exists());
    }
}
