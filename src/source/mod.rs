//! Clone stage: where the skills come from, at one version.
//!
//! A source is a local git repository (opened in place), a remote URL (cloned
//! into a cache folder, shallow where the ref allows), or a plain folder that
//! is not a git repository. Git files are read from the object database at the
//! resolved commit, never from a working tree, so local edits, symlinked
//! content and `.gitattributes` filters cannot leak into an artifact.
//!
//! Resolving a version is cheap and comes first ([`open`]); listing and
//! reading the files ([`Snapshot::list`], [`FileReader`]) come after, so a
//! build of a commit that is already complete can stop before touching them.

pub mod ancestry;
mod bound;
mod clone;
mod first_parents;
mod folder;
mod git;
mod history;
pub mod identity;
pub mod network;
mod parent_diff;
mod reader;
mod revision;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use ancestry::{Ancestry, Lineage};
pub use folder::FOLDER_VERSION_PREFIX;
pub use history::{Change, KnownChanges};
pub use parent_diff::{FileChange, ParentChanges};
pub use reader::FileReader;
pub use revision::enclosing_repository;

/// A source could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The local path does not exist.
    #[error("source {0} does not exist")]
    Missing(String),
    /// The ref does not name a commit.
    #[error("cannot resolve `{reference}` to a commit in {source_name}: {message}")]
    Resolve {
        /// The ref asked for.
        reference: String,
        /// The source, redacted.
        source_name: String,
        /// Why.
        message: String,
    },
    /// Cloning or fetching failed.
    #[error("cannot clone or fetch {url}: {message}")]
    Fetch {
        /// The URL, redacted.
        url: String,
        /// Why, redacted.
        message: String,
    },
    /// The server of a remote source could not be reached, or refused.
    #[error("cannot clone or fetch {url}: {failure}: {message}")]
    Network {
        /// The URL, redacted.
        url: String,
        /// What kind of failure.
        failure: network::NetworkFailure,
        /// Details, redacted.
        message: String,
    },
    /// A git operation failed.
    #[error("git error in {source_name}: {message}")]
    Git {
        /// The source, redacted.
        source_name: String,
        /// Why.
        message: String,
    },
    /// A file operation failed.
    #[error("cannot read {path}: {error}")]
    Io {
        /// The path.
        path: String,
        /// Why.
        error: std::io::Error,
    },
}

/// Where a build reads from, as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    /// A local folder: a git repository, or a plain folder.
    Local(PathBuf),
    /// A URL to clone (`https://`, `ssh://`, `git@host:path`, `file://`).
    Remote(String),
}

impl SourceSpec {
    /// Classifies a `--source` value.
    pub fn parse(text: &str) -> Self {
        let is_scp_like = text.contains('@') && text.contains(':') && !text.contains("://");
        if text.contains("://") || is_scp_like {
            Self::Remote(text.to_string())
        } else {
            Self::Local(PathBuf::from(text))
        }
    }
}

/// The version of the source a build reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// Commit id (40 hex), or `folder-<digest>` for a plain folder.
    pub id: String,
    /// Commit time (for a folder, the newest file's modification time), Unix seconds.
    pub time: i64,
    /// The branch (or ref) the version was taken from.
    pub branch: String,
    /// Whether it came from git (a plain folder's id pins no commit a web link could name).
    pub is_git: bool,
}

/// An entry of the source tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Slash-separated path relative to the root (lossy if not UTF-8).
    pub path: String,
    /// Whether `path` is exact (the real path is valid UTF-8).
    pub path_is_utf8: bool,
    /// File or symlink.
    pub kind: EntryKind,
    /// Where its bytes are.
    pub object: ObjectRef,
    /// Its mode is executable (git's `100755`, a file's `x` bits).
    pub executable: bool,
}

/// The kinds of entry a build cares about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular (or executable) file.
    File,
    /// A symbolic link; reading it gives its target path.
    Symlink,
}

