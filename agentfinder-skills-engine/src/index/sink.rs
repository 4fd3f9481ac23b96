//! Writing a local index: each document into tantivy and the side files,
//! streamed, then one segment and `meta.json` last.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;
use tantivy::{Index, TantivyDocument};

use agentfinder_skills_reader::contract::{skill_key_of, KIND_SKILL};
use agentfinder_skills_reader::rules::copies::name_key;

use super::{schema, skill_digest, Fields, Meta, FORMAT, WEIGHTED_FIELDS};
use crate::error::EngineError;

/// Bytes of tantivy's indexing buffer.
const WRITER_BUDGET: usize = 64 * 1024 * 1024;

/// Where a build writes.
pub(crate) struct Sink {
    dir: PathBuf,
    writer: tantivy::IndexWriter,
    fields: Fields,
    docs: BufWriter<std::fs::File>,
    offsets: BufWriter<std::fs::File>,
    source_rows: BufWriter<std::fs::File>,
    skill_rows: BufWriter<std::fs::File>,
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
    pub(crate) fn create(dir: &Path) -> Result<Self, EngineError> {
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

    pub(crate) fn add_batch(
        &mut self,
        batch: &bytes::Bytes,
        part_source: &str,
    ) -> Result<(), EngineError> {
        for line in batch.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let mut doc: Value = serde_json::from_slice(line)
                .map_err(|e| EngineError::Artifact(format!("a document is not JSON: {e}")))?;
            self.add(&mut doc, part_source)?;
        }
        Ok(())
    }

    pub(crate) fn add(&mut self, doc: &mut Value, part_source: &str) -> Result<(), EngineError> {
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
            let name = name_key(text("skill_name"));
            if kind == KIND_SKILL && !name.is_empty() {
                tantivy_doc.add_text(self.fields.name, &name);
            }
        }
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
        let skill = skill_digest(&skill_key_of(doc));
        self.skill_rows
            .write_all(&skill.to_le_bytes())
            .map_err(io)?;
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

    pub(crate) fn finish(mut self, key: &str, embedder: Option<Value>) -> Result<(), EngineError> {
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
        assert_eq!(
            words.len(),
            agentfinder_skills_reader::rules::query::MAX_QUERY_WORDS
        );
        assert_eq!(words[0], "zzword0");
        // The first words are kept: a short query still finds its skill.
        let found = engine
            .search(&crate::EngineQuery {
                text: "rollback the service",
                limit: 1,
                ..Default::default()
            })
            .expect("searched");
        assert_eq!(found.hits.len(), 1);
        assert_eq!(found.hits[0].text("skill"), "rollback");
    }
}
