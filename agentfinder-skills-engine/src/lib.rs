//! Search with no server: an embedded engine over the store's artifacts.
//!
//! [`Engine::open`] reads what `sync` would load (every source's `latest/`,
//! `_SUCCESS` and digests checked), builds a local index of it once into a
//! cache folder keyed by the artifacts' digests ([`local_index`]), and opens
//! it; a later open of the same artifacts reuses the folder. [`Engine::search`]
//! ranks with BM25 over the searchable fields (weighted as Meilisearch's
//! `searchableAttributes` order them, one typo allowed in names and titles)
//! and, given the query's vector, with the artifact's own vectors; the two
//! rankings are fused ([`rank`]) and the best document of each skill is
//! kept. Results are the reader's [`SearchResponse`], so every output shape
//! (`SearchResult`, `--format topgun`, `find`) is the same as Meilisearch's.
//!
//! The query's vector comes from the caller: this crate has no model (the
//! builder's binary embeds the query with the artifact's pinned model).

pub mod local_index;
pub mod rank;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, QueryParser, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{Index, IndexReader, Term};

use agentfinder_skills_reader::contract::ArtifactLocation;
use agentfinder_skills_reader::meili::SearchResponse;
use agentfinder_skills_reader::sources::ArtifactSet;
use agentfinder_skills_reader::store::Store;

use local_index::{Fields, Meta, WEIGHTED_FIELDS};

/// The engine could not be opened or could not search.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The store's artifacts could not be read.
    #[error("artifact: {0}")]
    Artifact(String),
    /// The local index could not be written or read.
    #[error("local index: {0}")]
    Io(String),
    /// tantivy failed.
    #[error("local index: {0}")]
    Index(String),
}

impl EngineError {
    fn index(e: impl std::fmt::Display) -> Self {
        Self::Index(e.to_string())
    }
}

/// `metadata.sourceType` of this engine's results.
pub const SOURCE_TYPE: &str = "embedded";

/// Candidates each ranking contributes before fusion.
pub const CANDIDATES: usize = 200;

/// How to search.
#[derive(Debug, Clone, Default)]
pub struct EngineQuery<'a> {
    /// The words.
    pub text: &'a str,
    /// The query's vector (same model as the artifact's), for hybrid ranking.
    pub vector: Option<&'a [f32]>,
    /// Only this source.
    pub source: Option<&'a str>,
    /// Most results (skills).
    pub limit: usize,
    /// Weight of the vector ranking against the keyword ranking's 1 - it.
    pub semantic_ratio: f32,
}

/// An opened local index.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    dir: PathBuf,
    meta: Meta,
    reader: IndexReader,
    index: Index,
    fields: Fields,
    docs: memmap2::Mmap,
    offsets: memmap2::Mmap,
    source_rows: memmap2::Mmap,
    skill_rows: memmap2::Mmap,
    vectors: Option<memmap2::Mmap>,
}

impl Engine {
    /// Reads the artifacts of `store` (as `sync` does), builds their local
    /// index under `cache` if it is not there, and opens it.
    pub async fn open(store: &Store, cache: &Path) -> Result<Self, EngineError> {
        let set = ArtifactSet::read(
            store,
            &ArtifactLocation::Latest,
            4,
            std::time::Duration::from_millis(500),
        )
        .await
        .map_err(|e| EngineError::Artifact(e.to_string()))?;
        let dir = local_index::build(&set, cache).await?;
        Self::open_dir(&dir)
    }

