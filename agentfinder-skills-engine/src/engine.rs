//! An opened local index: the tantivy index, the documents and their side
//! files, and the vectors, memory-mapped ([`crate::index`] builds them).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tantivy::{Index, IndexReader, ReloadPolicy};

use agentfinder_skills_reader::contract::{skill_key_of, ArtifactLocation};
use agentfinder_skills_reader::sources::ArtifactSet;
use agentfinder_skills_reader::store::Store;

use crate::error::EngineError;
use crate::index::{self, Fields, Meta};

/// An opened local index.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) dir: PathBuf,
    pub(crate) meta: Meta,
    pub(crate) reader: IndexReader,
    pub(crate) index: Index,
    pub(crate) fields: Fields,
    pub(crate) docs: memmap2::Mmap,
    pub(crate) offsets: memmap2::Mmap,
    pub(crate) source_rows: memmap2::Mmap,
    pub(crate) skill_rows: memmap2::Mmap,
    pub(crate) vectors: Option<VectorFiles>,
}

/// The mapped files of a local index's vectors ([`crate::nearest::Vectors`]).
pub(crate) struct VectorFiles {
    pub(crate) exact: memmap2::Mmap,
    pub(crate) codes: memmap2::Mmap,
    pub(crate) scales: memmap2::Mmap,
    pub(crate) signs: memmap2::Mmap,
}

impl Engine {
    /// Reads the artifacts of `store` (as `sync` does), builds their local
    /// index under `cache` if it is not there, and opens it.
    pub async fn open(store: &Store, cache: &Path) -> Result<Self, EngineError> {
        let set = Self::read_set(store).await?;
        Self::open_set(&set, cache).await
    }

    /// What [`Engine::open`] indexes: every source's `latest/` (retrying a
    /// promotion under way), with the sources that could not be read.
    pub async fn read_set(store: &Store) -> Result<ArtifactSet, EngineError> {
        ArtifactSet::read(
            store,
            &ArtifactLocation::Latest,
            4,
            std::time::Duration::from_millis(500),
        )
        .await
        .map_err(|e| EngineError::Artifact(e.to_string()))
    }

    /// Builds the local index of `set` under `cache` if it is not there
    /// ([`index::build`]: blocking work), and opens it.
    pub async fn open_set(set: &ArtifactSet, cache: &Path) -> Result<Self, EngineError> {
        let built = index::build(set, cache).await?;
        Self::open_dir(&built.dir)
    }

    /// Opens a built local index folder.
    pub fn open_dir(dir: &Path) -> Result<Self, EngineError> {
        let io = |e: std::io::Error| EngineError::Io(format!("{}: {e}", dir.display()));
        let meta: Meta = serde_json::from_slice(&std::fs::read(dir.join("meta.json")).map_err(io)?)
            .map_err(|e| EngineError::Io(format!("{}/meta.json: {e}", dir.display())))?;
        let index = Index::open_in_dir(dir.join("tantivy")).map_err(EngineError::index)?;
        // The folder is never written again: nothing to watch for (the
        // default policy polls meta.json every 500 ms, for every engine).
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(EngineError::index)?;
        let map = |name: &str| -> Result<memmap2::Mmap, EngineError> {
            let file = std::fs::File::open(dir.join(name)).map_err(io)?;
            // SAFETY: the folder is complete (meta.json is written last) and
            // never written again; files of another version live elsewhere.
            unsafe { memmap2::Mmap::map(&file) }.map_err(io)
        };
        let (_, fields) = index::schema();
        index::cache::mark_used(dir);
        let vectors = if meta.dimensions > 0 {
            Some(VectorFiles {
                exact: map("vectors.f32")?,
                codes: map("vectors.i8")?,
                scales: map("vectors.scale")?,
                signs: map("vectors.sign")?,
            })
        } else {
            None
        };
        Ok(Self {
            inner: Arc::new(Inner {
                dir: dir.to_path_buf(),
                reader,
                index,
                fields,
                docs: map("docs.ndjson")?,
                offsets: map("offsets.bin")?,
                source_rows: map("sources.bin")?,
                skill_rows: map("skills.bin")?,
                vectors,
                meta,
            }),
        })
    }

    /// The local index's folder.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The key of its artifacts ([`index::key_of`]).
    pub fn key(&self) -> &str {
        &self.inner.meta.key
    }

    /// Documents indexed.
    pub fn documents(&self) -> u64 {
        self.inner.meta.rows
    }

    /// The sources it holds.
    pub fn sources(&self) -> &[String] {
        &self.inner.meta.sources
    }

    /// The model the artifact's vectors were made with (`None`: no vectors).
    pub fn embedder(&self) -> Option<&Value> {
        self.inner.meta.embedder.as_ref()
    }

    /// Length of the vectors (0 without).
    pub fn dimensions(&self) -> usize {
        self.inner.meta.dimensions
    }

    /// Every document of the skill `skill_key`, in the artifact's order
    /// (empty when no skill has that key).
    pub fn skill_documents(&self, skill_key: &str) -> Vec<Value> {
        let wanted = index::skill_digest(skill_key);
        let rows = self.inner.skill_rows.len() / 8;
        (0..rows as u32)
            .filter(|&row| self.skill_of(row) == Some(wanted))
            .filter_map(|row| self.document(row))
            .filter(|doc| skill_key_of(doc) == skill_key)
            .collect()
    }

    pub(crate) fn skill_of(&self, row: u32) -> Option<u64> {
        let at = row as usize * 8;
        let bytes = self.inner.skill_rows.get(at..at + 8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    pub(crate) fn source_of(&self, row: u32) -> Option<usize> {
        let at = row as usize * 2;
        let bytes = self.inner.source_rows.get(at..at + 2)?;
        Some(u16::from_le_bytes([bytes[0], bytes[1]]) as usize)
    }

    /// The document of `row`.
    pub(crate) fn document(&self, row: u32) -> Option<Value> {
        let offset = |i: usize| -> Option<usize> {
            let bytes = self.inner.offsets.get(i * 8..i * 8 + 8)?;
            Some(u64::from_le_bytes(bytes.try_into().ok()?) as usize)
        };
        let (start, end) = (offset(row as usize)?, offset(row as usize + 1)?);
        serde_json::from_slice(self.inner.docs.get(start..end)?).ok()
    }
}

/// Where local indexes are kept by default: `$XDG_CACHE_HOME`, else
/// `~/.cache`, then `agentfinder-skills/engine`.
pub fn default_cache_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"))
        .join("agentfinder-skills")
        .join("engine")
}
