//! The parse cache that outlives a run: the entries of an earlier artifact
//! of the same source (its `latest/`, or the commit a backfill built just
//! before), each keyed by everything that shaped it (the keys are made in
//! [`crate::assemble::keys`]), so a build parses, embeds and serialises
//! only the files whose inputs changed, and dates its files by walking
//! only the commits since.
//!
//! A reused entry is the earlier build's bytes, and the key covers every
//! input of those bytes, so a build that reuses is byte-identical to a cold
//! build of the same commit.

use agentfinder_skills_reader::artifact::read_manifest;
use agentfinder_skills_reader::contract::parts::{bucket_of, PartEntry};
use agentfinder_skills_reader::contract::{ArtifactLocation, Manifest};
use agentfinder_skills_reader::parts::read_tree;
use agentfinder_skills_reader::read::ReadError;
use agentfinder_skills_reader::store::Store;

use crate::source::{Change, KnownChanges};

/// The names of an artifact's buckets and lists, for the next build to
/// name again where nothing in them changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BucketTree {
    /// `(digest, entries)` of each bucket, by number (`""` for an empty one).
    pub buckets: Vec<(String, usize)>,
    /// The digest of each list, by number (schema 8; empty before).
    pub lists: Vec<String>,
}

/// The entries of an earlier artifact, in path order. A build takes the
/// entries it reuses out of it (no copy of their documents), so a base
/// serves one build.
#[derive(Debug, Default)]
pub struct Base {
    commit: String,
    /// Sorted by path. A taken entry keeps its path, commit and date (what
    /// [`Base::known_changes`] reads) and loses its key, so it is not taken twice.
    entries: Vec<PartEntry>,
    /// Its buckets and lists.
    buckets: BucketTree,
    /// The build part of the keys of its entries
    /// ([`EntryKeys::fingerprint`](crate::assemble::keys::EntryKeys::fingerprint)),
    /// when this process made them.
    fingerprint: Option<[u8; 32]>,
    known: std::sync::OnceLock<KnownChanges>,
}

impl Base {
    /// The base made of `entries`, built at `commit`, whose buckets and
    /// lists are `buckets`.
    pub fn new(commit: &str, mut entries: Vec<PartEntry>, buckets: BucketTree) -> Self {
        // Builds write entries in path order already (so this costs a
        // pass); `take_reusable` searches by path, whatever the source.
        if !entries.is_sorted_by(|a, b| a.path <= b.path) {
            entries.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        }
        Self {
            commit: commit.to_string(),
            entries,
            buckets,
            fingerprint: None,
            known: std::sync::OnceLock::new(),
        }
    }

    /// Records that this process keyed the entries with `fingerprint`.
    pub fn keyed_with(mut self, fingerprint: [u8; 32]) -> Self {
        self.fingerprint = Some(fingerprint);
        self
    }

    /// The build part of its entries' keys, when this process made them.
    pub fn fingerprint(&self) -> Option<[u8; 32]> {
        self.fingerprint
    }

    /// The commit it was built at.
    pub fn commit(&self) -> &str {
        &self.commit
    }

    /// Takes the names of the base's buckets and lists.
    pub fn take_buckets(&mut self) -> BucketTree {
        std::mem::take(&mut self.buckets)
    }

    /// The base `latest/` of `store` offers, when it holds parts of a build
    /// of `repo`; `Ok(None)` when there is none.
    pub async fn from_latest(store: &Store, repo: &str) -> Result<Option<Self>, ReadError> {
        let location = ArtifactLocation::Latest;
        let manifest: Manifest = match read_manifest(store, &location).await {
            Ok((_, manifest)) => manifest,
            Err(ReadError::Empty { .. } | ReadError::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let Some(index) = manifest.parts.as_ref() else {
            return Ok(None);
        };
        if manifest.source_repo != repo {
            return Ok(None);
        }
        let (names, entries) = read_tree(store, &location, index).await?;
        let mut sizes = vec![0usize; names.len()];
        let count = names.len() as u32;
        for entry in &entries {
            if let Some(size) = sizes.get_mut(bucket_of(&entry.path, count)) {
                *size += 1;
            }
        }
        let buckets = BucketTree {
            buckets: names.into_iter().zip(sizes).collect(),
            lists: index.lists.clone(),
        };
        Ok(Some(Self::new(&manifest.source_commit, entries, buckets)))
    }

    /// Takes the earlier entry of `path`, if it was made from the same
    /// inputs (and not taken yet).
    pub fn take_reusable(&mut self, path: &str, key: &str) -> Option<PartEntry> {
        let at = self
            .entries
            .binary_search_by(|held| held.path.as_str().cmp(path))
            .ok()?;
        let held = &mut self.entries[at];
        if key.is_empty() || held.key != key {
            return None;
        }
        Some(PartEntry {
            path: held.path.clone(),
            key: std::mem::take(&mut held.key),
            blob: held.blob.take(),
            commit: held.commit.clone(),
            changed_at: held.changed_at,
            changed_at_or_before: held.changed_at_or_before,
            documents: held.documents.take(),
            document_count: held.document_count,
            skill_count: held.skill_count,
            name: held.name.take(),
            catalog: held.catalog.take(),
            findings: std::mem::take(&mut held.findings),
        })
    }

    /// Every entry, in path order, none taken (see [`Base::take_reusable`]).
    pub fn into_entries(self) -> Vec<PartEntry> {
        self.entries
    }

    /// The entries, in path order.
    pub fn entries(&self) -> &[PartEntry] {
        &self.entries
    }

    /// When each file last changed, as of the base's commit (made on first use).
    pub fn known_changes(&self) -> &KnownChanges {
        self.known.get_or_init(|| KnownChanges {
            commit: self.commit.clone(),
            changes: self
                .entries
                .iter()
                .filter_map(|e| {
                    let time = e.changed_at?;
                    let change = Change {
                        commit: e.commit.clone(),
                        time,
                        at_or_before: e.changed_at_or_before,
                    };
                    Some((e.path.clone(), change))
                })
                .collect(),
        })
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, key: &str, changed_at: Option<i64>) -> PartEntry {
        PartEntry {
            path: path.into(),
            key: key.into(),
            blob: Some(format!("blob-{path}")),
            commit: format!("commit-{path}"),
            changed_at,
            changed_at_or_before: false,
            documents: None,
            document_count: 2,
            skill_count: 1,
            name: Some(path.into()),
            catalog: None,
            findings: String::new(),
        }
    }

    #[test]
    fn an_entry_is_taken_once_by_its_key_and_still_dates_its_file() {
        let entries = vec![entry("b", "kb", Some(2)), entry("a", "ka", Some(1))];
        let mut base = Base::new("c1", entries, BucketTree::default());
        assert_eq!(base.take_reusable("a", "wrong"), None);
        let taken = base.take_reusable("a", "ka").unwrap();
        assert_eq!(taken, entry("a", "ka", Some(1)));
        assert_eq!(base.take_reusable("a", "ka"), None, "taken twice");
        assert_eq!(base.take_reusable("a", ""), None);
        // Dating still knows the taken file (made after the take here).
        let known = base.known_changes();
        assert_eq!(known.commit, "c1");
        assert_eq!(known.changes["a"].commit, "commit-a");
        assert_eq!(known.changes["b"].time, 2);
        let paths: Vec<String> = base.into_entries().into_iter().map(|e| e.path).collect();
        assert_eq!(paths, ["a", "b"], "held in path order");
    }
}
