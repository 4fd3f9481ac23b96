//! The parse cache that outlives a run: the entries of an earlier artifact
//! of the same source (its `latest/`, or the commit a backfill built just
//! before), each keyed by everything that shaped it, so a build parses,
//! embeds and serialises only the files whose inputs changed, and dates its
//! files by walking only the commits since.
//!
//! A reused entry is the earlier build's bytes, and the key covers every
//! input of those bytes, so a build that reuses is byte-identical to a cold
//! build of the same commit.

use sha2::{Digest, Sha256};

use agentfinder_skills_reader::artifact::{read_manifest, ReadError};
use agentfinder_skills_reader::contract::{ArtifactLocation, Manifest, SCHEMA_VERSION};
use agentfinder_skills_reader::parts::{bucket_of, read_entries, PartEntry};
use agentfinder_skills_reader::store::Store;

use crate::document::BuildContext;
use crate::source::{Change, KnownChanges};

/// The entries of an earlier artifact, in path order. A build takes the
/// entries it reuses out of it (no copy of their documents), so a base
/// serves one build.
#[derive(Debug, Default)]
pub struct Base {
    commit: String,
    /// Sorted by path. A taken entry keeps its path, commit and date (what
    /// [`Base::known_changes`] reads) and loses its key, so it is not taken twice.
    entries: Vec<PartEntry>,
    /// `(digest, entries)` of each bucket, by number.
    buckets: Vec<(String, usize)>,
    /// The build part of the keys of its entries ([`EntryKeys::fingerprint`]),
    /// when this process made them.
    fingerprint: Option<[u8; 32]>,
    known: std::sync::OnceLock<KnownChanges>,
}

