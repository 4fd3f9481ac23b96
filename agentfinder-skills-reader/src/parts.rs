//! The shared-parts layout of commit artifacts (schema 5): documents that
//! did not change between commits are stored once.
//!
//! A tree of immutable, content-addressed objects, in the manner of Apache
//! Iceberg (snapshot -> manifest list -> manifests -> data files):
//!
//! ```text
//! commits/<id>/_SUCCESS          vouches for manifest.json (as before)
//! commits/<id>/manifest.json     layout "parts"; parts.buckets: 1,024 bucket digests
//! parts/buckets/<sha256>.json    one bucket: the entries of the SKILL.md paths
//!                                that hash into it, sorted by path
//! parts/packs/<sha256>.ndjson    documents, appended by the build that first
//!                                made them; an entry names its byte range
//! ```
//!
//! An entry is everything one SKILL.md contributes to an artifact: the byte
//! range of its documents in a pack (with their sha256), its catalog entry
//! and its findings lines. A commit that changes four files writes one small
//! pack, the four buckets those files hash into, and its manifest; every
//! other bucket is shared, by digest, with the commit before it.
//!
//! The complete files are composed, never stored per commit:
//! `hf-skills.ndjson` is every entry's range in path order;
//! `ai-catalog.json` is [`PartsIndex::catalog_head`], the entries' catalog
//! objects joined by [`CATALOG_NEXT`], and [`CATALOG_TAIL`];
//! `findings.ndjson` is [`PartsIndex::findings_head`] and every entry's lines.
//! Composition verifies every object it reads: a bucket against its name,
//! each document range against its entry's sha256.

use std::future::Future;

use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStoreExt};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::artifact::ReadError;
use crate::contract::{ArtifactLocation, Manifest, CATALOG_FILE, DOCUMENTS_FILE, FINDINGS_FILE};
use crate::documents::{line_cut, StreamError};
use crate::store::Store;

/// [`Manifest::layout`] of an artifact whose data files are composed from parts.
pub const LAYOUT_PARTS: &str = "parts";
/// Folder of the bucket manifests, at the root of a (source's) store.
pub const BUCKETS_DIR: &str = "parts/buckets";
/// Folder of the document packs.
pub const PACKS_DIR: &str = "parts/packs";
/// Buckets the paths of a build are spread over. Fixed: a commit built with
/// another count would share no bucket with its parent. 1,024 keeps both
/// sides small on real collections: on AgentWorkers/skills (18,415 skills,
/// about 19 changed files a commit) a bucket is about 24 KB and a manifest
/// 88 KB; a 1,000-commit backfill wrote 448 MB of buckets (with 256
/// buckets of about 75 KB, 1.4 GB).
pub const BUCKET_COUNT: u32 = 1024;
/// Bytes before the first catalog object, after [`PartsIndex::catalog_head`].
pub const CATALOG_FIRST: &str = "\n    ";
/// Bytes between two catalog objects.
pub const CATALOG_NEXT: &str = ",\n    ";
/// Bytes after the last catalog object.
pub const CATALOG_TAIL: &str = "\n  ]\n}\n";

/// The root of a commit's parts: `manifest.json`'s `parts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartsIndex {
    /// How many buckets paths are spread over ([`BUCKET_COUNT`]).
    pub bucket_count: u32,
    /// The sha256 of each bucket's object, by bucket number; `""` for an
    /// empty bucket.
    pub buckets: Vec<String>,
    /// `ai-catalog.json` up to the first catalog object.
    pub catalog_head: String,
    /// `findings.ndjson` lines before any file's (the marketplace file's).
    pub findings_head: String,
}

impl PartsIndex {
    /// One digest for everything the index names: equal for two artifacts
    /// exactly when their composed files are equal (a commit and the
    /// `latest/` promoted from it share it).
    pub fn root(&self) -> String {
        let bytes = serde_json::to_vec(self).unwrap_or_default();
        hex::encode(Sha256::digest(bytes))
    }
}

/// One bucket object: the entries of the paths that hash into it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    /// Sorted by path.
    pub entries: Vec<PartEntry>,
}

