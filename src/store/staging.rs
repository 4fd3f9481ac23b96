//! Artifact files staged on local disk while they are produced, hashed as
//! they are written, so a build's memory does not grow with its output.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use agentfinder_skills_reader::contract::FileDigest;

/// A file being written to disk, with its sha256 and size kept up to date.
pub struct HashingFile {
    file: BufWriter<File>,
    hasher: Sha256,
    size: u64,
    path: PathBuf,
}

impl HashingFile {
    /// Creates `dir/name`.
    pub fn create(dir: &Path, name: &str) -> std::io::Result<Self> {
        let path = dir.join(name);
        Ok(Self {
            file: BufWriter::with_capacity(1 << 20, File::create(&path)?),
            hasher: Sha256::new(),
            size: 0,
            path,
        })
    }

    /// Flushes and returns the finished file.
    pub fn finish(mut self) -> std::io::Result<StagedFile> {
        self.file.flush()?;
        Ok(StagedFile {
            path: self.path,
            digest: FileDigest {
                sha256: hex::encode(self.hasher.finalize()),
                size: self.size,
            },
        })
    }
}

impl Write for HashingFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = self.file.write(buf)?;
        self.hasher.update(&buf[..written]);
        self.size += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// A finished staged file.
#[derive(Debug, Clone)]
pub struct StagedFile {
    /// Where it is on disk.
    pub path: PathBuf,
    /// Its sha256 and size.
    pub digest: FileDigest,
}

/// Prefix of the staging folders builds and promotions make beside a local
/// store's files.
pub const STAGING_PREFIX: &str = ".staging-";

/// The file in a staging folder that its process holds locked for as long
/// as it uses the folder.
pub const OWNER_FILE: &str = ".owner";

/// A staging folder that says it is in use: removed when dropped, and
/// while it lives its [`OWNER_FILE`] is locked (`flock`), so another
/// process (or another build of this one) tells a live build's folder from
/// one a crash left ([`remove_abandoned`]). The lock ends with the
/// process, however it ends.
#[derive(Debug)]
pub struct Staging {
    dir: tempfile::TempDir,
    _owner: File,
}

impl Staging {
    /// Creates `<root>/<prefix><random>/` and takes its owner lock.
    pub fn create_in(root: &Path, prefix: &str) -> std::io::Result<Self> {
        let dir = tempfile::Builder::new().prefix(prefix).tempdir_in(root)?;
        // Locked under another name first, then renamed: a folder whose
        // owner file exists is always locked while its build lives.
        let taking = dir.path().join(".owner-taking");
        let owner = File::create(&taking)?;
        owner.try_lock().map_err(|e| match e {
            std::fs::TryLockError::Error(e) => e,
            std::fs::TryLockError::WouldBlock => std::io::Error::other("locked by another"),
        })?;
        std::fs::rename(&taking, dir.path().join(OWNER_FILE))?;
        Ok(Self { dir, _owner: owner })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Removes the folders of `dir` whose names start with `prefix` that no
/// live process uses: their [`OWNER_FILE`] is not locked (the build that
/// made it was killed, or stopped by a second Ctrl-C), or, without one
/// (made by an older version, or killed before it took its lock), they are
/// over a day old. Returns the folders removed; one that cannot be removed
/// is left for the next time.
pub fn remove_abandoned(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let day = std::time::Duration::from_secs(24 * 3600);
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if !entry.file_name().to_string_lossy().starts_with(prefix) || !path.is_dir() {
            continue;
        }
        // Held (locked by us) while the folder is removed.
        let owner = File::open(path.join(OWNER_FILE));
        let abandoned = match &owner {
            Ok(file) => file.try_lock().is_ok(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > day)),
            Err(_) => false,
        };
        if abandoned && std::fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// Removes the entries of `dir` whose names start with one of `prefixes` and
/// that are over a day old: staging a killed process left behind, never read
/// (a running process's own is younger).
pub fn remove_stale(dir: &Path, prefixes: &[&str]) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let day = std::time::Duration::from_secs(24 * 3600);
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let stale = prefixes.iter().any(|p| name.starts_with(p))
            && entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > day));
        if stale {
            let path = entry.path();
            let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_folders_no_live_build_owns_are_removed() {
        let root = tempfile::tempdir().unwrap();
        let live = Staging::create_in(root.path(), STAGING_PREFIX).unwrap();
        let live_path = live.path().to_path_buf();
        // A crash: the folder stays, its lock is gone with its process.
        let crashed = Staging::create_in(root.path(), STAGING_PREFIX).unwrap();
        let crashed_path = crashed.dir.path().to_path_buf();
        let Staging { dir, _owner } = crashed;
        let _ = dir.keep();
        drop(_owner);
        // Made by an older version: no owner file; a young one is kept.
        let young = root.path().join(".staging-young");
        std::fs::create_dir(&young).unwrap();
        let other = root.path().join("commits");
        std::fs::create_dir(&other).unwrap();

        let removed = remove_abandoned(root.path(), STAGING_PREFIX);
        assert_eq!(removed, vec![crashed_path.clone()]);
        assert!(!crashed_path.exists());
        assert!(
            live_path.join(OWNER_FILE).exists(),
            "a live build's folder is kept"
        );
        assert!(young.exists() && other.exists());
        drop(live);
        assert!(!live_path.exists(), "removed when dropped");
    }

    fn age(path: &Path, days: u64) {
        let when = std::time::SystemTime::now() - std::time::Duration::from_secs(days * 24 * 3600);
        File::open(path).unwrap().set_modified(when).unwrap();
    }

    #[test]
    fn only_old_leftovers_with_the_prefixes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name);
        for name in [".tmpOLD", ".tmpNEW", "kept.f32"] {
            std::fs::write(path(name), b"x").unwrap();
        }
        std::fs::create_dir(path(".staging-old")).unwrap();
        std::fs::write(path(".staging-old/file"), b"x").unwrap();
        age(&path(".tmpOLD"), 2);
        age(&path("kept.f32"), 2);
        age(&path(".staging-old"), 2);

        remove_stale(dir.path(), &[".tmp", ".staging-"]);
        assert!(!path(".tmpOLD").exists());
        assert!(!path(".staging-old").exists());
        assert!(path(".tmpNEW").exists(), "a running process's own is kept");
        assert!(path("kept.f32").exists(), "other names are kept");
    }
}
