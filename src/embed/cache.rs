//! Vectors by (text digest, model, revision), kept in one local file per
//! model and revision, so a rebuild or a backfill embeds only new text.
//!
//! The file is a sequence of records: 32 bytes of sha256 of the text, then
//! the vector as little-endian f32s. New records are appended; a record cut
//! short by a crash is ignored on the next open.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The digest a text is cached under.
pub fn text_digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// An open cache.
pub struct VectorCache {
    path: PathBuf,
    dimensions: usize,
    vectors: HashMap<[u8; 32], Vec<f32>>,
    fresh: Vec<([u8; 32], Vec<f32>)>,
}

impl VectorCache {
    /// Opens (or starts) the cache of `model` at `revision` in `dir`.
    pub fn open(
        dir: &Path,
        model: &str,
        revision: &str,
        dimensions: usize,
    ) -> std::io::Result<Self> {
        let name: String = format!("{model}@{revision}")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '@' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = dir.join(format!("{name}.f32"));
        let record = 32 + dimensions * 4;
        let mut vectors = HashMap::new();
        if let Ok(bytes) = std::fs::read(&path) {
            for chunk in bytes.chunks_exact(record) {
                let mut digest = [0u8; 32];
                digest.copy_from_slice(&chunk[..32]);
                let vector = chunk[32..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                vectors.insert(digest, vector);
            }
        }
        Ok(Self {
            path,
            dimensions,
            vectors,
            fresh: Vec::new(),
        })
    }

    /// The cached vector of a text.
    pub fn get(&self, digest: &[u8; 32]) -> Option<&[f32]> {
        self.vectors.get(digest).map(Vec::as_slice)
    }

    /// Records a new vector (written by [`VectorCache::flush`]).
    pub fn insert(&mut self, digest: [u8; 32], vector: Vec<f32>) {
        if vector.len() == self.dimensions && !self.vectors.contains_key(&digest) {
            self.fresh.push((digest, vector.clone()));
            self.vectors.insert(digest, vector);
        }
    }

    /// Appends the new vectors to the file.
    pub fn flush(&mut self) -> std::io::Result<()> {
        if self.fresh.is_empty() {
            return Ok(());
        }
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = std::io::BufWriter::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)?,
        );
        for (digest, vector) in self.fresh.drain(..) {
            file.write_all(&digest)?;
            for value in vector {
                file.write_all(&value.to_le_bytes())?;
            }
        }
        file.flush()
    }

    /// Vectors held.
    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    /// Whether the cache holds nothing.
    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_survive_a_reopen_and_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = VectorCache::open(dir.path(), "org/model", "abc", 3).unwrap();
        cache.insert(text_digest("a"), vec![1.0, 2.0, 3.0]);
        cache.insert(text_digest("b"), vec![4.0, 5.0, 6.0]);
        cache.flush().unwrap();
        // A crash in the middle of an append leaves a partial record.
        let file = dir.path().join("org_model@abc.f32");
        let mut bytes = std::fs::read(&file).unwrap();
        bytes.extend_from_slice(&[1, 2, 3]);
        std::fs::write(&file, bytes).unwrap();
        let cache = VectorCache::open(dir.path(), "org/model", "abc", 3).unwrap();
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get(&text_digest("b")), Some(&[4.0, 5.0, 6.0][..]));
        assert!(VectorCache::open(dir.path(), "org/model", "other", 3)
            .unwrap()
            .is_empty());
    }
}
