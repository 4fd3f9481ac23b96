//! The local index of one artifact set, on disk: built once, opened after.
//!
//! ```text
//! <cache>/<key>/tantivy/        BM25 over the searchable fields, plus `row`
//! <cache>/<key>/docs.ndjson     every document without its vectors, row order
//! <cache>/<key>/offsets.bin     u64 per row: where its line starts (and one past the end)
//! <cache>/<key>/sources.bin     u16 per row: its source, an index into meta.json's list
//! <cache>/<key>/skills.bin      u64 per row: a digest of its skill key (one hit per skill
//!                               is chosen without reading documents)
//! <cache>/<key>/cards.bin       u64 per row: a digest of its skill's card (name and
//!                               description: copies share it; [`crate::collapse`])
//! <cache>/<key>/vectors.f32     dimensions f32 per row (zeros for a row without one)
//! <cache>/<key>/vectors.sign    the sign bits of each row's vector, in u64 words
//!                               (the shortlist a search ranks by codes)
//! <cache>/<key>/vectors.i8      dimensions 8-bit codes per row, and
//! <cache>/<key>/vectors.scale   f32 per row: its codes' scale (the codes
//!                               choose which rows are scored exactly)
//! <cache>/<key>/meta.json       key, rows, dimensions, sources, embedder
//! ```
//!
//! `key` is a digest of the artifacts' identity and [`FORMAT`], so another
//! artifact version gets another folder. A folder is built under a
//! temporary name and renamed into place when complete: a crash leaves no
//! half index under a key. Documents stream through: the build holds one
//! batch and tantivy's writer buffer, whatever the number of documents.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;
use tantivy::schema::{Field, Schema, FAST, INDEXED, STORED, STRING, TEXT};
use tantivy::{Index, TantivyDocument};

use agentfinder_skills_reader::documents::{for_each_batch, StreamError};
use agentfinder_skills_reader::sources::ArtifactSet;

use crate::EngineError;

/// Version of the local index's layout; a change builds new folders.
pub const FORMAT: u32 = 6;

/// The searchable fields and how much a match in each counts (the order
/// of Meilisearch's `searchableAttributes`, most important first).
pub const WEIGHTED_FIELDS: [(&str, f32); 8] = [
    ("skill_name", 4.0),
    ("title", 3.0),
    ("heading_path", 2.0),
    ("skill_description", 2.0),
    ("marketplace_description", 1.5),
    ("content", 1.0),
    ("text", 1.0),
    ("path", 1.0),
];

/// Bytes of tantivy's indexing buffer.
const WRITER_BUDGET: usize = 64 * 1024 * 1024;

/// The tantivy fields.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    /// The weighted text fields, as [`WEIGHTED_FIELDS`].
    pub text: [Field; 8],
    /// `source`, untokenised, for filters.
    pub source: Field,
    /// `kind`, untokenised.
    pub kind: Field,
    /// A skill document's name as [`agentfinder_skills_reader::copies::name_key`] has it,
    /// untokenised: what a query that is a skill's name matches.
    pub name: Field,
    /// The row of the document in the side files (fast).
    pub row: Field,
}

/// The schema of the local index.
pub fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let text = WEIGHTED_FIELDS.map(|(name, _)| builder.add_text_field(name, TEXT));
    let source = builder.add_text_field("source", STRING);
    let kind = builder.add_text_field("kind", STRING);
    let row = builder.add_u64_field("row", INDEXED | FAST | STORED);
    let name = builder.add_text_field("name_key", STRING);
    (
        builder.build(),
        Fields {
            text,
            source,
            kind,
            name,
            row,
        },
    )
}

/// What `meta.json` holds.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Meta {
    /// [`FORMAT`].
    pub format: u32,
    /// The folder's key.
    pub key: String,
    /// Documents.
    pub rows: u64,
    /// Length of each vector (0: no document has one).
    pub dimensions: usize,
    /// Source ids, by `sources.bin` index.
    pub sources: Vec<String>,
    /// Model and revision of the vectors, from the manifests.
    pub embedder: Option<Value>,
}