/// What one SKILL.md contributes to an artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartEntry {
    /// Path of the SKILL.md in the source.
    pub path: String,
    /// The builder's digest of everything the entry was made from (the
    /// file's blob, its path, the commit that last changed it, the
    /// configuration, the builder's version): an entry with the same key is
    /// reused, not rebuilt.
    pub key: String,
    /// The git blob id of the file, where the source is a git repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// The commit (or folder version) the documents are pinned to: the
    /// newest one at or before the built commit that changed the file.
    pub commit: String,
    /// When `commit` changed the file, Unix seconds; `None` when the
    /// history does not reach that far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_at: Option<i64>,
    /// The history walk stopped at its depth first: the file changed at or
    /// before `commit`, at `changed_at` or earlier (schema 6).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub changed_at_or_before: bool,
    /// Where its documents are; `None` for a skipped file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documents: Option<PartRef>,
    /// Documents in the range.
    pub document_count: u64,
    /// `skill` documents in the range (0 or 1).
    pub skill_count: u64,
    /// The skill's name, for the duplicate-name check across files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its catalog object, serialised; `None` for a skipped file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog: Option<String>,
    /// Its lines of `findings.ndjson`, each ending in a newline.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub findings: String,
}

/// A byte range of a pack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartRef {
    /// sha256 of the pack (its name).
    pub pack: String,
    /// First byte.
    pub offset: u64,
    /// Bytes.
    pub length: u64,
    /// sha256 of the range.
    pub sha256: String,
}

/// The object of a bucket.
pub fn bucket_path(sha256: &str) -> Path {
    Path::from(format!("{BUCKETS_DIR}/{sha256}.json"))
}

/// The object of a pack.
pub fn pack_path(sha256: &str) -> Path {
    Path::from(format!("{PACKS_DIR}/{sha256}.ndjson"))
}

/// The bucket `path` belongs in, of `count`.
pub fn bucket_of(path: &str, count: u32) -> usize {
    let digest = Sha256::digest(path.as_bytes());
    let head = u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]);
    (head % count.max(1)) as usize
}

/// Serialises a bucket and names it: `(sha256, bytes)`.
pub fn encode_bucket(bucket: &Bucket) -> (String, Bytes) {
    let bytes = serde_json::to_vec(bucket).unwrap_or_default();
    (hex::encode(Sha256::digest(&bytes)), Bytes::from(bytes))
}

/// The parts `manifest`'s data files are composed from, when they are
/// (`layout` is [`LAYOUT_PARTS`]); `None` when the files are stored.
pub fn composed_index(manifest: &Manifest) -> Option<&PartsIndex> {
    manifest
        .parts
        .as_ref()
        .filter(|_| manifest.layout.as_deref() == Some(LAYOUT_PARTS))
}

fn corrupt(location: &ArtifactLocation, file: &str, message: String) -> ReadError {
    ReadError::Invalid {
        location: location.to_string(),
        file: file.to_string(),
        line: None,
        message: format!("{message}: the artifact's parts are damaged"),
    }
}