    /// Opens a built local index folder.
    pub fn open_dir(dir: &Path) -> Result<Self, EngineError> {
        let io = |e: std::io::Error| EngineError::Io(format!("{}: {e}", dir.display()));
        let meta: Meta = serde_json::from_slice(&std::fs::read(dir.join("meta.json")).map_err(io)?)
            .map_err(|e| EngineError::Io(format!("{}/meta.json: {e}", dir.display())))?;
        let index = Index::open_in_dir(dir.join("tantivy")).map_err(EngineError::index)?;
        let reader = index.reader().map_err(EngineError::index)?;
        let map = |name: &str| -> Result<memmap2::Mmap, EngineError> {
            let file = std::fs::File::open(dir.join(name)).map_err(io)?;
            // SAFETY: the folder is complete (meta.json is written last) and
            // never written again; files of another version live elsewhere.
            unsafe { memmap2::Mmap::map(&file) }.map_err(io)
        };
        let (_, fields) = local_index::schema();
        let vectors = if meta.dimensions > 0 {
            Some(map("vectors.f32")?)
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

    /// Ranks documents for `query` and keeps the best of each skill.
    pub fn search(&self, query: &EngineQuery<'_>) -> Result<SearchResponse, EngineError> {
        let limit = query.limit.max(1);
        let keyword = self.keyword_rows(query)?;
        let nearest = match (query.vector, &self.inner.vectors) {
            (Some(v), Some(_)) if query.semantic_ratio > 0.0 => self.vector_rows(v, query.source),
            _ => Vec::new(),
        };
        let best_similarity = nearest
            .first()
            .map(|(_, cosine)| agentfinder_skills_reader::rank::similarity_of_cosine(*cosine));
        let vector: Vec<u32> = nearest.into_iter().map(|(row, _)| row).collect();
        let ratio = if vector.is_empty() {
            0.0
        } else {
            f64::from(query.semantic_ratio.clamp(0.0, 1.0))
        };
        let fused = rank::fuse(&[(&keyword, 1.0 - ratio), (&vector, ratio)]);
        let mut seen = HashSet::new();
        let mut documents = Vec::with_capacity(limit);
        // One per skill, chosen on the skill digests; only the documents
        // kept are read.
        for (row, score) in fused {
            let Some(skill) = self.skill_of(row) else {
                continue;
            };
            if !seen.insert(skill) {
                continue;
            }
            if let Some(doc) = self.document(row) {
                documents.push((doc, score));
                if documents.len() == limit {
                    break;
                }
            }
        }
        let fallback = match (query.vector, &self.inner.vectors) {
            (None, Some(_)) if query.semantic_ratio > 0.0 => {
                Some("no query vector: keywords only".to_string())
            }
            (Some(_), None) => Some("the artifact has no vectors: keywords only".to_string()),
            _ => None,
        };
        let mut response =
            SearchResponse::from_documents(documents, fallback).with_similarity(best_similarity);
        for result in &mut response.results {
            result.metadata.source_type = SOURCE_TYPE.to_string();
        }
        Ok(response)
    }

    /// Rows by BM25, best first.
    fn keyword_rows(&self, query: &EngineQuery<'_>) -> Result<Vec<u32>, EngineError> {
        let inner = &self.inner;
        if query.text.trim().is_empty() {
            return Ok(Vec::new());
        }
        let mut parser = QueryParser::for_index(&inner.index, inner.fields.text.to_vec());
        for ((_, weight), field) in WEIGHTED_FIELDS.iter().zip(inner.fields.text) {
            parser.set_field_boost(field, *weight);
        }
        for field in &inner.fields.text[..2] {
            parser.set_field_fuzzy(*field, false, 1, true);
        }
        // Words, not syntax: a `:` or a quote in a sentence is no operator;
        // and not stop words, unless the query has nothing else.
        let plain: String = query
            .text
            .chars()
            .map(|c| if c.is_alphanumeric() { c } else { ' ' })
            .collect();
        let meaningful = plain
            .split_whitespace()
            .filter(|w| !agentfinder_skills_reader::rank::is_stop_word(w))
            .collect::<Vec<_>>()
            .join(" ");
        let words = if meaningful.is_empty() {
            plain
        } else {
            meaningful
        };
        let (parsed, _) = parser.parse_query_lenient(&words);
        let parsed: Box<dyn Query> = match query.source {
            Some(source) => Box::new(BooleanQuery::new(vec![
                (Occur::Must, parsed),
                (
                    Occur::Must,
                    Box::new(TermQuery::new(
                        Term::from_field_text(inner.fields.source, source),
                        IndexRecordOption::Basic,
                    )),
                ),
            ])),
            None => parsed,
        };
        let searcher = inner.reader.searcher();
        let hits = searcher
            .search(&parsed, &TopDocs::with_limit(CANDIDATES).order_by_score())
            .map_err(EngineError::index)?;
        let mut rows = Vec::with_capacity(hits.len());
        for (_, address) in hits {
            let column = searcher
                .segment_reader(address.segment_ord)
                .fast_fields()
                .u64("row")
                .map_err(EngineError::index)?;
            if let Some(row) = column.first(address.doc_id) {
                rows.push(row as u32);
            }
        }
        Ok(rows)
    }

    /// Rows by vector similarity, best first, with their cosines.
    fn vector_rows(&self, query: &[f32], source: Option<&str>) -> Vec<(u32, f32)> {
        let inner = &self.inner;
        let Some(bytes) = &inner.vectors else {
            return Vec::new();
        };
        let Ok(vectors) = bytemuck::try_cast_slice::<u8, f32>(bytes) else {
            return Vec::new();
        };
        let wanted = source.and_then(|s| inner.meta.sources.iter().position(|x| x == s));
        if source.is_some() && wanted.is_none() {
            return Vec::new();
        }
        rank::nearest(vectors, inner.meta.dimensions, query, CANDIDATES, |row| {
            wanted.is_none_or(|want| self.source_of(row) == Some(want))
        })
    }

    fn skill_of(&self, row: u32) -> Option<u64> {
        let at = row as usize * 8;
        let bytes = self.inner.skill_rows.get(at..at + 8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    fn source_of(&self, row: u32) -> Option<usize> {
        let at = row as usize * 2;
        let bytes = self.inner.source_rows.get(at..at + 2)?;
        Some(u16::from_le_bytes([bytes[0], bytes[1]]) as usize)
    }

    /// The document of `row`.
    fn document(&self, row: u32) -> Option<Value> {
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