/// The folder key of `set`.
pub fn key_of(set: &ArtifactSet) -> String {
    use sha2::Digest;
    let identity = set.identity();
    let mut digest = sha2::Sha256::new();
    digest.update(format!(
        "{FORMAT}\n{}\n{}\n",
        identity.source_commit, identity.documents_sha256
    ));
    hex::encode(&digest.finalize()[..16])
}

/// A stable 64-bit digest of a skill key.
pub fn skill_digest(key: &str) -> u64 {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(key.as_bytes());
    u64::from_le_bytes(digest[..8].try_into().unwrap_or_default())
}

/// Builds the local index of `set` under `cache` (a no-op when its folder
/// exists) and returns the folder. Indexing is synchronous CPU work between
/// reads of the store: run it where blocking is allowed (a blocking thread
/// driving this future), never on a thread that answers queries.
pub async fn build(set: &ArtifactSet, cache: &Path) -> Result<PathBuf, EngineError> {
    let key = key_of(set);
    let target = cache.join(&key);
    if target.join("meta.json").is_file() {
        return Ok(target);
    }
    let io = |e: std::io::Error| EngineError::Io(format!("{}: {e}", cache.display()));
    std::fs::create_dir_all(cache).map_err(io)?;
    let staging = tempfile::Builder::new()
        .prefix(crate::cache::BUILD_PREFIX)
        .tempdir_in(cache)
        .map_err(io)?;
    let dir = staging.path().to_path_buf();
    // Held until the folder is renamed: a folder whose lock is free is a
    // killed build's, which `cache::tidy` removes.
    let _lock = crate::cache::BuildLock::take(&dir).map_err(io)?;
    pause_point("engine-build");
    let mut sink = Sink::create(&dir)?;
    for part in &set.parts {
        // Documents name their source (schema 4); older ones get the part's.
        let source = part.source.clone().unwrap_or_default();
        let sink_cell = std::sync::Mutex::new(&mut sink);
        let streamed = for_each_batch(
            &part.store,
            &part.location,
            &part.success,
            &part.manifest,
            8 * 1024 * 1024,
            |batch| {
                let result = match sink_cell.lock() {
                    Ok(mut sink) => sink.add_batch(&batch, &source),
                    Err(_) => Err(EngineError::Io("a batch panicked".into())),
                };
                async move { result }
            },
        )
        .await;
        match streamed {
            Ok(()) => {}
            Err(StreamError::Read(e)) => return Err(EngineError::Artifact(e.to_string())),
            Err(StreamError::Consumer(e)) => return Err(e),
        }
    }
    let embedder = set
        .leading_manifest()
        .and_then(|m| m.embedder.as_ref())
        .and_then(|e| serde_json::to_value(e).ok());
    sink.finish(&key, embedder)?;
    let kept = staging.keep();
    match std::fs::rename(&kept, &target) {
        Ok(()) => Ok(target),
        // Another process built it first: theirs is as good.
        Err(_) if target.join("meta.json").is_file() => {
            let _ = std::fs::remove_dir_all(&kept);
            Ok(target)
        }
        Err(e) => Err(io(e)),
    }
}

/// Freezes the build here for `<seconds>` when `AGENTFINDER_PAUSE` is
/// `<name>:<seconds>` (the builder's pause points, for tests that need a
/// slow build); one environment lookup otherwise.
fn pause_point(name: &str) {
    let Ok(pause) = std::env::var("AGENTFINDER_PAUSE") else {
        return;
    };
    if let Some((point, seconds)) = pause.rsplit_once(':') {
        let seconds: f64 = seconds.parse().unwrap_or(0.0);
        if point == name && seconds.is_finite() && (0.0..3600.0).contains(&seconds) {
            eprintln!("pause point {name}: pausing {seconds} s");
            std::thread::sleep(std::time::Duration::from_secs_f64(seconds));
        }
    }
}

