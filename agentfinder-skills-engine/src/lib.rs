//! Search with no server: an embedded engine over the store's artifacts.
//!
//! [`Engine::open`] reads what `sync` would load (every source's `latest/`,
//! `_SUCCESS` and digests checked), builds a local index of it once into a
//! cache folder keyed by the artifacts' digests ([`local_index`]), and opens
//! it; a later open of the same artifacts reuses the folder. [`Engine::search`]
//! ranks with BM25 over the searchable fields (weighted as Meilisearch's
//! `searchableAttributes` order them, one typo allowed in names and titles
//! in words of 5 letters or more)
//! and, given the query's vector, with the artifact's own vectors; the two
//! rankings are fused ([`rank`]) and the best document of each skill is
//! kept. Results are the reader's [`SearchResponse`], so every output shape
//! (`SearchResult`, `--format topgun`, `find`) is the same as Meilisearch's.
//!
//! The query's vector comes from the caller: this crate has no model (the
//! builder's binary embeds the query with the artifact's pinned model).

pub mod batches;
pub mod cache;
pub mod collapse;
pub mod compounds;
pub mod coverage;
pub mod local_index;
pub mod nearest;
pub mod rank;
pub mod turns;
pub mod typo;
pub mod workers;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocAddress, Index, IndexReader, Term};

use agentfinder_skills_reader::contract::ArtifactLocation;
use agentfinder_skills_reader::copies;
use agentfinder_skills_reader::meili::SearchResponse;
use agentfinder_skills_reader::sources::ArtifactSet;
use agentfinder_skills_reader::store::Store;

pub use batches::Batches;
use local_index::{Fields, Meta, WEIGHTED_FIELDS};
pub use turns::Turns;

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

/// Shortest word a typo is allowed in (Meilisearch's default
/// `minWordSizeForTypos.oneTypo`); never on its first letter
/// ([`typo::OneTypoAfterFirstLetter`]), which Meilisearch counts as two.
pub const TYPO_MIN_LENGTH: usize = 5;

/// Most words of a query that are searched (the first ones, after stop
/// words are dropped): each word is a term query per field, so a 2 KB
/// query could otherwise become hundreds of queries.
pub const MAX_QUERY_WORDS: usize = 32;

/// Most words of a query that may match with a typo (the first long
/// ones); each is a walk of the names' and titles' term dictionaries.
pub const MAX_TYPO_WORDS: usize = 8;

/// Whether `field` is a name or a title (the first two of
/// [`WEIGHTED_FIELDS`]): a match there counts its weight, and a misspelt
/// word still names the skill.
fn is_name_field(field: Field, fields: &[Field; 8]) -> bool {
    fields[..2].contains(&field)
}

/// Rows whose vectors a search ranks by their codes, chosen by their sign
/// bits ([`nearest::Vectors::nearest_shortlisted`]): the exact scan of
/// every vector was 74% of a hybrid search over 124,792 documents (192 MB
/// of f32 a query).
pub const SHORTLIST: usize = 2_000;

/// Most skills a query that is a name puts first.
const NAMED: usize = 20;

/// Members of a result whose documents are read to choose the one shown.
const MEMBERS_READ: usize = 50;

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
    /// Sections to name per skill found, best first (0: none), besides
    /// the skill's best document.
    pub sections: usize,
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
    card_rows: memmap2::Mmap,
    vectors: Option<VectorFiles>,
}

