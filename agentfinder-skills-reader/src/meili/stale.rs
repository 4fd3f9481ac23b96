//! Whether the live index must be (re)loaded: a pure decision over the
//! artifact, the recorded loaded state and what the live index holds.

use super::sidecar::LoadedState;
use crate::sources::ArtifactIdentity;

/// Why a load is needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StaleReason {
    /// No loaded state recorded.
    NeverLoaded,
    /// The live index does not exist (a fresh or wiped Meilisearch).
    IndexMissing,
    /// The same documents, under index settings other than those loaded.
    SettingsChanged,
    /// The recorded state is of another artifact.
    ArtifactChanged {
        /// Commit loaded before.
        from: String,
        /// Commit of the artifact.
        to: String,
    },
    /// The live index does not hold the recorded number of documents.
    CountMismatch {
        /// Documents the artifact has.
        expected: u64,
        /// Documents the live index holds.
        live: u64,
    },
    /// An operator asked for it (`load`).
    Forced,
}

impl std::fmt::Display for StaleReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NeverLoaded => f.write_str("nothing recorded as loaded"),
            Self::IndexMissing => f.write_str("the live index does not exist"),
            Self::SettingsChanged => f.write_str("the artifact declares other index settings"),
            Self::ArtifactChanged { from, to } => write!(f, "artifact changed from {from} to {to}"),
            Self::CountMismatch { expected, live } => {
                write!(
                    f,
                    "live index holds {live} documents, the artifact {expected}"
                )
            }
            Self::Forced => f.write_str("load requested"),
        }
    }
}

/// The decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The live index already holds this artifact.
    UpToDate,
    /// Load, for this reason.
    Load(StaleReason),
}

/// Decides from the artifact, the recorded state, and the live index's
/// document count (`None` when the index does not exist).
pub fn decide(
    artifact: &ArtifactIdentity,
    state: Option<&LoadedState>,
    live_count: Option<u64>,
) -> Decision {
    let Some(live) = live_count else {
        return Decision::Load(StaleReason::IndexMissing);
    };
    let Some(state) = state else {
        return Decision::Load(StaleReason::NeverLoaded);
    };
    if state.schema_version != artifact.schema_version
        || state.source_commit != artifact.source_commit
        || state.documents_sha256 != artifact.documents_sha256
    {
        return Decision::Load(StaleReason::ArtifactChanged {
            from: state.source_commit.clone(),
            to: artifact.source_commit.clone(),
        });
    }
    if state.settings_sha256 != artifact.settings_sha256 {
        return Decision::Load(StaleReason::SettingsChanged);
    }
    if live != artifact.document_count {
        return Decision::Load(StaleReason::CountMismatch {
            expected: artifact.document_count,
            live,
        });
    }
    Decision::UpToDate
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(commit: &str, sha: &str, count: u64) -> ArtifactIdentity {
        ArtifactIdentity {
            schema_version: 1,
            source_commit: commit.into(),
            documents_sha256: sha.into(),
            document_count: count,
            settings_sha256: "k".into(),
        }
    }

    fn state(commit: &str, sha: &str, count: u64) -> LoadedState {
        LoadedState {
            schema_version: 1,
            source_commit: commit.into(),
            documents_sha256: sha.into(),
            document_count: count,
            settings_sha256: "k".into(),
            index: "hf_skills".into(),
            loaded_at: "t".into(),
            sources: Vec::new(),
        }
    }

    #[test]
    fn same_artifact_and_full_index_is_up_to_date() {
        assert_eq!(
            decide(
                &artifact("a", "s", 10),
                Some(&state("a", "s", 10)),
                Some(10)
            ),
            Decision::UpToDate
        );
    }

    #[test]
    fn an_empty_restarted_meilisearch_reloads_despite_the_sidecar() {
        let a = artifact("a", "s", 10);
        assert_eq!(
            decide(&a, Some(&state("a", "s", 10)), None),
            Decision::Load(StaleReason::IndexMissing)
        );
        assert_eq!(
            decide(&a, Some(&state("a", "s", 10)), Some(0)),
            Decision::Load(StaleReason::CountMismatch {
                expected: 10,
                live: 0
            })
        );
    }

    #[test]
    fn changes_of_commit_digest_or_schema_reload() {
        let a = artifact("b", "t", 10);
        let changed = Decision::Load(StaleReason::ArtifactChanged {
            from: "a".into(),
            to: "b".into(),
        });
        assert_eq!(decide(&a, Some(&state("a", "s", 10)), Some(10)), changed);
        let same_commit_new_bytes = decide(
            &artifact("a", "t", 10),
            Some(&state("a", "s", 10)),
            Some(10),
        );
        assert!(matches!(
            same_commit_new_bytes,
            Decision::Load(StaleReason::ArtifactChanged { .. })
        ));
        let mut old_schema = state("b", "t", 10);
        old_schema.schema_version = 0;
        assert!(matches!(
            decide(&a, Some(&old_schema), Some(10)),
            Decision::Load(_)
        ));
    }

    #[test]
    fn other_settings_over_the_same_documents_reload() {
        let mut a = artifact("a", "s", 10);
        a.settings_sha256 = "k2".into();
        assert_eq!(
            decide(&a, Some(&state("a", "s", 10)), Some(10)),
            Decision::Load(StaleReason::SettingsChanged)
        );
        // A state recorded before settings were (no digest) loads once.
        let mut old = state("a", "s", 10);
        old.settings_sha256 = String::new();
        assert_eq!(
            decide(&artifact("a", "s", 10), Some(&old), Some(10)),
            Decision::Load(StaleReason::SettingsChanged)
        );
    }

    #[test]
    fn no_sidecar_means_load() {
        assert_eq!(
            decide(&artifact("a", "s", 10), None, Some(10)),
            Decision::Load(StaleReason::NeverLoaded)
        );
    }
}