/// Where an entry's bytes live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectRef {
    /// A git blob.
    Blob(gix::ObjectId),
    /// A file on disk.
    File(PathBuf),
}

/// An opened source at one resolved version.
pub struct Snapshot {
    /// The resolved version.
    pub version: Version,
    /// Where it came from, with credentials removed.
    pub display: String,
    /// The URL it was cloned from, or a local clone's `origin` remote,
    /// with credentials removed; `None` for a plain folder or no remote.
    pub remote_url: Option<String>,
    inner: Inner,
}

enum Inner {
    Git(Box<git::GitSource>),
    Folder(PathBuf),
}

/// How remote sources are fetched and which branch a version records.
#[derive(Debug, Clone)]
pub struct Fetching {
    /// Where remote sources are cloned, reused across runs.
    pub cache_dir: PathBuf,
    /// Branch recorded when the ref does not name one.
    pub default_branch: String,
    /// How long a clone or fetch waits for the server to accept a connection.
    pub connect_timeout: std::time::Duration,
    /// Commits of history a clone fetches beyond the tip, to date files
    /// by their last change (`[walk] history_depth`; 0: all of it).
    pub history_depth: usize,
}

/// Every file and symlink below the folder `root` as it is on disk (its
/// working tree, even inside a git repository; `.git` and `node_modules`
/// are not entered), in path order.
pub fn list_folder(root: &Path) -> Result<Vec<Entry>, SourceError> {
    folder::list(root)
}

/// Opens `spec` at `reference` (a branch, tag or commit; the default branch
/// or HEAD when `None`). Remote sources are cloned or fetched into the cache.
pub fn open(
    spec: &SourceSpec,
    reference: Option<&str>,
    fetching: &Fetching,
) -> Result<Snapshot, SourceError> {
    let default_branch = fetching.default_branch.as_str();
    match spec {
        SourceSpec::Remote(url) => {
            let repo = clone::clone_or_fetch(url, reference, fetching, false)?;
            let display = agentfinder_skills_reader::store::redact_url(url);
            let mut snapshot = revision::resolve(repo, reference, default_branch, display.clone())?;
            snapshot.remote_url = Some(display);
            Ok(snapshot)
        }
        SourceSpec::Local(path) => {
            if !path.exists() {
                return Err(SourceError::Missing(path.display().to_string()));
            }
            match gix::open(path) {
                Ok(repo) => {
                    revision::resolve(repo, reference, default_branch, path.display().to_string())
                }
                Err(_) => folder::resolve(path, reference, default_branch),
            }
        }
    }
}

/// A git repository opened for walking its history, as a backfill does.
pub struct History {
    repo: gix::ThreadSafeRepository,
    /// Where it came from, with credentials removed.
    pub display: String,
    /// The URL it was cloned from, or its `origin` remote (see [`Snapshot::remote_url`]).
    pub remote_url: Option<String>,
    /// Branch recorded in every artifact of the walk.
    pub branch: String,
}

/// Opens `spec` with its full history: a local repository in place, or a URL
/// cloned (or fetched, deepening a shallow cache) into the cache.
pub fn open_history(
    spec: &SourceSpec,
    reference: Option<&str>,
    fetching: &Fetching,
) -> Result<History, SourceError> {
    let default_branch = fetching.default_branch.as_str();
    let (repo, display, remote_url) = match spec {
        SourceSpec::Remote(url) => {
            let display = agentfinder_skills_reader::store::redact_url(url);
            (
                clone::clone_or_fetch(url, reference, fetching, true)?,
                display.clone(),
                Some(display),
            )
        }
        SourceSpec::Local(path) => {
            if !path.exists() {
                return Err(SourceError::Missing(path.display().to_string()));
            }
            let repo = gix::open(path).map_err(|e| SourceError::Git {
                source_name: path.display().to_string(),
                message: format!("a backfill needs a git repository: {e}"),
            })?;
            let origin = revision::origin_url(&repo);
            (repo, path.display().to_string(), origin)
        }
    };
    let branch = match reference {
        Some(name) if !name.bytes().all(|b| b.is_ascii_hexdigit()) => name.to_string(),
        _ => repo
            .head_name()
            .ok()
            .flatten()
            .and_then(|n| n.shorten().to_string().into())
            .filter(|n: &String| n != "HEAD")
            .unwrap_or_else(|| default_branch.to_string()),
    };
    Ok(History {
        repo: repo.into_sync(),
        display,
        remote_url,
        branch,
    })
}

