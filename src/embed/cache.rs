//! Vectors by (text digest, model, revision), kept in one local file per
//! model and revision, so a rebuild or a backfill embeds only new text.
//!
//! The file is a sequence of records: 32 bytes of sha256 of the text, then
//! the vector as little-endian f32s. Only an index (digest -> offset) is held
//! in memory; vectors are read back from the file when a document needs one,
//! so memory does not grow with the corpus. New records are appended in one
//! write per flush; a record cut short by a crash is cut off on the next open.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The digest a text is cached under.
pub fn text_digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// The name the vectors of `model` at `revision`, truncated to
/// `max_tokens`, are cached under (a safe file-name stem). The window is in
/// the key because a text's vector depends on where it was cut.
pub fn cache_key(model: &str, revision: &str, max_tokens: usize) -> String {
    format!("{model}@{revision}@{max_tokens}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '@' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// An open cache.
pub struct VectorCache {
    key: String,
    path: PathBuf,
    file: File,
    dimensions: usize,
    /// Offset of each record in the file.
    index: HashMap<[u8; 32], u64>,
    /// Bytes of whole records in the file.
    len: u64,
    /// Vectors not yet written, by digest.
    fresh: HashMap<[u8; 32], Vec<f32>>,
}

impl VectorCache {
    /// Opens (or starts) the cache named `key` (see [`cache_key`]) in `dir`.
    pub fn open(dir: &Path, key: &str, dimensions: usize) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let key = key.to_string();
        let path = dir.join(format!("{key}.f32"));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)?;
        let record = record_size(dimensions) as u64;
        let on_disk = file.metadata()?.len();
        let len = on_disk - on_disk % record;
        if len != on_disk {
            // A torn tail would misalign every record appended after it.
            file.set_len(len)?;
        }
        let mut index = HashMap::new();
        let mut reader = std::io::BufReader::with_capacity(1 << 20, &file);
        let mut buffer = vec![0u8; record as usize];
        let mut offset = 0;
        while offset < len {
            reader.read_exact(&mut buffer)?;
            let mut digest = [0u8; 32];
            digest.copy_from_slice(&buffer[..32]);
            index.entry(digest).or_insert(offset);
            offset += record;
        }
        Ok(Self {
            key,
            path,
            file,
            dimensions,
            index,
            len,
            fresh: HashMap::new(),
        })
    }

    /// What it caches, as [`cache_key`] names it.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The folder of the cache file.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// Size of one record in bytes.
    pub fn record_size(&self) -> usize {
        record_size(self.dimensions)
    }

    /// Bytes of written records (after [`VectorCache::flush`], all of them).
    pub fn file_len(&self) -> u64 {
        self.len
    }

    /// Whether a vector for `digest` is held.
    pub fn contains(&self, digest: &[u8; 32]) -> bool {
        self.fresh.contains_key(digest) || self.index.contains_key(digest)
    }

    /// The cached vector of a text.
    pub fn get(&self, digest: &[u8; 32]) -> std::io::Result<Option<Vec<f32>>> {
        if let Some(vector) = self.fresh.get(digest) {
            return Ok(Some(vector.clone()));
        }
        let Some(&offset) = self.index.get(digest) else {
            return Ok(None);
        };
        let mut bytes = vec![0u8; self.dimensions * 4];
        self.file.read_exact_at(&mut bytes, offset + 32)?;
        Ok(Some(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ))
    }

    /// Records a new vector (written by [`VectorCache::flush`]).
    pub fn insert(&mut self, digest: [u8; 32], vector: Vec<f32>) {
        if vector.len() == self.dimensions && !self.contains(&digest) {
            self.fresh.insert(digest, vector);
        }
    }

    /// Appends the new vectors to the file, in one write so that two
    /// processes sharing the file never interleave parts of records.
    pub fn flush(&mut self) -> std::io::Result<()> {
        if self.fresh.is_empty() {
            return Ok(());
        }
        let mut fresh: Vec<([u8; 32], Vec<f32>)> = self.fresh.drain().collect();
        fresh.sort_unstable_by_key(|a| a.0);
        let mut bytes = Vec::with_capacity(fresh.len() * self.record_size());
        for (digest, vector) in &fresh {
            bytes.extend_from_slice(digest);
            for value in vector {
                bytes.extend_from_slice(&value.to_le_bytes());
            }
        }
        self.file.write_all(&bytes)?;
        // In append mode the write lands at the end of the file as it was
        // then (another process may have appended too), and leaves the file
        // position just after it.
        let end = (&self.file).stream_position()?;
        let start = end - bytes.len() as u64;
        let record = self.record_size() as u64;
        for (i, (digest, _)) in fresh.iter().enumerate() {
            self.index
                .entry(*digest)
                .or_insert(start + i as u64 * record);
        }
        self.len = end;
        Ok(())
    }

    /// Adds the records of `reader` (the file format) that are not held yet,
    /// and writes them; returns how many were new. A trailing partial record
    /// is an error: the caller vouches for whole files only.
    pub fn absorb(&mut self, reader: impl Read) -> std::io::Result<usize> {
        let record = self.record_size();
        let mut reader = std::io::BufReader::with_capacity(1 << 20, reader);
        let mut buffer = vec![0u8; record];
        let mut added = 0;
        loop {
            match read_record(&mut reader, &mut buffer)? {
                0 => break,
                n if n < record => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("a partial record of {n} bytes (records are {record})"),
                    ))
                }
                _ => {}
            }
            let mut digest = [0u8; 32];
            digest.copy_from_slice(&buffer[..32]);
            if self.contains(&digest) {
                continue;
            }
            let vector = buffer[32..]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            self.fresh.insert(digest, vector);
            added += 1;
            if self.fresh.len() >= 4096 {
                self.flush()?;
            }
        }
        self.flush()?;
        Ok(added)
    }

    /// Copies the bytes `[from, to)` of the file to `writer`.
    pub fn copy_range(&self, from: u64, to: u64, writer: &mut impl Write) -> std::io::Result<()> {
        let mut buffer = vec![0u8; 1 << 20];
        let mut offset = from;
        while offset < to {
            let n = buffer.len().min((to - offset) as usize);
            self.file.read_exact_at(&mut buffer[..n], offset)?;
            writer.write_all(&buffer[..n])?;
            offset += n as u64;
        }
        Ok(())
    }

    /// Vectors held.
    pub fn len(&self) -> usize {
        self.index.len() + self.fresh.len()
    }

    /// Whether the cache holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl AsMut<VectorCache> for VectorCache {
    fn as_mut(&mut self) -> &mut VectorCache {
        self
    }
}

