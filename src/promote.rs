//! Promote stage: make `latest/` equal to a complete `commits/<commit>/`.
//!
//! Object stores have no multi-file rename, so: refuse to move `latest/` to
//! an older commit, or onto a build that shrank past the configured ratio,
//! unless forced; remove `latest/_SUCCESS`; upload every file again (no
//! server-side copy: some gateways lack it); write `latest/_SUCCESS` last. A
//! crash leaves the old complete `latest/`, a `latest/` without `_SUCCESS`
//! (readers keep what they have), or the new complete one.

use object_store::PutMode;

use agentfinder_skills_reader::artifact::{get_optional, read_artifact, read_manifest, ReadError};
use agentfinder_skills_reader::contract::{
    ArtifactLocation, Manifest, MANIFEST_FILE, SUCCESS_FILE,
};
use agentfinder_skills_reader::store::Store;

use crate::failpoint::failpoint;
use crate::lock::{LockError, LockTimes, StoreLock};
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
    /// The promotion lock could not be taken.
    #[error(transparent)]
    Lock(#[from] LockError),
}

/// Promotes `commits/<commit>/` to `latest/`, holding the `latest` lock so
/// that two builders promoting at once take turns (the second one then sees
/// the first one's `latest/` in its age and shrink checks).
pub async fn promote(
    store: &Store,
    commit: &str,
    policy: PromotePolicy,
) -> Result<Promotion, PromoteError> {
    let purpose = format!("promote {commit}");
    let lock = StoreLock::acquire(store, "latest", &purpose, LockTimes::default()).await?;
    failpoint("promote-after-lock");
    let result = promote_locked(store, commit, policy).await;
    lock.release().await;
    result
}

async fn promote_locked(
    store: &Store,
    commit: &str,
    policy: PromotePolicy,
) -> Result<Promotion, PromoteError> {
    let location = ArtifactLocation::Commit(commit.to_string());
    let (marker, _) = read_manifest(store, &location).await?;
    let latest = ArtifactLocation::Latest;
    let current_marker = get_optional(store, &latest.file(SUCCESS_FILE)).await?;
    if current_marker.as_deref() == Some(success_bytes(&marker).as_ref()) {
        return Ok(Promotion::AlreadyLatest);
    }
    let source = read_artifact(store, &location).await?;
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
    failpoint("promote-after-latest-success");
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::meilisearch_config;
    use agentfinder_skills_reader::contract::{BuilderInfo, ChunkingInfo};
    use std::collections::BTreeMap;

    fn manifest(commit: &str, time: &str, documents: u64) -> Manifest {
        Manifest {
            schema_version: 1,
            source_repo: "o/r".into(),
            source_url: "https://github.com/o/r.git".into(),
            source_branch: "main".into(),
            source_commit: commit.into(),
            generated_at: time.into(),
            document_count: documents,
            index: "hf_skills".into(),
            artifact: "hf-skills.ndjson".into(),
            artifacts: BTreeMap::new(),
            skill_count: 1,
            source_commit_time: time.into(),
            files: BTreeMap::new(),
            builder: BuilderInfo {
                name: "t".into(),
                version: "0".into(),
            },
            chunking: ChunkingInfo {
                max_chars: 12000,
                overlap_chars: 800,
            },
            config_digest: String::new(),
            meilisearch: meilisearch_config("hf_skills"),
            skipped: Vec::new(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn newer_or_equal_commits_pass_older_ones_do_not() {
        let current = manifest("b", "2026-01-02T00:00:00Z", 100);
        assert!(check(&manifest("c", "2026-01-03T00:00:00Z", 100), &current, 0.5).is_ok());
        assert!(check(&manifest("c", "2026-01-02T00:00:00Z", 100), &current, 0.5).is_ok());
        let err = check(&manifest("a", "2026-01-01T00:00:00Z", 100), &current, 0.5).unwrap_err();
        assert!(matches!(err, PromoteError::Older { .. }), "{err}");
    }

    #[test]
    fn shrinking_past_the_ratio_is_refused() {
        let current = manifest("b", "2026-01-02T00:00:00Z", 100);
        let newer = |docs| manifest("c", "2026-01-03T00:00:00Z", docs);
        assert!(check(&newer(50), &current, 0.5).is_ok());
        assert!(matches!(
            check(&newer(49), &current, 0.5),
            Err(PromoteError::Shrunk { .. })
        ));
        assert!(check(&newer(0), &current, 1.0).is_ok());
        // The same commit again is never refused.
        assert!(check(&manifest("b", "2026-01-02T00:00:00Z", 1), &current, 0.5).is_ok());
    }
}
