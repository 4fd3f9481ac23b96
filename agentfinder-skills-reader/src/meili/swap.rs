//! The one step of a load that must not be retried blindly: swapping the
//! staging index with the live one, exactly once, found out by a marker
//! the load wrote into its own index when an answer is lost.

use meilisearch_sdk::client::{Client, SwapIndexes};
use meilisearch_sdk::errors::{Error, ErrorCode};

use super::retry::call;
use super::tasks::wait;
use super::{MeiliConfig, MeiliError};
use crate::sources::ArtifactIdentity;

/// What tells this load's index apart from every other: a synonym entry
/// (`agentfinderload` -> a word naming the artifact and this load) written
/// into the staging index's settings. It changes no search (no document
/// holds the word), travels with the index through a swap, and lets a load
/// whose swap answer was lost find out which index holds its documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadMarker {
    word: String,
}

/// The synonym key of [`LoadMarker`] (one word: Meilisearch may normalise
/// what it stores, and a plain lowercase word survives that unchanged).
pub const LOAD_MARKER_KEY: &str = "agentfinderload";

impl LoadMarker {
    pub(crate) fn new(identity: &ArtifactIdentity) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let sha = &identity.documents_sha256;
        Self {
            word: format!(
                "afload{}x{nanos:x}x{}",
                &sha[..sha.len().min(16)],
                std::process::id()
            ),
        }
    }

    /// The synonym entry that writes the marker into an index's settings.
    pub(crate) fn synonym(&self) -> (String, Vec<String>) {
        (LOAD_MARKER_KEY.to_string(), vec![self.word.clone()])
    }

    /// Whether `index` carries this load's marker (`false` when it does not exist).
    async fn is_in(
        &self,
        client: &Client,
        config: &MeiliConfig,
        index: &str,
    ) -> Result<bool, MeiliError> {
        let handle = client.index(index);
        let synonyms = call(config, "read load marker", || async {
            match handle.get_synonyms().await {
                Ok(synonyms) => Ok(Some(synonyms)),
                Err(Error::Meilisearch(e)) if e.error_code == ErrorCode::IndexNotFound => Ok(None),
                Err(e) => Err(e),
            }
        })
        .await?;
        // Looked for under any key, compared without case: what matters is
        // that the word this load wrote is there.
        Ok(synonyms.is_some_and(|synonyms| {
            synonyms
                .values()
                .flatten()
                .any(|w| w.eq_ignore_ascii_case(&self.word))
        }))
    }
}

/// Swaps `staging` into `index` exactly once. The swap is sent without the
/// usual retries: a retried swap whose first attempt went through would
/// swap the old documents back. After a lost or failed answer the marker
/// says where the new documents are: in the live index, the swap happened;
/// still in staging, it is sent again. The live index is checked after.
pub(crate) async fn swap_once(
    client: &Client,
    config: &MeiliConfig,
    index: &str,
    staging: &str,
    marker: &LoadMarker,
) -> Result<(), MeiliError> {
    let swap = SwapIndexes {
        indexes: (index.to_string(), staging.to_string()),
        rename: None,
    };
    let once = MeiliConfig {
        retry: super::RetryPolicy { delays: Vec::new() },
        ..config.clone()
    };
    let attempts = config.retry.delays.len() + 1;
    let mut last_error = None;
    for attempt in 0..attempts {
        if attempt > 0 {
            tokio::time::sleep(config.retry.delays[attempt - 1]).await;
        }
        let sent = match call(&once, "swap indexes", || client.swap_indexes([&swap])).await {
            Ok(task) => wait(client, config, task, "swap indexes").await,
            Err(e) => Err(e),
        };
        match sent {
            Ok(()) => break,
            // Not sent or not done for sure: look before sending again.
            Err(e @ (MeiliError::Unavailable { .. } | MeiliError::TaskTimeout { .. })) => {
                // A swap still queued or running lands in the live index
                // soon: give it the task timeout before deciding.
                if wait_for_marker(client, config, index, marker).await? {
                    last_error = None;
                    break;
                }
                last_error = Some(e);
            }
            Err(e) => return Err(e),
        }
    }
    if let Some(e) = last_error {
        return Err(e);
    }
    if !marker.is_in(client, config, index).await? {
        return Err(MeiliError::Rejected {
            what: "swap indexes".into(),
            message: format!(
                "after the swap, {index} does not hold this load's documents (another load swapped at the same time?)"
            ),
        });
    }
    Ok(())
}

/// Whether the marker reaches `index` within a few polls (the swap went
/// through, maybe late); false when it is still in staging.
async fn wait_for_marker(
    client: &Client,
    config: &MeiliConfig,
    index: &str,
    marker: &LoadMarker,
) -> Result<bool, MeiliError> {
    for _ in 0..3 {
        if marker.is_in(client, config, index).await? {
            return Ok(true);
        }
        tokio::time::sleep(config.poll_interval).await;
    }
    Ok(false)
}
