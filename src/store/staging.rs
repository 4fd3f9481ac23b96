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
