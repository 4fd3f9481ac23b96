//! Promote stage: make `latest/` equal to a complete `commits/<commit>/`.
//!
//! Object stores have no multi-file rename, so: refuse to move `latest/` to
//! an older commit, or onto a build that shrank past the configured ratio,
//! unless forced; remove `latest/_SUCCESS`; upload every file again (no
//! server-side copy: some gateways lack it); write `latest/_SUCCESS` last. A
//! crash leaves the old complete `latest/`, a `latest/` without `_SUCCESS`
//! (readers keep what they have), or the new complete one.
//!
//! The complete files are composed from the artifact's shared parts by
//! [`materialize`](mod@materialize); [`verify`] re-reads an artifact
//! (`latest/` by default) and checks it against its `_SUCCESS` and the
//! contract.

pub mod materialize;
mod order;
pub mod verify;

pub use order::{check, check_ordered};

use object_store::PutMode;

use agentfinder_skills_reader::artifact::read_manifest;
use agentfinder_skills_reader::contract::FileDigest;
use agentfinder_skills_reader::contract::{
    ArtifactLocation, Manifest, MANIFEST_FILE, SUCCESS_FILE,
};
use agentfinder_skills_reader::read::{digest_of, get_optional, ReadError};
use agentfinder_skills_reader::store::Store;
use futures::StreamExt;
use object_store::ObjectStoreExt;

use self::materialize::{materialize, MaterializeError};
use crate::failpoint::failpoint;
use crate::lock::{with_lock, LockError, LockGuard, LockTimes, StoreLock};
use crate::source::{Ancestry, Lineage};
use crate::store::put::{
    delete, local_copy, put, put_content, upload_in_parts, Content, PartsError, WriteError,
    MULTIPART_THRESHOLD,
};
use crate::store::staging::{Staging, STAGING_PREFIX};
use crate::write::success_bytes;
use agentfinder_skills_reader::contract::parts::composed_index;

/// When promotion is allowed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PromotePolicy {
    /// Skip the age and shrink checks.
    pub force: bool,
    /// Largest allowed fall in document count, as a ratio of `latest/`'s.
    pub max_shrink_ratio: f64,
}

/// What promotion did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Promotion {
    /// `latest/` now holds the commit; it held `previous` before.
    Promoted {
        /// The commit `latest/` held, if any.
        previous: Option<String>,
    },
    /// `latest/` already held this commit.
    AlreadyLatest,
}

/// Promotion failed or was refused.
#[derive(Debug, thiserror::Error)]
pub enum PromoteError {
    /// The commit is older than what `latest/` holds, by date (history
    /// could not order them: `order` says why).
    #[error("refusing to promote {commit} (committed {time}): latest/ holds {latest}, committed {latest_time}, which is newer ({order}); use --force to move latest/ backwards")]
    Older {
        /// Commit to promote.
        commit: String,
        /// Its time.
        time: String,
        /// Commit in `latest/`.
        latest: String,
        /// Its time.
        latest_time: String,
        /// Why dates decided.
        order: String,
    },
    /// The commit is an ancestor of what `latest/` holds.
    #[error("refusing to promote {commit}: it is an ancestor of {latest}, which latest/ holds, so latest/ would move backwards; use --force to move latest/ backwards")]
    Behind {
        /// Commit to promote.
        commit: String,
        /// Commit in `latest/`.
        latest: String,
    },
    /// `latest/` holds a build of another repository.
    #[error("refusing to promote {commit} of {repo}: latest/ holds {latest} of {latest_repo}, another repository; use a store (or prefix) per repository, or --force to replace it")]
    OtherRepository {
        /// Commit to promote.
        commit: String,
        /// Its repository.
        repo: String,
        /// Commit in `latest/`.
        latest: String,
        /// Its repository.
        latest_repo: String,
    },
    /// The build has too few documents compared with `latest/`.
    #[error("refusing to promote {commit}: {documents} documents against {latest_documents} in latest/ ({latest}), a fall of more than {ratio} (promote.max_shrink_ratio); use --force if this is intended")]
    Shrunk {
        /// Commit to promote.
        commit: String,
        /// Its document count.
        documents: u64,
        /// Commit in `latest/`.
        latest: String,
        /// Its document count.
        latest_documents: u64,
        /// The configured ratio.
        ratio: f64,
    },
    /// The commit's artifact could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Writing `latest/` failed.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The promotion lock could not be taken.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The complete files could not be staged on local disk.
    #[error("cannot stage latest/'s files in {path}: {message}")]
    Stage {
        /// Where.
        path: String,
        /// Why.
        message: String,
    },
}