impl History {
    /// Resolves a branch, tag or commit id.
    pub fn resolve(&self, reference: &str) -> Result<gix::ObjectId, SourceError> {
        revision::resolve_commit(&self.repo.to_thread_local(), Some(reference), &self.display)
    }

    /// First-parent history from `head`, newest first, with commit times;
    /// the walk ends after the commit for which `stop` returns true.
    pub fn first_parent(
        &self,
        head: gix::ObjectId,
        stop: impl FnMut(gix::ObjectId, i64) -> bool,
    ) -> Result<Vec<(gix::ObjectId, i64)>, SourceError> {
        revision::first_parent(&self.repo.to_thread_local(), head, &self.display, stop)
    }

    /// Its history, for ordering commits by ancestry.
    pub fn ancestry(&self) -> Ancestry {
        Ancestry::new(self.repo.clone(), self.display.clone())
    }

    /// A snapshot of one commit.
    pub fn snapshot(&self, commit: gix::ObjectId) -> Result<Snapshot, SourceError> {
        let mut snapshot = revision::snapshot_at(
            self.repo.clone(),
            commit,
            self.branch.clone(),
            self.display.clone(),
        )?;
        snapshot.remote_url = self.remote_url.clone();
        Ok(snapshot)
    }
}

impl Snapshot {
    /// Wraps a resolved git source.
    fn git(version: Version, display: String, source: git::GitSource) -> Self {
        Self {
            version,
            display,
            remote_url: None,
            inner: Inner::Git(Box::new(source)),
        }
    }

    /// The history of a git source, for ordering commits by ancestry;
    /// `None` for a plain folder, whose versions have none.
    pub fn ancestry(&self) -> Option<Ancestry> {
        match &self.inner {
            Inner::Git(source) => Some(Ancestry::new(source.repo.clone(), self.display.clone())),
            Inner::Folder(_) => None,
        }
    }

    /// Lists every file and symlink of the tree. A git tree is read through
    /// object databases of its own, replaced as the listing goes, so the
    /// pack pages it maps are released (the snapshot's own database keeps
    /// none of them).
    pub fn list(&self) -> Result<Vec<Entry>, SourceError> {
        match &self.inner {
            Inner::Git(source) => source.list(),
            Inner::Folder(root) => folder::list(root),
        }
    }

    /// Every file and symlink below `folder` (`""` for the root), with
    /// their paths from the root: a git tree reads only that folder's trees.
    pub fn list_folder(&self, folder: &str) -> Result<Vec<Entry>, SourceError> {
        match &self.inner {
            Inner::Git(source) => source.list_folder(folder),
            Inner::Folder(root) => {
                let mut entries = folder::list(root)?;
                if !folder.is_empty() {
                    entries.retain(|e| {
                        e.path
                            .strip_prefix(folder)
                            .is_some_and(|rest| rest.starts_with('/'))
                    });
                }
                Ok(entries)
            }
        }
    }

    /// The file or symlink at `path`: a git tree is looked up by path,
    /// without listing it (a plain folder is listed).
    pub fn find(&self, path: &str) -> Result<Option<Entry>, SourceError> {
        match &self.inner {
            Inner::Git(source) => source.find(path),
            Inner::Folder(root) => Ok(folder::list(root)?.into_iter().find(|e| e.path == path)),
        }
    }