/// The mapped files of a local index's vectors ([`nearest::Vectors`]).
struct VectorFiles {
    exact: memmap2::Mmap,
    codes: memmap2::Mmap,
    scales: memmap2::Mmap,
    signs: memmap2::Mmap,
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
    /// ([`local_index::build`]: blocking work), and opens it.
    pub async fn open_set(set: &ArtifactSet, cache: &Path) -> Result<Self, EngineError> {
        let dir = local_index::build(set, cache).await?;
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
        cache::mark_used(dir);
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
                card_rows: map("cards.bin")?,
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
        let fused = rank::fuse_by_skill(&[(&keyword, 1.0 - ratio), (&vector, ratio)], |row| {
            self.skill_of(row)
        });
        let fused = collapse::name_first(fused, &self.named_rows(query)?);
        let slots = collapse::group(
            &fused,
            limit,
            |row| self.skill_of(row),
            |row| self.card_of(row),
        );
        let mut documents = Vec::with_capacity(slots.len());
        let mut sections = Vec::new();
        for slot in &slots {
            let Some((doc, shown)) = self.slot_document(slot) else {
                continue;
            };
            if query.sections > 0 {
                // The shown skill's best documents, its sections only.
                sections.push(
                    fused
                        .iter()
                        .filter(|(row, _)| self.skill_of(*row) == Some(shown))
                        .take(query.sections)
                        .filter_map(|&(row, score)| Some((self.document(row)?, score)))
                        .filter(|(doc, _)| {
                            doc.get("kind").and_then(Value::as_str)
                                == Some(agentfinder_skills_reader::contract::KIND_SECTION)
                        })
                        .collect(),
                );
            }
            documents.push((doc, slot.score()));
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
        response.sections = sections;
        for result in &mut response.results {
            result.metadata.source_type = SOURCE_TYPE.to_string();
        }
        Ok(response)
    }

    /// Rows by keywords, best first.
    ///
    /// Two searches, so the larger can prune: BM25 over the body fields
    /// as a flat union of boosted term queries, which tantivy ranks with
    /// block-max WAND (a union holding any other query is scored in full:
    /// measured 36 ms for a query of common words over 124,792 documents);
    /// then names and titles, where a match counts the field's weight
    /// whatever the field's length, and a word of at least
    /// [`TYPO_MIN_LENGTH`] letters may be one typo away (Meilisearch's
    /// default), but not on its first letter. A row's score is the sum of
    /// the two, times the square of the share of the query's words it
    /// holds ([`coverage`]). A compound such as `with_server.py` also
    /// counts as a phrase ([`compounds`]). What the query rules out is not searched
    /// ([`agentfinder_skills_reader::rank::without_ruled_out`]).
    fn keyword_rows(&self, query: &EngineQuery<'_>) -> Result<Vec<u32>, EngineError> {
        let inner = &self.inner;
        let wanted = agentfinder_skills_reader::rank::without_ruled_out(query.text);
        let words = self.query_words(&wanted);
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let fields = &inner.fields.text;
        let mut body: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let mut names: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let mut typo_words = 0;
        for word in &words {
            let typo = word.chars().count() >= TYPO_MIN_LENGTH && typo_words < MAX_TYPO_WORDS;
            typo_words += usize::from(typo);
            for ((_, weight), field) in WEIGHTED_FIELDS.iter().zip(fields) {
                let term = Term::from_field_text(*field, word);
                if !is_name_field(*field, fields) {
                    let matched = TermQuery::new(term, IndexRecordOption::WithFreqs);
                    body.push((
                        Occur::Should,
                        Box::new(BoostQuery::new(Box::new(matched), *weight)),
                    ));
                    continue;
                }
                let matched: Box<dyn Query> = if typo {
                    Box::new(typo::OneTypoAfterFirstLetter::new(*field, word))
                } else {
                    Box::new(TermQuery::new(term, IndexRecordOption::Basic))
                };
                names.push((
                    Occur::Should,
                    Box::new(ConstScoreQuery::new(matched, *weight)),
                ));
            }
        }
        let phrases = match inner.index.tokenizer_for_field(fields[0]) {
            Ok(mut analyzer) => {
                let weighted: Vec<(Field, f32)> = WEIGHTED_FIELDS
                    .iter()
                    .zip(fields)
                    .map(|((_, weight), field)| (*field, *weight))
                    .collect();
                compounds::phrase_clauses(&compounds::compounds(&mut analyzer, &wanted), &weighted)
            }
            Err(_) => Vec::new(),
        };
        let searcher = inner.reader.searcher();
        let mut scores: HashMap<DocAddress, f32> = HashMap::new();
        for clauses in [body, names, phrases] {
            if clauses.is_empty() {
                continue;
            }
            let query = self.within_source(Box::new(BooleanQuery::new(clauses)), query.source);
            let hits = searcher
                .search(&query, &TopDocs::with_limit(CANDIDATES).order_by_score())
                .map_err(EngineError::index)?;
            for (score, address) in hits {
                *scores.entry(address).or_default() += score;
            }
        }
        let mut ranked: Vec<(DocAddress, f32)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if words.len() > 1 {
            // Weighed by the share of the query's words each holds, so a
            // one-word title cannot outrank a skill holding most of them.
            let addresses: Vec<DocAddress> = ranked.iter().map(|r| r.0).collect();
            let held = coverage::words_held(&searcher, fields, &words, &addresses)
                .map_err(EngineError::index)?;
            ranked = coverage::rank(&ranked, &held, words.len());
        }
        ranked.truncate(CANDIDATES);
        // Each segment's `row` column, opened once (opening it for every
        // hit was a quarter of a keyword search).
        let columns = searcher
            .segment_readers()
            .iter()
            .map(|segment| segment.fast_fields().u64("row"))
            .collect::<Result<Vec<_>, _>>()
            .map_err(EngineError::index)?;
        Ok(ranked
            .into_iter()
            .filter_map(|(address, _)| {
                let column = columns.get(address.segment_ord as usize)?;
                column.first(address.doc_id).map(|row| row as u32)
            })
            .collect())
    }

    /// The query's words as the index has them (tantivy's tokenizer:
    /// lowercased, split at what is not a letter or digit), each once, in
    /// order; without stop words unless the query has nothing else; at
    /// most [`MAX_QUERY_WORDS`].
    pub fn query_words(&self, text: &str) -> Vec<String> {
        let mut words: Vec<String> = Vec::new();
        if let Ok(mut analyzer) = self
            .inner
            .index
            .tokenizer_for_field(self.inner.fields.text[0])
        {
            let mut stream = analyzer.token_stream(text);
            while let Some(token) = stream.next() {
                if !words.contains(&token.text) {
                    words.push(token.text.clone());
                }
            }
        }
        let meaningful: Vec<String> = words
            .iter()
            .filter(|w| !agentfinder_skills_reader::rank::is_stop_word(w))
            .cloned()
            .collect();
        let mut kept = if meaningful.is_empty() {
            words
        } else {
            meaningful
        };
        kept.truncate(MAX_QUERY_WORDS);
        kept
    }

    /// `query`, restricted to `source` when one is given.
    fn within_source(&self, query: Box<dyn Query>, source: Option<&str>) -> Box<dyn Query> {
        match source {
            Some(source) => Box::new(BooleanQuery::new(vec![
                (Occur::Must, query),
                (
                    Occur::Must,
                    Box::new(TermQuery::new(
                        Term::from_field_text(self.inner.fields.source, source),
                        IndexRecordOption::Basic,
                    )),
                ),
            ])),
            None => query,
        }
    }

    /// Rows by vector similarity, best first, with their cosines.
    fn vector_rows(&self, query: &[f32], source: Option<&str>) -> Vec<(u32, f32)> {
        let inner = &self.inner;
        let Some(files) = &inner.vectors else {
            return Vec::new();
        };
        let (Ok(exact), Ok(scales), Ok(signs)) = (
            bytemuck::try_cast_slice::<u8, f32>(&files.exact),
            bytemuck::try_cast_slice::<u8, f32>(&files.scales),
            bytemuck::try_cast_slice::<u8, u64>(&files.signs),
        ) else {
            return Vec::new();
        };
        let vectors = nearest::Vectors {
            dimensions: inner.meta.dimensions,
            exact,
            codes: bytemuck::cast_slice::<u8, i8>(&files.codes),
            scales,
            signs,
        };
        let Some(source) = source else {
            return vectors.nearest_shortlisted(query, CANDIDATES, SHORTLIST, None);
        };
        let Some(wanted) = inner.meta.sources.iter().position(|s| s == source) else {
            return Vec::new();
        };
        let keep = |row: u32| self.source_of(row) == Some(wanted);
        vectors.nearest_shortlisted(query, CANDIDATES, SHORTLIST, Some(&keep))
    }

    /// Every document of the skill `skill_key`, in the artifact's order
    /// (empty when no skill has that key).
    pub fn skill_documents(&self, skill_key: &str) -> Vec<Value> {
        let wanted = local_index::skill_digest(skill_key);
        let rows = self.inner.skill_rows.len() / 8;
        (0..rows as u32)
            .filter(|&row| self.skill_of(row) == Some(wanted))
            .filter_map(|row| self.document(row))
            .filter(|doc| agentfinder_skills_reader::contract::skill_key_of(doc) == skill_key)
            .collect()
    }

    fn skill_of(&self, row: u32) -> Option<u64> {
        let at = row as usize * 8;
        let bytes = self.inner.skill_rows.get(at..at + 8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    fn card_of(&self, row: u32) -> Option<u64> {
        let at = row as usize * 8;
        let bytes = self.inner.card_rows.get(at..at + 8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    /// The document a result shows, and its skill: the best row of the
    /// slot's oldest copy ([`copies::oldest`]), with the other copies'
    /// locations in `also_at` (at most [`copies::ALSO_AT`]).
    fn slot_document(&self, slot: &collapse::Slot) -> Option<(Value, u64)> {
        let considered = &slot.members[..slot.members.len().min(MEMBERS_READ)];
        let docs: Vec<Option<Value>> = if considered.len() > 1 {
            considered.iter().map(|m| self.document(m.row)).collect()
        } else {
            Vec::new()
        };
        let shown = if docs.is_empty() {
            0
        } else {
            copies::oldest(docs.iter().map(Option::as_ref))
        };
        let member = considered.get(shown)?;
        let mut doc = match docs.get(shown) {
            Some(Some(doc)) => doc.clone(),
            _ => self.document(member.row)?,
        };
        let others = docs
            .iter()
            .enumerate()
            .filter(|(at, _)| *at != shown)
            .filter_map(|(_, doc)| doc.as_ref());
        copies::list_others(&mut doc, others);
        Some((doc, member.skill))
    }

    /// The skill documents of the skills whose name is the query's
    /// ([`copies::name_key`]), within the query's source.
    fn named_rows(&self, query: &EngineQuery<'_>) -> Result<Vec<u32>, EngineError> {
        let key = copies::name_key(query.text);
        if key.is_empty() {
            return Ok(Vec::new());
        }
        let term = Term::from_field_text(self.inner.fields.name, &key);
        let matched = self.within_source(
            Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
            query.source,
        );
        let searcher = self.inner.reader.searcher();
        let hits = searcher
            .search(&matched, &TopDocs::with_limit(NAMED).order_by_score())
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
        rows.sort_unstable();
        Ok(rows)
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
