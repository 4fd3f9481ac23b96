//! The local index of one artifact set, on disk: built once, opened after.
//!
//! ```text
//! <cache>/<key>/tantivy/        BM25 over the searchable fields, plus `row`
//! <cache>/<key>/docs.ndjson     every document without its vectors, row order
//! <cache>/<key>/offsets.bin     u64 per row: where its line starts (and one past the end)
//! <cache>/<key>/sources.bin     u16 per row: its source, an index into meta.json's list
//! <cache>/<key>/skills.bin      u64 per row: a digest of its skill key (one hit per skill
//!                               is chosen without reading documents)
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
//! half index under a key. One build of a key runs at a time, across
//! processes too ([`cache::KeyLock`]). Documents stream through: the build holds one
//! batch and tantivy's writer buffer, whatever the number of documents.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tantivy::schema::{Field, Schema, FAST, INDEXED, STORED, STRING, TEXT};

use agentfinder_skills_reader::documents::for_each_batch;
use agentfinder_skills_reader::read::StreamError;
use agentfinder_skills_reader::sources::ArtifactSet;

pub mod cache;
pub(crate) mod sink;

use crate::error::EngineError;
use sink::Sink;

/// Version of the local index's layout; a change builds new folders.
pub const FORMAT: u32 = 7;

pub use agentfinder_skills_reader::rules::fields::WEIGHTED_FIELDS;

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

/// A local index folder, and whether this call built it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    /// The folder.
    pub dir: PathBuf,
    /// True when this call indexed the documents; false when the folder
    /// was there already (built earlier, or by another process meanwhile).
    pub fresh: bool,
}

/// Builds the local index of `set` under `cache` (a no-op when its folder
/// exists) and returns the folder. One build of a key runs at a time, in
/// this process and across processes: a build holds `<cache>/<key>.lock`,
/// and one that waited for it finds the folder done. Indexing is
/// synchronous CPU work between reads of the store (and the lock is waited
/// for by blocking): run it where blocking is allowed (a blocking thread
/// driving this future), never on a thread that answers queries.
pub async fn build(set: &ArtifactSet, cache: &Path) -> Result<Built, EngineError> {
    let key = key_of(set);
    let target = cache.join(&key);
    let done = |fresh| Built {
        dir: target.clone(),
        fresh,
    };
    if target.join("meta.json").is_file() {
        return Ok(done(false));
    }
    let io = |e: std::io::Error| EngineError::Io(format!("{}: {e}", cache.display()));
    std::fs::create_dir_all(cache).map_err(io)?;
    let _one_build = cache::KeyLock::wait(cache, &key).map_err(io)?;
    if target.join("meta.json").is_file() {
        return Ok(done(false));
    }
    let staging = tempfile::Builder::new()
        .prefix(cache::BUILD_PREFIX)
        .tempdir_in(cache)
        .map_err(io)?;
    let dir = staging.path().to_path_buf();
    // Held until the folder is renamed: a folder whose lock is free is a
    // killed build's, which `cache::tidy` removes.
    let _lock = cache::BuildLock::take(&dir).map_err(io)?;
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
        Ok(()) => Ok(done(true)),
        // Another process built it first: theirs is as good.
        Err(_) if target.join("meta.json").is_file() => {
            let _ = std::fs::remove_dir_all(&kept);
            Ok(done(false))
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
