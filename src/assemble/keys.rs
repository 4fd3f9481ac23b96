//! Entry keys: a digest of everything a skill file's entry is made from,
//! its own inputs and the build's, by which a build reuses the entries an
//! earlier one made from the same inputs ([`crate::reuse`]); and the
//! [`Planner`] that keys a build's files on the parsing thread.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use agentfinder_skills_reader::contract::SCHEMA_VERSION;

use super::digest::{build_digest, output_version};
use super::document::{BuildContext, LinkTemplates};
use super::marketplace::Marketplace;
use super::Assembler;
use crate::config::Config;
use crate::source::Change;
use crate::walk::skill_folder;

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
    /// [`digest`](crate::walk::supporting_files::digest) of its folder's files.
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
            "output_version": output_version(),
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

/// Computes the entry keys of a build's files (on the parsing thread,
/// apart from the assembler).
#[derive(Debug, Clone)]
pub struct Planner {
    keys: EntryKeys,
    changes: std::sync::Arc<HashMap<String, Change>>,
    shipped: std::sync::Arc<HashMap<String, Vec<crate::source::Entry>>>,
    commit: String,
    repo_name: String,
    descriptions: HashMap<String, String>,
}

impl Planner {
    /// The build part of every key it makes ([`EntryKeys::fingerprint`]).
    pub fn fingerprint(&self) -> [u8; 32] {
        self.keys.fingerprint()
    }

    /// The key of the file at `path` with git blob `blob` (`None`: never reused).
    pub fn key(&self, path: &str, blob: Option<&str>) -> Option<String> {
        let folder = skill_folder(path, &self.repo_name);
        let change = self.changes.get(path);
        // Documents of a file with no known change are pinned to the build.
        let pinned = if change.is_some() { "" } else { &self.commit };
        let files = self.shipped.get(path).map_or(&[][..], Vec::as_slice);
        self.keys.key(&KeyInputs {
            path,
            blob,
            change,
            pinned,
            marketplace_description: self.descriptions.get(folder).map(String::as_str),
            folder_files: &crate::walk::supporting_files::digest(files),
        })
    }
}

/// The key maker of a build of `config` on `branch` with `marketplace`
/// (keys do not depend on the commit itself, only on a file's own inputs).
pub fn entry_keys(
    config: &Config,
    branch: &str,
    marketplace: &Marketplace,
    vectors: bool,
) -> EntryKeys {
    let ctx = build_context(config, branch, marketplace);
    EntryKeys::new(&build_digest(config, vectors), &ctx)
}

/// The context of a build on `branch`, with no commit yet.
pub(super) fn build_context(
    config: &Config,
    branch: &str,
    marketplace: &Marketplace,
) -> BuildContext {
    BuildContext {
        source: config.source_id(),
        repo: config.repo().to_string(),
        branch: branch.to_string(),
        commit: String::new(),
        updated_at: String::new(),
        version: marketplace.version.clone(),
        links: link_templates(config),
        trust: config.source.trust.map(|t| t.as_str().to_string()),
    }
}

/// The URL templates of `config` (none are `None` only for a repository on a known host).
fn link_templates(config: &Config) -> LinkTemplates {
    LinkTemplates {
        blob: config.links.blob.clone(),
        raw: config.links.raw.clone(),
        tree: config.links.tree.clone(),
    }
}

impl Assembler<'_> {
    /// What computes this build's entry keys.
    pub fn planner(&self) -> Planner {
        Planner {
            keys: self.keys.clone(),
            changes: self.version.changes.clone(),
            shipped: self.version.shipped.clone(),
            commit: self.version.commit.clone(),
            repo_name: self.repo_name.clone(),
            descriptions: self
                .marketplace
                .descriptions
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
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
            trust: None,
        }
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