/// Where a build writes.
struct Sink {
    dir: PathBuf,
    writer: tantivy::IndexWriter,
    fields: Fields,
    docs: BufWriter<std::fs::File>,
    offsets: BufWriter<std::fs::File>,
    source_rows: BufWriter<std::fs::File>,
    skill_rows: BufWriter<std::fs::File>,
    card_rows: BufWriter<std::fs::File>,
    vectors: BufWriter<std::fs::File>,
    signs: BufWriter<std::fs::File>,
    sign_buffer: Vec<u64>,
    codes: BufWriter<std::fs::File>,
    code_buffer: Vec<i8>,
    scales: BufWriter<std::fs::File>,
    written: u64,
    rows: u64,
    dimensions: usize,
    sources: Vec<String>,
}

impl Sink {
    fn create(dir: &Path) -> Result<Self, EngineError> {
        Self::with_writer_threads(dir, None)
    }

    /// A sink whose tantivy writer has `threads` indexing threads (each
    /// writes segments of its own), or tantivy's choice by the cores.
    fn with_writer_threads(dir: &Path, threads: Option<usize>) -> Result<Self, EngineError> {
        let io = |e: std::io::Error| EngineError::Io(format!("{}: {e}", dir.display()));
        let file = |name: &str| -> Result<BufWriter<std::fs::File>, EngineError> {
            Ok(BufWriter::new(
                std::fs::File::create(dir.join(name)).map_err(io)?,
            ))
        };
        let tantivy_dir = dir.join("tantivy");
        std::fs::create_dir_all(&tantivy_dir).map_err(io)?;
        let (schema, fields) = schema();
        let index = Index::create_in_dir(&tantivy_dir, schema).map_err(EngineError::index)?;
        let writer = match threads {
            // tantivy wants at least 15 MB a thread.
            Some(threads) => {
                index.writer_with_num_threads(threads, WRITER_BUDGET.max(threads * 15_000_000))
            }
            None => index.writer(WRITER_BUDGET),
        }
        .map_err(EngineError::index)?;
        // No merges in the background: `finish` merges every segment into
        // one itself, and a merge the default policy had started on some of
        // them made that fail ("segments that were merged could not be
        // found"; seen on 313,903 documents of AgentWorkers/skills).
        writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        Ok(Self {
            dir: dir.to_path_buf(),
            writer,
            fields,
            docs: file("docs.ndjson")?,
            offsets: file("offsets.bin")?,
            source_rows: file("sources.bin")?,
            skill_rows: file("skills.bin")?,
            card_rows: file("cards.bin")?,
            vectors: file("vectors.f32")?,
            signs: file("vectors.sign")?,
            sign_buffer: Vec::new(),
            codes: file("vectors.i8")?,
            code_buffer: Vec::new(),
            scales: file("vectors.scale")?,
            written: 0,
            rows: 0,
            dimensions: 0,
            sources: Vec::new(),
        })
    }

