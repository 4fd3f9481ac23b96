//! The shared-parts layout of commit artifacts (schema 5; two levels
//! from schema 8): documents that did not change between commits are
//! stored once.
//!
//! A tree of immutable, content-addressed objects, in the manner of Apache
//! Iceberg (snapshot -> manifest list -> manifests -> data files) and git's
//! tree of trees:
//!
//! ```text
//! commits/<id>/_SUCCESS          vouches for manifest.json (as before)
//! commits/<id>/manifest.json     layout "parts"; parts.lists: 512 list digests
//!                                (schema 5 to 7: parts.buckets, 1,024 bucket digests)
//! parts/lists/<sha256>.json      (8) one list: the digests of 16 buckets
//! parts/buckets/<sha256>.json    one bucket: the entries of the SKILL.md paths
//!                                that hash into it, sorted by path
//! parts/packs/<sha256>.ndjson    documents, appended by the build that first
//!                                made them; an entry names its byte range
//! ```
//!
//! An entry is everything one SKILL.md contributes to an artifact: the byte
//! range of its documents in a pack (with their sha256), its catalog entry
//! and its findings lines. A commit that changes four files writes one small
//! pack, the (at most) four buckets and four lists those files hash into,
//! and its manifest; every other list and bucket is shared, by digest, with
//! the commit before it. Small buckets (8,192 of them, two or three entries
//! each on an 18,000-skill collection) make a change rewrite a few KB, and
//! the lists keep the manifest from naming every bucket.
//!
//! The complete files are composed, never stored per commit:
//! `hf-skills.ndjson` is every entry's range in path order;
//! `ai-catalog.json` is [`PartsIndex::catalog_head`], the entries' catalog
//! objects joined by [`CATALOG_NEXT`], and [`CATALOG_TAIL`];
//! `findings.ndjson` is [`PartsIndex::findings_head`] and every entry's lines.
//! Composition verifies every object it reads: a list and a bucket against
//! its name, each document range against its entry's sha256.

use bytes::Bytes;
use object_store::path::Path;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Manifest;

/// [`Manifest::layout`] of an artifact whose data files are composed from parts.
pub const LAYOUT_PARTS: &str = "parts";
/// Folder of the bucket manifests, at the root of a (source's) store.
pub const BUCKETS_DIR: &str = "parts/buckets";
/// Folder of the bucket lists (schema 8).
pub const LISTS_DIR: &str = "parts/lists";
/// Folder of the document packs.
pub const PACKS_DIR: &str = "parts/packs";
/// Buckets the paths of a build are spread over (schema 8). Fixed: a
/// commit built with another count would share no bucket with its parent.
/// On AgentWorkers/skills (18,415 skills, entries of about 2.3 KB, most of
/// it the catalog object and the findings lines) a bucket holds two or
/// three entries, about 5 KB, so a commit that changes a file rewrites
/// about 5 KB for it instead of a 37 KB bucket of 1,024; a cold build
/// writes about 7,000 buckets.
pub const BUCKET_COUNT: u32 = 8192;
/// Buckets named by one list (schema 8): [`BUCKET_COUNT`] / 16 = 512
/// lists, so the manifest names 512 digests (about 38 KB) and a changed
/// bucket rewrites a list of about 1.1 KB.
pub const LIST_SIZE: u32 = 16;
/// Buckets of schema 5 to 7, named by the manifest directly.
pub const FLAT_BUCKET_COUNT: u32 = 1024;
/// Bytes before the first catalog object, after [`PartsIndex::catalog_head`].
pub const CATALOG_FIRST: &str = "\n    ";
/// Bytes between two catalog objects.
pub const CATALOG_NEXT: &str = ",\n    ";
/// Bytes after the last catalog object.
pub const CATALOG_TAIL: &str = "\n  ]\n}\n";

/// The root of a commit's parts: `manifest.json`'s `parts`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartsIndex {
    /// How many buckets paths are spread over ([`BUCKET_COUNT`];
    /// [`FLAT_BUCKET_COUNT`] before schema 8).
    pub bucket_count: u32,
    /// Schema 5 to 7: the sha256 of each bucket's object, by bucket
    /// number; `""` for an empty bucket. Empty (and absent) from schema
    /// 8, where [`PartsIndex::lists`] name them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buckets: Vec<String>,
    /// Schema 8: buckets per list ([`LIST_SIZE`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub list_size: u32,
    /// Schema 8: the sha256 of each list's object ([`BucketList`]), by
    /// list number (list `i` names buckets `i * list_size` up to the
    /// next list's); `""` for a list of empty buckets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lists: Vec<String>,
    /// `ai-catalog.json` up to the first catalog object.
    pub catalog_head: String,
    /// `findings.ndjson` lines before any file's (the marketplace file's).
    pub findings_head: String,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One list object (schema 8): the digests of [`LIST_SIZE`] consecutive
/// buckets, `""` for an empty one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BucketList {
    /// By bucket number, from the list's first.
    pub buckets: Vec<String>,
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

/// The object of a bucket list (schema 8).
pub fn list_path(sha256: &str) -> Path {
    Path::from(format!("{LISTS_DIR}/{sha256}.json"))
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

/// Serialises a bucket list and names it: `(sha256, bytes)`.
pub fn encode_list(list: &BucketList) -> (String, Bytes) {
    let bytes = serde_json::to_vec(list).unwrap_or_default();
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

/// `ai-catalog.json` composed from `entries`.
pub fn compose_catalog(index: &PartsIndex, entries: &[PartEntry]) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = write_catalog(index, entries, &mut out); // a Vec takes every write
    out
}

/// `ai-catalog.json` composed from `entries`, written to `out` as it is
/// composed (a crawl's catalog is a hundred megabytes).
pub fn write_catalog(
    index: &PartsIndex,
    entries: &[PartEntry],
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    out.write_all(index.catalog_head.as_bytes())?;
    let mut first = true;
    for catalog in entries.iter().filter_map(|e| e.catalog.as_deref()) {
        out.write_all(if first { CATALOG_FIRST } else { CATALOG_NEXT }.as_bytes())?;
        out.write_all(catalog.as_bytes())?;
        first = false;
    }
    out.write_all(CATALOG_TAIL.as_bytes())
}

/// `findings.ndjson` composed from `entries`.
pub fn compose_findings(index: &PartsIndex, entries: &[PartEntry]) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = write_findings(index, entries, &mut out); // a Vec takes every write
    out
}

/// `findings.ndjson` composed from `entries`, written to `out`.
pub fn write_findings(
    index: &PartsIndex,
    entries: &[PartEntry],
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    out.write_all(index.findings_head.as_bytes())?;
    for entry in entries {
        out.write_all(entry.findings.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