    /// The files this commit changed since its first parent (see
    /// [`ParentChanges`]); `None` for a plain folder, a root commit, or a
    /// parent past a shallow boundary.
    pub fn parent_changes(&self) -> Result<Option<ParentChanges>, SourceError> {
        match &self.inner {
            Inner::Git(source) => source.parent_changes(self.commit_id()?),
            Inner::Folder(_) => Ok(None),
        }
    }

    /// The same snapshot over a fresh object database. Reading blobs maps
    /// the pack files, and the mapped pages count as the process's memory
    /// for as long as the database lives (a 305 MB pack for an 18,000-skill
    /// repository): a build reads each batch through a snapshot of its own,
    /// so what one batch mapped is released before the next.
    pub fn reopened(&self) -> Result<Snapshot, SourceError> {
        let inner = match &self.inner {
            Inner::Git(source) => Inner::Git(Box::new(source.reopened()?)),
            Inner::Folder(root) => Inner::Folder(root.clone()),
        };
        Ok(Snapshot {
            version: self.version.clone(),
            display: self.display.clone(),
            remote_url: self.remote_url.clone(),
            inner,
        })
    }

    /// When each of `paths` (files of [`Snapshot::list`]) last changed, Unix
    /// seconds: for git, the newest commit of the first-parent history that
    /// touched it (none past a shallow boundary); for a plain folder, its
    /// modification time.
    /// `known` lets a git walk stop at an earlier commit whose changes are
    /// known (see [`KnownChanges`]).
    pub fn last_changed(
        &self,
        paths: &[&str],
        known: Option<&KnownChanges>,
        depth: usize,
    ) -> Result<HashMap<String, Change>, SourceError> {
        match &self.inner {
            Inner::Git(source) => source.last_changed(self.commit_id()?, paths, known, depth),
            Inner::Folder(root) => Ok(folder::modified_times(root, paths)
                .into_iter()
                .map(|(path, time)| {
                    let commit = self.version.id.clone();
                    let change = Change {
                        commit,
                        time,
                        at_or_before: false,
                    };
                    (path, change)
                })
                .collect()),
        }
    }

    /// Whether a history walk from this commit and one from its first
    /// parent stop at the same bound (see `bound`), so the parent's dates
    /// hold for what the commit left alone; true for a plain folder.
    pub fn same_history_bound_as_parent(&self, depth: usize) -> Result<bool, SourceError> {
        match &self.inner {
            Inner::Git(source) => source.same_bound_as_parent(self.commit_id()?, depth),
            Inner::Folder(_) => Ok(true),
        }
    }

    /// The commit id of a git snapshot.
    fn commit_id(&self) -> Result<gix::ObjectId, SourceError> {
        gix::ObjectId::from_hex(self.version.id.as_bytes()).map_err(|e| SourceError::Git {
            source_name: self.display.clone(),
            message: e.to_string(),
        })
    }

    /// A reader for entries' bytes; make one per thread.
    pub fn reader(&self) -> FileReader {
        match &self.inner {
            Inner::Git(source) => FileReader::Git(Box::new(source.thread_local())),
            Inner::Folder(_) => FileReader::Folder,
        }
    }
}

/// Formats Unix seconds as RFC 3339 UTC (`2026-11-30T08:00:00Z`).
pub fn rfc3339(seconds: i64) -> String {
    let time = if seconds >= 0 {
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds as u64)
    } else {
        std::time::UNIX_EPOCH
    };
    humantime::format_rfc3339_seconds(time).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_classified() {
        assert_eq!(
            SourceSpec::parse("./repo"),
            SourceSpec::Local("./repo".into())
        );
        assert!(matches!(
            SourceSpec::parse("https://github.com/o/r.git"),
            SourceSpec::Remote(_)
        ));
        assert!(matches!(
            SourceSpec::parse("git@github.com:o/r.git"),
            SourceSpec::Remote(_)
        ));
        assert!(matches!(
            SourceSpec::parse("file:///tmp/r"),
            SourceSpec::Remote(_)
        ));
    }

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_796_025_600), "2026-11-30T08:00:00Z");
    }
}