/// Reads one bucket, checked against its name.
pub async fn read_bucket(
    store: &Store,
    location: &ArtifactLocation,
    sha256: &str,
) -> Result<Bucket, ReadError> {
    let path = bucket_path(sha256);
    let bytes = match store.inner.get(&path).await {
        Ok(got) => got.bytes().await.map_err(|e| ReadError::store(&path, &e))?,
        Err(object_store::Error::NotFound { .. }) => {
            return Err(corrupt(location, path.as_ref(), "missing".into()))
        }
        Err(e) => return Err(ReadError::store(&path, &e)),
    };
    if hex::encode(Sha256::digest(&bytes)) != sha256 {
        return Err(corrupt(
            location,
            path.as_ref(),
            "does not match its name".into(),
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| ReadError::Invalid {
        location: location.to_string(),
        file: path.to_string(),
        line: Some(e.line()),
        message: e.to_string(),
    })
}

/// Every entry `index` names, sorted by path (the order of the composed files).
pub async fn read_entries(
    store: &Store,
    location: &ArtifactLocation,
    index: &PartsIndex,
) -> Result<Vec<PartEntry>, ReadError> {
    // The futures made up front: a closure inside the stream would make
    // this future not `Send` for every lifetime (rust-lang/rust#102211).
    let reads: Vec<_> = index
        .buckets
        .iter()
        .filter(|b| !b.is_empty())
        .map(|sha| read_bucket(store, location, sha.as_str()))
        .collect();
    let buckets: Vec<Result<Bucket, ReadError>> =
        futures::stream::iter(reads).buffered(16).collect().await;
    let mut entries = Vec::new();
    for bucket in buckets {
        entries.extend(bucket?.entries);
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}

/// `ai-catalog.json` composed from `entries`.
pub fn compose_catalog(index: &PartsIndex, entries: &[PartEntry]) -> Vec<u8> {
    let mut out = index.catalog_head.clone().into_bytes();
    let mut first = true;
    for catalog in entries.iter().filter_map(|e| e.catalog.as_deref()) {
        out.extend_from_slice(if first { CATALOG_FIRST } else { CATALOG_NEXT }.as_bytes());
        out.extend_from_slice(catalog.as_bytes());
        first = false;
    }
    out.extend_from_slice(CATALOG_TAIL.as_bytes());
    out
}

/// `findings.ndjson` composed from `entries`.
pub fn compose_findings(index: &PartsIndex, entries: &[PartEntry]) -> Vec<u8> {
    let mut out = index.findings_head.clone().into_bytes();
    for entry in entries {
        out.extend_from_slice(entry.findings.as_bytes());
    }
    out
}

/// A run of entries whose documents are adjacent in one pack: one read.
struct Run<'a> {
    pack: &'a str,
    start: u64,
    end: u64,
    parts: Vec<&'a PartRef>,
}

fn runs(entries: &[PartEntry]) -> Vec<Run<'_>> {
    let mut runs: Vec<Run<'_>> = Vec::new();
    for part in entries.iter().filter_map(|e| e.documents.as_ref()) {
        if part.length == 0 {
            continue;
        }
        match runs.last_mut() {
            Some(run) if run.pack == part.pack && run.end == part.offset => {
                run.end += part.length;
                run.parts.push(part);
            }
            _ => runs.push(Run {
                pack: &part.pack,
                start: part.offset,
                end: part.offset + part.length,
                parts: vec![part],
            }),
        }
    }
    runs
}

/// Streams the documents of `entries` (in their order) to `consume`, in
/// batches of whole lines of at most `max_bytes`, checking each entry's
/// range against its sha256 before any of it is passed on.
pub async fn for_each_document_batch<E, F, Fut>(
    store: &Store,
    location: &ArtifactLocation,
    entries: &[PartEntry],
    max_bytes: usize,
    mut consume: F,
) -> Result<(), StreamError<E>>
where
    F: FnMut(Bytes) -> Fut,
    Fut: Future<Output = Result<(), E>>,
{
    let mut pending = BytesMut::new();
    for run in runs(entries) {
        let path = pack_path(run.pack);
        let options = GetOptions {
            range: Some(GetRange::Bounded(run.start..run.end)),
            ..Default::default()
        };
        let got = match store.inner.get_opts(&path, options).await {
            Ok(got) => got,
            Err(object_store::Error::NotFound { .. }) => {
                return Err(StreamError::Read(corrupt(
                    location,
                    path.as_ref(),
                    "missing".into(),
                )))
            }
            Err(e) => return Err(StreamError::Read(ReadError::store(&path, &e))),
        };
        let mut stream = got.into_stream();
        let mut parts = run.parts.iter();
        let mut current = parts.next().copied();
        let (mut hasher, mut left) = (Sha256::new(), current.map_or(0, |p| p.length));
        let mut checked = BytesMut::new();
        while let Some(chunk) = stream.next().await {
            let mut chunk = chunk.map_err(|e| StreamError::Read(ReadError::store(&path, &e)))?;
            while !chunk.is_empty() {
                let Some(part) = current else {
                    return Err(StreamError::Read(corrupt(
                        location,
                        path.as_ref(),
                        "longer than its entries say".into(),
                    )));
                };
                let take = (left as usize).min(chunk.len());
                let piece = chunk.split_to(take);
                hasher.update(&piece);
                checked.extend_from_slice(&piece);
                left -= take as u64;
                if left == 0 {
                    let sha = hex::encode(std::mem::take(&mut hasher).finalize());
                    if sha != part.sha256 {
                        return Err(StreamError::Read(corrupt(
                            location,
                            path.as_ref(),
                            format!(
                                "bytes {}..{} do not match their sha256",
                                part.offset,
                                part.offset + part.length
                            ),
                        )));
                    }
                    pending.extend_from_slice(&checked);
                    checked.clear();
                    current = parts.next().copied();
                    left = current.map_or(0, |p| p.length);
                    while pending.len() >= max_bytes {
                        // Whole parts end in a newline: a cut is always found.
                        let Some(cut) = line_cut(&pending, max_bytes) else {
                            break;
                        };
                        consume(pending.split_to(cut).freeze())
                            .await
                            .map_err(StreamError::Consumer)?;
                    }
                }
            }
        }
        if current.is_some() {
            return Err(StreamError::Read(corrupt(
                location,
                path.as_ref(),
                "shorter than its entries say".into(),
            )));
        }
    }
    if !pending.is_empty() {
        consume(pending.freeze())
            .await
            .map_err(StreamError::Consumer)?;
    }
    Ok(())
}

/// The whole of one composed data file in memory (tests, `verify`'s catalog).
pub async fn compose_file(
    store: &Store,
    location: &ArtifactLocation,
    index: &PartsIndex,
    file: &str,
) -> Result<Bytes, ReadError> {
    let entries = read_entries(store, location, index).await?;
    match file {
        CATALOG_FILE => Ok(Bytes::from(compose_catalog(index, &entries))),
        FINDINGS_FILE => Ok(Bytes::from(compose_findings(index, &entries))),
        DOCUMENTS_FILE => {
            let mut out = BytesMut::new();
            let result = for_each_document_batch(store, location, &entries, 8 << 20, |b| {
                out.extend_from_slice(&b);
                async { Ok::<(), ReadError>(()) }
            })
            .await;
            match result {
                Ok(()) => Ok(out.freeze()),
                Err(StreamError::Read(e) | StreamError::Consumer(e)) => Err(e),
            }
        }
        other => Err(corrupt(location, other, "not a composed file".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, pack: &str, offset: u64, length: u64) -> PartEntry {
        PartEntry {
            path: path.into(),
            key: "k".into(),
            blob: None,
            commit: "c".into(),
            changed_at: None,
            changed_at_or_before: false,
            documents: Some(PartRef {
                pack: pack.into(),
                offset,
                length,
                sha256: String::new(),
            }),
            document_count: 1,
            skill_count: 1,
            name: None,
            catalog: Some(format!("{{\"p\":\"{path}\"}}")),
            findings: String::new(),
        }
    }

    #[test]
    fn adjacent_ranges_of_one_pack_are_read_at_once() {
        let entries = [
            entry("a", "p1", 0, 10),
            entry("b", "p1", 10, 5),
            entry("c", "p2", 0, 3),
            entry("d", "p1", 40, 2),
        ];
        let runs = runs(&entries);
        let shape: Vec<(&str, u64, u64, usize)> = runs
            .iter()
            .map(|r| (r.pack, r.start, r.end, r.parts.len()))
            .collect();
        assert_eq!(
            shape,
            [("p1", 0, 15, 2), ("p2", 0, 3, 1), ("p1", 40, 42, 1)]
        );
    }

    #[test]
    fn the_catalog_is_the_head_the_objects_and_the_tail() {
        let index = PartsIndex {
            bucket_count: 1,
            buckets: vec![],
            catalog_head: "{\n  \"entries\": [".into(),
            findings_head: String::new(),
        };
        let empty = compose_catalog(&index, &[]);
        let empty: serde_json::Value = serde_json::from_slice(&empty).unwrap();
        assert_eq!(empty["entries"], serde_json::json!([]));
        let two = compose_catalog(&index, &[entry("a", "p", 0, 1), entry("b", "p", 1, 1)]);
        let two: serde_json::Value = serde_json::from_slice(&two).unwrap();
        assert_eq!(two["entries"][1]["p"], "b");
    }

    #[test]
    fn buckets_spread_paths_and_stay_put() {
        let a = bucket_of("skills/pdf/SKILL.md", BUCKET_COUNT);
        assert_eq!(a, bucket_of("skills/pdf/SKILL.md", BUCKET_COUNT));
        let used: std::collections::HashSet<usize> = (0..2000)
            .map(|i| bucket_of(&format!("s/{i}/SKILL.md"), BUCKET_COUNT))
            .collect();
        assert!(used.len() > 200, "{}", used.len());
    }
}