impl Base {
    /// The base made of `entries`, built at `commit`, whose buckets are
    /// `(digest, entries)` by number, as in the parts index.
    pub fn new(commit: &str, mut entries: Vec<PartEntry>, buckets: Vec<(String, usize)>) -> Self {
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

    /// Takes `(digest, entries)` of each of the base's buckets, by number.
    pub fn take_buckets(&mut self) -> Vec<(String, usize)> {
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
        let entries = read_entries(store, &location, index).await?;
        let mut sizes = vec![0usize; index.buckets.len()];
        let count = index.buckets.len() as u32;
        for entry in &entries {
            if let Some(size) = sizes.get_mut(bucket_of(&entry.path, count)) {
                *size += 1;
            }
        }
        let buckets = index.buckets.iter().cloned().zip(sizes).collect();
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

/// Makes entry keys: a digest of one file's inputs and the build's.
///
/// A build keys every file of its snapshot (18,000 in a real collection,
/// for every commit of a backfill), so the build's part is hashed once and
/// each file's inputs are fed to the hash as they are, length-prefixed
/// (no JSON to build and escape per file).
#[derive(Debug, Clone)]
pub struct EntryKeys {
    /// sha256 of the build's inputs.
    build: [u8; 32],
}

/// What a skill file's entry is made from, besides the build.
#[derive(Debug, Clone, Copy)]
pub struct KeyInputs<'a> {
    /// Path of the SKILL.md.
    pub path: &'a str,
    /// Its git blob id; `None` where its bytes have no id.
    pub blob: Option<&'a str>,
    /// The commit that last changed it, where known.
    pub change: Option<&'a Change>,
    /// The commit its documents are pinned to when `change` is unknown
    /// (else empty).
    pub pinned: &'a str,
    /// Its description in the marketplace file.
    pub marketplace_description: Option<&'a str>,
    /// [`digest`](crate::supporting_files::digest) of its folder's files.
    pub folder_files: &'a str,
}

impl EntryKeys {
    /// The build part of every key: two key makers with the same
    /// fingerprint key a file alike.
    pub fn fingerprint(&self) -> [u8; 32] {
        self.build
    }

    /// Keys for a build shaped by `build_digest` (configuration, schema,
    /// vectors) in `ctx` (source, repository, branch, marketplace version,
    /// link templates).
    pub fn new(build_digest: &str, ctx: &BuildContext) -> Self {
        let build = serde_json::json!({
            "output_version": crate::assemble::digest::output_version(),
            "schema": SCHEMA_VERSION,
            "build": build_digest,
            "source": ctx.source,
            "repo": ctx.repo,
            "branch": ctx.branch,
            "version": ctx.version,
            "links": format!("{:?}", ctx.links),
        });
        Self {
            build: Sha256::digest(build.to_string().as_bytes()).into(),
        }
    }

    /// The key of a skill file: `None` where its bytes have no id (a plain
    /// folder, a symlink), so it is always parsed.
    pub fn key(&self, inputs: &KeyInputs<'_>) -> Option<String> {
        let KeyInputs {
            path,
            blob,
            change,
            pinned,
            marketplace_description,
            folder_files,
        } = *inputs;
        let blob = blob?;
        let mut hash = Sha256::new();
        hash.update(self.build);
        let time = change.map(|c| c.time.to_le_bytes());
        for field in [
            Some(path.as_bytes()),
            Some(blob.as_bytes()),
            change.map(|c| c.commit.as_bytes()),
            time.as_ref().map(|t| &t[..]),
            change.map(|c| {
                if c.at_or_before {
                    &b"at or before"[..]
                } else {
                    b"at"
                }
            }),
            Some(pinned.as_bytes()),
            marketplace_description.map(str::as_bytes),
            Some(folder_files.as_bytes()),
        ] {
            // Present or not, then the length: no two inputs hash alike.
            match field {
                Some(bytes) => {
                    hash.update([1]);
                    hash.update((bytes.len() as u64).to_le_bytes());
                    hash.update(bytes);
                }
                None => hash.update([0]),
            }
        }
        Some(hex::encode(hash.finalize()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(branch: &str) -> BuildContext {
        BuildContext {
            source: "s".into(),
            repo: "o/r".into(),
            branch: branch.into(),
            commit: "c".into(),
            updated_at: String::new(),
            version: None,
            links: Default::default(),
        }
    }

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
        let mut base = Base::new("c1", entries, Vec::new());
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

    #[test]
    fn a_key_changes_with_every_input_and_only_then() {
        let keys = EntryKeys::new("d", &ctx("main"));
        let change = Change {
            commit: "a".into(),
            time: 1,
            at_or_before: false,
        };
        let bounded = Change {
            at_or_before: true,
            ..change.clone()
        };
        let base = KeyInputs {
            path: "p",
            blob: Some("b1"),
            change: Some(&change),
            pinned: "a",
            marketplace_description: None,
            folder_files: "f",
        };
        let key = |inputs: KeyInputs<'_>| keys.key(&inputs).unwrap();
        let one = key(base);
        assert_eq!(one, key(base));
        assert_ne!(one, key(KeyInputs { path: "q", ..base }));
        assert_ne!(
            one,
            key(KeyInputs {
                blob: Some("b2"),
                ..base
            })
        );
        assert_ne!(
            one,
            key(KeyInputs {
                change: None,
                ..base
            })
        );
        assert_ne!(
            one,
            key(KeyInputs {
                change: Some(&bounded),
                ..base
            })
        );
        assert_ne!(
            one,
            key(KeyInputs {
                marketplace_description: Some("m"),
                ..base
            })
        );
        assert_ne!(
            one,
            key(KeyInputs {
                folder_files: "g",
                ..base
            })
        );
        let other = EntryKeys::new("d", &ctx("dev"));
        assert_ne!(Some(one.clone()), other.key(&base));
        assert_eq!(keys.key(&KeyInputs { blob: None, ..base }), None);
        // Inputs do not run into one another.
        assert_ne!(
            key(KeyInputs {
                path: "pb",
                blob: Some("1"),
                ..base
            }),
            key(KeyInputs {
                path: "p",
                blob: Some("b1"),
                ..base
            })
        );
        assert_ne!(
            key(KeyInputs {
                change: None,
                pinned: "a",
                marketplace_description: None,
                ..base
            }),
            key(KeyInputs {
                change: None,
                pinned: "",
                marketplace_description: Some("a"),
                ..base
            })
        );
    }
}