fn record_size(dimensions: usize) -> usize {
    32 + dimensions * 4
}

/// Fills `buffer` as far as the reader goes; returns the bytes read.
fn read_record(reader: &mut impl Read, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_survive_a_reopen_and_a_torn_tail_is_cut_off() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache =
            VectorCache::open(dir.path(), &cache_key("org/model", "abc", 256), 3).unwrap();
        cache.insert(text_digest("a"), vec![1.0, 2.0, 3.0]);
        cache.insert(text_digest("b"), vec![4.0, 5.0, 6.0]);
        assert_eq!(
            cache.get(&text_digest("a")).unwrap(),
            Some(vec![1.0, 2.0, 3.0])
        );
        cache.flush().unwrap();
        // A crash in the middle of an append leaves a partial record.
        let file = dir.path().join("org_model@abc@256.f32");
        let mut bytes = std::fs::read(&file).unwrap();
        bytes.extend_from_slice(&[1, 2, 3]);
        std::fs::write(&file, bytes).unwrap();
        let mut cache =
            VectorCache::open(dir.path(), &cache_key("org/model", "abc", 256), 3).unwrap();
        assert_eq!(cache.len(), 2);
        // What is appended after the cut stays aligned.
        cache.insert(text_digest("c"), vec![7.0, 8.0, 9.0]);
        cache.flush().unwrap();
        let cache = VectorCache::open(dir.path(), &cache_key("org/model", "abc", 256), 3).unwrap();
        assert_eq!(cache.len(), 3);
        assert_eq!(
            cache.get(&text_digest("b")).unwrap(),
            Some(vec![4.0, 5.0, 6.0])
        );
        assert_eq!(
            cache.get(&text_digest("c")).unwrap(),
            Some(vec![7.0, 8.0, 9.0])
        );
        assert!(
            VectorCache::open(dir.path(), &cache_key("org/model", "abc", 128), 3)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn absorb_adds_only_unknown_records_and_refuses_partial_ones() {
        let dir = tempfile::tempdir().unwrap();
        let mut ours = VectorCache::open(&dir.path().join("ours"), "m", 2).unwrap();
        ours.insert(text_digest("a"), vec![1.0, 1.0]);
        ours.flush().unwrap();
        let mut theirs = VectorCache::open(&dir.path().join("theirs"), "m", 2).unwrap();
        theirs.insert(text_digest("a"), vec![1.0, 1.0]);
        theirs.insert(text_digest("b"), vec![2.0, 2.0]);
        theirs.flush().unwrap();
        let mut bytes = Vec::new();
        theirs.copy_range(0, theirs.file_len(), &mut bytes).unwrap();
        assert_eq!(bytes.len(), 2 * ours.record_size());

        assert_eq!(ours.absorb(&bytes[..]).unwrap(), 1);
        assert_eq!(ours.get(&text_digest("b")).unwrap(), Some(vec![2.0, 2.0]));
        assert_eq!(ours.file_len(), bytes.len() as u64);
        assert_eq!(ours.absorb(&bytes[..]).unwrap(), 0);
        let torn = &bytes[..bytes.len() - 1];
        assert!(ours.absorb(torn).is_err());
    }
}
