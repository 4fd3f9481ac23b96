//! Promote stage: make `latest/` equal to a complete `commits/<commit>/`.
//!
//! Object stores have no multi-file rename, so: refuse to move `latest/` to
//! an older commit, or onto a build that shrank past the configured ratio,
//! unless forced; remove `latest/_SUCCESS`; upload every file again (no
//! server-side copy: some gateways lack it); write `latest/_SUCCESS` last. A
//! crash leaves the old complete `latest/`, a `latest/` without `_SUCCESS`
//! (readers keep what they have), or the new complete one.

use object_store::PutMode;

use agentfinder_skills_reader::artifact::{get_optional, read_artifact, ReadError};
use agentfinder_skills_reader::contract::{
    ArtifactLocation, Manifest, MANIFEST_FILE, SUCCESS_FILE,
};
use agentfinder_skills_reader::store::Store;

use crate::failpoint::failpoint;
use crate::write::{delete, put, success_bytes, WriteError};

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
    /// The commit is older than what `latest/` holds.
    #[error("refusing to promote {commit} (committed {time}): latest/ holds {latest}, committed {latest_time}, which is newer; use --force to move latest/ backwards")]
    Older {
        /// Commit to promote.
        commit: String,
        /// Its time.
        time: String,
        /// Commit in `latest/`.
        latest: String,
        /// Its time.
        latest_time: String,
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
}

/// Promotes `commits/<commit>/` to `latest/`.
pub async fn promote(
    store: &Store,
    commit: &str,
    policy: PromotePolicy,
) -> Result<Promotion, PromoteError> {
    let source = read_artifact(store, &ArtifactLocation::Commit(commit.to_string())).await?;
    let latest = ArtifactLocation::Latest;
    let current_marker = get_optional(store, &latest.file(SUCCESS_FILE)).await?;
    if current_marker.as_deref() == Some(success_bytes(&source.success).as_ref()) {
        return Ok(Promotion::AlreadyLatest);
    }
    // The guard reads latest/manifest.json even without _SUCCESS, so a
    // crashed promotion cannot open the way to a backwards move.
    let current: Option<Manifest> = get_optional(store, &latest.file(MANIFEST_FILE))
        .await?
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    if let (Some(current), false) = (&current, policy.force) {
        check(&source.manifest, current, policy.max_shrink_ratio)?;
    }

    delete(store, &latest, SUCCESS_FILE).await?;
    failpoint("promote-after-remove-success");
    for (name, bytes) in &source.files {
        put(store, &latest, name, bytes.clone(), PutMode::Overwrite).await?;
        failpoint(&format!("promote-after-{name}"));
    }
    put(
        store,
        &latest,
        SUCCESS_FILE,
        success_bytes(&source.success),
        PutMode::Overwrite,
    )
    .await?;
    Ok(Promotion::Promoted {
        previous: current.map(|m| m.source_commit),
    })
}

/// The age and shrink checks of `new` against `current`.
pub fn check(
    new: &Manifest,
    current: &Manifest,
    max_shrink_ratio: f64,
) -> Result<(), PromoteError> {
    if new.source_commit == current.source_commit {
        return Ok(());
    }
    let time = |m: &Manifest| humantime::parse_rfc3339(&m.source_commit_time).ok();
    if let (Some(new_time), Some(current_time)) = (time(new), time(current)) {
        if new_time < current_time {
            return Err(PromoteError::Older {
                commit: new.source_commit.clone(),
                time: new.source_commit_time.clone(),
                latest: current.source_commit.clone(),
                latest_time: current.source_commit_time.clone(),
            });
        }
    }
    let floor = current.document_count as f64 * (1.0 - max_shrink_ratio);
    if (new.document_count as f64) < floor {
        return Err(PromoteError::Shrunk {
            commit: new.source_commit.clone(),
            documents: new.document_count,
            latest: current.source_commit.clone(),
            latest_documents: current.document_count,
            ratio: max_shrink_ratio,
        });
    }
    Ok(())
}