/// Promotes `commits/<commit>/` to `latest/`, holding the `latest` lock so
/// that two builders promoting at once take turns (the second one then sees
/// the first one's `latest/` in its age and shrink checks).
///
/// With no history at hand, "backwards" is decided by the commits' dates;
/// [`promote_ordered`] is given the source's history.
pub async fn promote(
    store: &Store,
    commit: &str,
    policy: PromotePolicy,
) -> Result<Promotion, PromoteError> {
    promote_ordered(store, commit, policy, None).await
}

/// [`promote`], with the source's history (`ancestry`) deciding which of
/// the new commit and the one `latest/` holds came first (see
/// [`check_ordered`]); their dates decide only where it cannot.
pub async fn promote_ordered(
    store: &Store,
    commit: &str,
    policy: PromotePolicy,
    ancestry: Option<Ancestry>,
) -> Result<Promotion, PromoteError> {
    let purpose = format!("promote {commit}");
    let lock = StoreLock::acquire(store, "latest", &purpose, LockTimes::from_env()).await?;
    let guard = lock.guard();
    with_lock(lock, async {
        failpoint("promote-after-lock");
        promote_locked(store, commit, policy, ancestry, &guard).await
    })
    .await
}

async fn promote_locked(
    store: &Store,
    commit: &str,
    policy: PromotePolicy,
    ancestry: Option<Ancestry>,
    guard: &LockGuard,
) -> Result<Promotion, PromoteError> {
    let location = ArtifactLocation::Commit(commit.to_string());
    let (marker, manifest) = read_manifest(store, &location).await?;
    let latest = ArtifactLocation::Latest;
    let current_marker = get_optional(store, &latest.file(SUCCESS_FILE)).await?;
    if current_marker.as_deref() == Some(success_bytes(&marker).as_ref()) {
        return Ok(Promotion::AlreadyLatest);
    }
    let parts = composed_index(&manifest).is_some();
    if parts && holds(store, &manifest).await {
        return Ok(Promotion::AlreadyLatest);
    }
    // The guard reads latest/manifest.json even without _SUCCESS, so a
    // crashed promotion cannot open the way to a backwards move.
    let current: Option<Manifest> = get_optional(store, &latest.file(MANIFEST_FILE))
        .await?
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    if let (Some(current), false) = (&current, policy.force) {
        let lineage = lineage(ancestry, &manifest, current).await;
        check_ordered(&manifest, current, policy.max_shrink_ratio, &lineage)?;
    }

    if parts {
        promote_parts(store, &location, guard).await?;
        return Ok(Promotion::Promoted {
            previous: current.map(|m| m.source_commit),
        });
    }
    guard.check()?;
    delete(store, &latest, SUCCESS_FILE).await?;
    failpoint("promote-after-remove-success");
    for (name, expected) in &marker.files {
        guard.check()?;
        copy_verified(store, &location, &latest, name, expected).await?;
        failpoint(&format!("promote-after-{name}"));
    }
    guard.check()?;
    let marker_bytes = success_bytes(&marker);
    put(
        store,
        &latest,
        SUCCESS_FILE,
        marker_bytes,
        PutMode::Overwrite,
    )
    .await?;
    failpoint("promote-after-latest-success");
    Ok(Promotion::Promoted {
        previous: current.map(|m| m.source_commit),
    })
}

/// How the commit of `new` stands to the one of `current` in `ancestry`
/// (a walk of git history, off the async threads).
async fn lineage(ancestry: Option<Ancestry>, new: &Manifest, current: &Manifest) -> Lineage {
    let Some(ancestry) = ancestry else {
        return Lineage::Unknown("no history at hand".into());
    };
    if new.source_repo != current.source_repo || new.source_commit == current.source_commit {
        return Lineage::Descends;
    }
    let (commit, latest) = (new.source_commit.clone(), current.source_commit.clone());
    tokio::task::spawn_blocking(move || ancestry.lineage(&commit, &latest))
        .await
        .unwrap_or_else(|e| Lineage::Unknown(format!("the history walk stopped: {e}")))
}

/// Whether `latest/` is complete and holds the artifact of `manifest`.
async fn holds(store: &Store, manifest: &Manifest) -> bool {
    match read_manifest(store, &ArtifactLocation::Latest).await {
        Ok((_, latest)) => {
            latest.artifact_id == manifest.artifact_id
                && latest.source_commit == manifest.source_commit
                && latest.documents_digest() == manifest.documents_digest()
        }
        Err(_) => false,
    }
}