    fn add_batch(&mut self, batch: &bytes::Bytes, part_source: &str) -> Result<(), EngineError> {
        for line in batch.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let mut doc: Value = serde_json::from_slice(line)
                .map_err(|e| EngineError::Artifact(format!("a document is not JSON: {e}")))?;
            self.add(&mut doc, part_source)?;
        }
        Ok(())
    }

    fn add(&mut self, doc: &mut Value, part_source: &str) -> Result<(), EngineError> {
        let io = |e: std::io::Error| EngineError::Io(e.to_string());
        let vector: Option<Vec<f32>> = doc
            .get("_vectors")
            .and_then(|v| v.get("default"))
            .and_then(|v| v.get("embeddings"))
            .and_then(Value::as_array)
            .map(|values| {
                values
                    .iter()
                    .map(|x| x.as_f64().unwrap_or(0.0) as f32)
                    .collect()
            });
        if let Some(object) = doc.as_object_mut() {
            object.remove("_vectors");
        }
        let source = doc
            .get("source")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or(part_source)
            .to_string();
        let source_index = match self.sources.iter().position(|s| *s == source) {
            Some(at) => at,
            None => {
                self.sources.push(source.clone());
                self.sources.len() - 1
            }
        };
        let row = self.rows;
        let mut tantivy_doc = TantivyDocument::default();
        for ((name, _), field) in WEIGHTED_FIELDS.iter().zip(self.fields.text) {
            match doc.get(*name) {
                Some(Value::String(text)) => tantivy_doc.add_text(field, text),
                Some(Value::Array(items)) => {
                    for item in items.iter().filter_map(Value::as_str) {
                        tantivy_doc.add_text(field, item);
                    }
                }
                _ => {}
            }
        }
        tantivy_doc.add_text(self.fields.source, &source);
        let text = |key: &str| doc.get(key).and_then(Value::as_str).unwrap_or_default();
        if let Some(kind) = doc.get("kind").and_then(Value::as_str) {
            tantivy_doc.add_text(self.fields.kind, kind);
            let name = agentfinder_skills_reader::copies::name_key(text("skill_name"));
            if kind == agentfinder_skills_reader::contract::KIND_SKILL && !name.is_empty() {
                tantivy_doc.add_text(self.fields.name, &name);
            }
        }
        let card = agentfinder_skills_reader::copies::card_text(
            text("skill_name"),
            text("skill_description"),
        );
        tantivy_doc.add_u64(self.fields.row, row);
        self.writer
            .add_document(tantivy_doc)
            .map_err(EngineError::index)?;

        let line = serde_json::to_vec(doc).map_err(|e| EngineError::Io(e.to_string()))?;
        self.offsets
            .write_all(&self.written.to_le_bytes())
            .map_err(io)?;
        self.docs.write_all(&line).map_err(io)?;
        self.docs.write_all(b"\n").map_err(io)?;
        self.written += line.len() as u64 + 1;
        self.source_rows
            .write_all(&(source_index as u16).to_le_bytes())
            .map_err(io)?;
        let skill = skill_digest(&agentfinder_skills_reader::contract::skill_key_of(doc));
        self.skill_rows
            .write_all(&skill.to_le_bytes())
            .map_err(io)?;
        // A skill without a card is a card of its own.
        let card = card.map_or(skill, |card| skill_digest(&card));
        self.card_rows.write_all(&card.to_le_bytes()).map_err(io)?;
        if self.dimensions == 0 {
            if let Some(v) = &vector {
                self.dimensions = v.len();
                // Earlier rows had none: zero vectors keep rows aligned.
                let zeros = vec![0f32; self.dimensions];
                for _ in 0..row {
                    self.write_vector(&zeros)?;
                }
            }
        }
        if self.dimensions > 0 {
            let mut v = vector.unwrap_or_default();
            v.resize(self.dimensions, 0.0);
            self.write_vector(&v)?;
        }
        self.rows += 1;
        Ok(())
    }

    /// Appends one row's vector in each form a search reads: the f32
    /// components, their sign bits, and their codes and scale.
    fn write_vector(&mut self, v: &[f32]) -> Result<(), EngineError> {
        let io = |e: std::io::Error| EngineError::Io(e.to_string());
        self.vectors
            .write_all(bytemuck::cast_slice(v))
            .map_err(io)?;
        self.sign_buffer.clear();
        crate::nearest::push_sign_bits(v, &mut self.sign_buffer);
        self.signs
            .write_all(bytemuck::cast_slice(&self.sign_buffer))
            .map_err(io)?;
        self.code_buffer.clear();
        let scale = crate::nearest::push_codes(v, &mut self.code_buffer);
        self.codes
            .write_all(bytemuck::cast_slice(&self.code_buffer))
            .map_err(io)?;
        self.scales.write_all(&scale.to_le_bytes()).map_err(io)
    }

    fn finish(mut self, key: &str, embedder: Option<Value>) -> Result<(), EngineError> {
        let io = |e: std::io::Error| EngineError::Io(e.to_string());
        self.writer.commit().map_err(EngineError::index)?;
        // One segment: a search then prunes over one posting list per term
        // instead of one per segment (measured on 124,792 documents in 4
        // segments: a query of common words 13 ms, in one, 9.8 ms).
        let segments = self
            .writer
            .index()
            .searchable_segment_ids()
            .map_err(EngineError::index)?;
        if segments.len() > 1 {
            self.writer
                .merge(&segments)
                .wait()
                .map_err(EngineError::index)?;
        }
        self.writer
            .wait_merging_threads()
            .map_err(EngineError::index)?;
        self.offsets
            .write_all(&self.written.to_le_bytes())
            .map_err(io)?;
        for mut file in [
            self.docs,
            self.offsets,
            self.source_rows,
            self.skill_rows,
            self.card_rows,
            self.vectors,
            self.signs,
            self.codes,
            self.scales,
        ] {
            file.flush().map_err(io)?;
            file.get_ref().sync_all().map_err(io)?;
        }
        let meta = Meta {
            format: FORMAT,
            key: key.to_string(),
            rows: self.rows,
            dimensions: self.dimensions,
            sources: self.sources,
            embedder,
        };
        let bytes = serde_json::to_vec_pretty(&meta).map_err(|e| EngineError::Io(e.to_string()))?;
        // Written last: its presence means the folder is complete.
        std::fs::write(self.dir.join("meta.json"), bytes).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_segments_are_merged_into_one() {
        // Eight indexing threads leave up to eight segments at the commit,
        // enough for tantivy's default merge policy to start merging some
        // of them while `finish` merges them all.
        for round in 0..3 {
            let dir = tempfile::tempdir().expect("a temporary folder");
            let mut sink = Sink::with_writer_threads(dir.path(), Some(8)).expect("a sink");
            for n in 0..2_000 {
                let mut doc = serde_json::json!({
                    "skill_key": format!("s:r:skills/{n}/SKILL.md"),
                    "skill_name": format!("skill {n}"),
                    "content": format!("words of document {n} and {}", n % 7),
                    "source": "s",
                });
                sink.add(&mut doc, "s").expect("a document added");
            }
            sink.finish("key", None)
                .unwrap_or_else(|e| panic!("round {round}: {e}"));
            let index = Index::open_in_dir(dir.path().join("tantivy")).expect("an index");
            let segments = index.searchable_segment_ids().expect("segments");
            assert_eq!(segments.len(), 1, "round {round}");
            let reader = index.reader().expect("a reader");
            assert_eq!(reader.searcher().num_docs(), 2_000);
        }
    }

    #[test]
    fn a_long_query_is_cut_to_its_first_words() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let mut sink = Sink::create(dir.path()).expect("a sink");
        for (n, name) in ["deploy", "rollback"].iter().enumerate() {
            let mut doc = serde_json::json!({
                "skill_key": format!("s:r:skills/{n}/SKILL.md"),
                "skill": name,
                "skill_name": name,
                "content": format!("how to {name} a service"),
                "source": "s",
            });
            sink.add(&mut doc, "s").expect("a document added");
        }
        sink.finish("key", None).expect("finished");
        let engine = crate::Engine::open_dir(dir.path()).expect("opened");
        // 2 KB of distinct long words, then the one that matters.
        let filler: Vec<String> = (0..300).map(|n| format!("zzword{n}")).collect();
        let long = format!("{} rollback", filler.join(" "));
        let words = engine.query_words(&long);
        assert_eq!(words.len(), crate::MAX_QUERY_WORDS);
        assert_eq!(words[0], "zzword0");
        // The first words are kept: a short query still finds its skill.
        let found = engine
            .search(&crate::EngineQuery {
                text: "rollback the service",
                limit: 1,
                ..Default::default()
            })
            .expect("searched");
        assert_eq!(found.results.len(), 1);
        assert_eq!(found.results[0].display_name, "rollback");
    }

    /// A skill document of `source` for the engine tests.
    fn skill_doc(
        source: &str,
        folder: &str,
        name: &str,
        description: &str,
        updated: &str,
    ) -> Value {
        serde_json::json!({
            "skill_key": format!("{source}:o/r:{folder}/SKILL.md"),
            "source": source,
            "repo": format!("{source}/skills"),
            "path": format!("{folder}/SKILL.md"),
            "url": format!("https://example.com/{source}/{folder}"),
            "kind": "skill",
            "skill": name,
            "skill_name": name,
            "skill_description": description,
            "content": description,
            "last_updated": updated,
        })
    }

    #[test]
    fn copies_are_one_result_shown_by_the_oldest_and_a_name_query_finds_its_skill() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let mut sink = Sink::create(dir.path()).expect("a sink");
        let description = "Merge, split and fill PDF files";
        for mut doc in [
            // A copy, newer, whose body says "merge pdf" more: it ranks
            // above the original.
            {
                let mut copy = skill_doc(
                    "copies",
                    "x/pdf",
                    "pdf",
                    description,
                    "2026-05-01T00:00:00Z",
                );
                copy["content"] = Value::from("merge pdf merge pdf merge pdf files");
                copy
            },
            skill_doc(
                "anthropics",
                "skills/pdf",
                "PDF",
                &format!("  {description} "),
                "2026-02-04T02:09:36Z",
            ),
            skill_doc(
                "copies",
                "y/pdf",
                "pdf",
                description,
                "2026-06-01T00:00:00Z",
            ),
            skill_doc(
                "other",
                "pdf-tools",
                "pdf-tools",
                "Merge PDF files: pdf merge, pdf split, pdf pages",
                "2026-01-01T00:00:00Z",
            ),
            skill_doc(
                "other",
                "gif",
                "gif",
                "Make looping GIFs",
                "2026-01-01T00:00:00Z",
            ),
        ] {
            sink.add(&mut doc, "s").expect("a document added");
        }
        sink.finish("key", None).expect("finished");
        let engine = crate::Engine::open_dir(dir.path()).expect("opened");
        let search = |text: &str| {
            engine
                .search(&crate::EngineQuery {
                    text,
                    limit: 5,
                    ..Default::default()
                })
                .expect("searched")
        };
        let found = search("merge pdf");
        let shown: Vec<(String, String)> = found
            .results
            .iter()
            .map(|r| (r.metadata.source_id.clone(), r.metadata.path.clone()))
            .collect();
        // Three copies are one result, shown by the oldest; pdf-tools is
        // the other.
        assert_eq!(shown.len(), 2, "{shown:?}");
        assert!(
            shown.contains(&("anthropics".into(), "skills/pdf/SKILL.md".into())),
            "{shown:?}"
        );
        let pdf = found
            .results
            .iter()
            .find(|r| r.metadata.source_id == "anthropics")
            .expect("the original");
        let others: Vec<&str> = pdf
            .metadata
            .also_at
            .iter()
            .filter_map(|a| a["path"].as_str())
            .collect();
        assert_eq!(others.len(), 2, "{others:?}");
        assert!(others.contains(&"x/pdf/SKILL.md") && others.contains(&"y/pdf/SKILL.md"));

        // "PDF" is the name of a skill: that skill first, although
        // pdf-tools says "pdf" more often.
        let found = search("PDF");
        assert_eq!(found.results[0].metadata.skill, "PDF");
        assert_eq!(found.results[0].metadata.source_id, "anthropics");
        let found = search("pdf tools");
        assert_eq!(found.results[0].metadata.skill, "pdf-tools");
    }
}
