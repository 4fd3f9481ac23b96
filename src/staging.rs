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