/// Makes `latest/` the complete files of the shared-parts artifact at
/// `location`: composed and checked into a staging folder first (beside a
/// local store, so they are moved, not copied), then written under the
/// same protocol as a copy: `_SUCCESS` removed first, written last.
async fn promote_parts(
    store: &Store,
    location: &ArtifactLocation,
    guard: &LockGuard,
) -> Result<(), PromoteError> {
    let staging = match &store.local_root {
        Some(root) => {
            std::fs::create_dir_all(root).map_err(|e| stage_error(root, e))?;
            Staging::create_in(root, STAGING_PREFIX).map_err(|e| stage_error(root, e))?
        }
        None => {
            let temp = std::env::temp_dir();
            Staging::create_in(&temp, "agentfinder-promote-").map_err(|e| stage_error(&temp, e))?
        }
    };
    let materialized = match materialize(store, location, staging.path()).await {
        Ok(materialized) => materialized,
        Err(MaterializeError::Read(e)) => return Err(PromoteError::Read(e)),
        Err(MaterializeError::Io { path, message }) => {
            return Err(PromoteError::Stage { path, message })
        }
    };
    let latest = ArtifactLocation::Latest;
    guard.check()?;
    delete(store, &latest, SUCCESS_FILE).await?;
    failpoint("promote-after-remove-success");
    for (name, staged) in materialized.files {
        guard.check()?;
        put_content(store, &latest, name, &Content::File(staged)).await?;
        failpoint(&format!("promote-after-{name}"));
    }
    guard.check()?;
    put(
        store,
        &latest,
        MANIFEST_FILE,
        materialized.manifest_bytes,
        PutMode::Overwrite,
    )
    .await?;
    failpoint(&format!("promote-after-{MANIFEST_FILE}"));
    guard.check()?;
    put(
        store,
        &latest,
        SUCCESS_FILE,
        success_bytes(&materialized.success),
        PutMode::Overwrite,
    )
    .await?;
    failpoint("promote-after-latest-success");
    Ok(())
}

fn stage_error(path: &std::path::Path, e: std::io::Error) -> PromoteError {
    PromoteError::Stage {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Copies `from/name` to `to/name` by uploading its bytes again, streamed
/// in parts, checking them against `expected` on the way: the copy becomes
/// visible only if they match.
async fn copy_verified(
    store: &Store,
    from: &ArtifactLocation,
    to: &ArtifactLocation,
    name: &str,
    expected: &FileDigest,
) -> Result<(), PromoteError> {
    let source = from.file(name);
    let read_error = |message: String| PromoteError::Read(ReadError::store(&source, &message));
    let corrupt = |actual: FileDigest| {
        PromoteError::Read(ReadError::Invalid {
            location: from.to_string(),
            file: name.to_string(),
            line: None,
            message: format!(
                "sha256 {} size {} does not match _SUCCESS (sha256 {} size {}): the commit artifact is corrupt",
                actual.sha256, actual.size, expected.sha256, expected.size
            ),
        })
    };
    if let Some(root) = &store.local_root {
        let from_file = root.join(source.as_ref());
        let to_file = root.join(to.file(name).as_ref());
        let expected = expected.clone();
        let result =
            tokio::task::spawn_blocking(move || local_copy(&from_file, &to_file, Some(&expected)))
                .await
                .map_err(|e| read_error(e.to_string()))?;
        return match result {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                Err(PromoteError::Read(ReadError::Invalid {
                    location: from.to_string(),
                    file: name.to_string(),
                    line: None,
                    message: format!("{e}: the commit artifact is corrupt"),
                }))
            }
            Err(e) => Err(read_error(e.to_string())),
        };
    }
    let got = store
        .inner
        .get(&source)
        .await
        .map_err(|e| read_error(e.to_string()))?;
    if expected.size <= MULTIPART_THRESHOLD {
        let bytes = got.bytes().await.map_err(|e| read_error(e.to_string()))?;
        let actual = digest_of(&bytes);
        if &actual != expected {
            return Err(corrupt(actual));
        }
        put(store, to, name, bytes, PutMode::Overwrite).await?;
        return Ok(());
    }
    let chunks = got
        .into_stream()
        .map(|chunk| chunk.map_err(|e| e.to_string()));
    match upload_in_parts(store, &to.file(name), Box::pin(chunks), |sent| {
        sent == expected
    })
    .await
    {
        Ok(_) => Ok(()),
        Err(PartsError::Read(message)) => Err(read_error(message)),
        Err(PartsError::Write(e)) => Err(PromoteError::Write(e)),
        Err(PartsError::Rejected(actual)) => Err(corrupt(actual)),
    }
}
