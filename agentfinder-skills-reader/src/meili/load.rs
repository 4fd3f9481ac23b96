//! Zero-downtime loading: staging index -> settings -> documents -> count
//! check -> atomic swap with the live index -> delete the old one -> record
//! the loaded state. Searches keep being answered by the old index until the
//! swap; any failure before it leaves the live index untouched.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use meilisearch_sdk::client::{Client, SwapIndexes};
use meilisearch_sdk::documents::DocumentsQuery;
use meilisearch_sdk::errors::{Error, ErrorCode};
use meilisearch_sdk::settings::Settings;
use meilisearch_sdk::task_info::TaskInfo;
use meilisearch_sdk::tasks::Task;

use super::retry::call;
use super::sidecar::LoadedState;
use super::stale::{decide, ArtifactIdentity, Decision, StaleReason};
use super::{MeiliConfig, MeiliError};
use crate::artifact::{read_manifest_retrying, ReadError};
use crate::contract::ArtifactLocation;
use crate::contract::{Manifest, SuccessMarker};
use crate::documents::{for_each_batch, StreamError};
use crate::store::Store;

/// Where to read from and where the loaded state lives.
#[derive(Debug, Clone)]
pub struct SyncOptions {
    /// The artifact directory to load.
    pub location: ArtifactLocation,
    /// The sidecar file.
    pub state_path: PathBuf,
    /// Reads of the artifact before giving up on "promotion in progress".
    pub artifact_attempts: u32,
    /// First pause between those reads (doubling).
    pub artifact_pause: Duration,
}

impl SyncOptions {
    /// `latest/`, with the given sidecar path and default retries.
    pub fn latest(state_path: impl Into<PathBuf>) -> Self {
        Self {
            location: ArtifactLocation::Latest,
            state_path: state_path.into(),
            artifact_attempts: 4,
            artifact_pause: Duration::from_secs(1),
        }
    }
}

/// What a sync did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadOutcome {
    /// The live index already held the artifact.
    Unchanged,
    /// The artifact was loaded and swapped in.
    Loaded(StaleReason),
}

/// A sync's result, for the log line.
#[derive(Debug, Clone)]
pub struct LoadReport {
    /// Loaded or unchanged.
    pub outcome: LoadOutcome,
    /// Source commit of the artifact.
    pub commit: String,
    /// Documents in the live index now.
    pub documents: u64,
    /// The live index.
    pub index: String,
    /// Wall time.
    pub seconds: f64,
}

/// A sync failed; the live index is as it was.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The artifact could not be read (in progress after retries, missing, invalid).
    #[error("artifact: {0}")]
    Artifact(#[from] ReadError),
    /// Meilisearch failed.
    #[error(transparent)]
    Meili(#[from] MeiliError),
    /// The sidecar could not be written (the index was swapped).
    #[error("index loaded, but the loaded-state file {path} could not be written: {error}")]
    State {
        /// The sidecar path.
        path: String,
        /// Why.
        error: std::io::Error,
    },
}

/// Brings the live index up to date with the artifact, doing nothing when it
/// already is (same artifact recorded, and the live index holds its count).
pub async fn sync(
    store: &Store,
    config: &MeiliConfig,
    options: &SyncOptions,
) -> Result<LoadReport, SyncError> {
    run(store, config, options, false).await
}

/// Loads the artifact whatever the recorded state says.
pub async fn load(
    store: &Store,
    config: &MeiliConfig,
    options: &SyncOptions,
) -> Result<LoadReport, SyncError> {
    run(store, config, options, true).await
}

async fn run(
    store: &Store,
    config: &MeiliConfig,
    options: &SyncOptions,
    force: bool,
) -> Result<LoadReport, SyncError> {
    let started = Instant::now();
    let (success, manifest) = read_manifest_retrying(
        store,
        &options.location,
        options.artifact_attempts,
        options.artifact_pause,
    )
    .await?;
    let identity = ArtifactIdentity::of(&manifest);
    let index = manifest.meilisearch.index.clone();
    let client = config.client()?;
    let live_count = document_count(&client, config, &index).await?;
    let state = LoadedState::read(&options.state_path);
    let decision = if force {
        Decision::Load(StaleReason::Forced)
    } else {
        decide(&identity, state.as_ref(), live_count)
    };
    let reason = match decision {
        Decision::UpToDate => {
            return Ok(LoadReport {
                outcome: LoadOutcome::Unchanged,
                commit: identity.source_commit,
                documents: live_count.unwrap_or(0),
                index,
                seconds: started.elapsed().as_secs_f64(),
            })
        }
        Decision::Load(reason) => reason,
    };

    let staging = format!("{index}_staging");
    let source = Source {
        store,
        location: &options.location,
        success: &success,
        manifest: &manifest,
    };
    // The documents are streamed and checked on the way; a promotion that
    // raced this read shows at the end as a mismatch: start again.
    let mut attempt = 1;
    loop {
        match fill_staging(&client, config, &source, &staging).await {
            Ok(()) => break,
            Err(error) => {
                let _ = delete_index(&client, config, &staging).await;
                let transient = matches!(&error, SyncError::Artifact(e) if e.is_transient());
                if !transient || attempt >= options.artifact_attempts {
                    return Err(error);
                }
                tokio::time::sleep(options.artifact_pause * attempt).await;
                attempt += 1;
            }
        }
    }
    if live_count.is_none() {
        let task = call(config, "create live index", || {
            client.create_index(&index, Some("id"))
        })
        .await?;
        wait(&client, config, task, "create live index").await?;
    }
    let swap = SwapIndexes {
        indexes: (index.clone(), staging.clone()),
        rename: None,
    };
    let task = call(config, "swap indexes", || client.swap_indexes([&swap])).await?;
    wait(&client, config, task, "swap indexes").await?;
    // The staging index now holds the previous documents; dropping it is tidy-up.
    let _ = delete_index(&client, config, &staging).await;

    let state = LoadedState {
        schema_version: identity.schema_version,
        source_commit: identity.source_commit.clone(),
        documents_sha256: identity.documents_sha256,
        document_count: identity.document_count,
        index: index.clone(),
        loaded_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
    };
    state
        .write(&options.state_path)
        .map_err(|error| SyncError::State {
            path: options.state_path.display().to_string(),
            error,
        })?;
    Ok(LoadReport {
        outcome: LoadOutcome::Loaded(reason),
        commit: identity.source_commit,
        documents: identity.document_count,
        index,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The artifact a load reads: its marker and manifest, documents streamed.
struct Source<'a> {
    store: &'a Store,
    location: &'a ArtifactLocation,
    success: &'a SuccessMarker,
    manifest: &'a Manifest,
}

/// Creates `staging` afresh, applies the manifest's settings, streams every
/// document in batches (checked against `_SUCCESS` as they go) and checks
/// the count.
async fn fill_staging(
    client: &Client,
    config: &MeiliConfig,
    source: &Source<'_>,
    staging: &str,
) -> Result<(), SyncError> {
    let manifest = source.manifest;
    delete_index(client, config, staging).await?;
    let primary_key = manifest.meilisearch.primary_key.clone();
    let task = call(config, "create staging index", || {
        client.create_index(staging, Some(&primary_key))
    })
    .await?;
    wait(client, config, task, "create staging index").await?;

    let index = client.index(staging);
    let settings: Settings = serde_json::from_value(manifest.meilisearch.settings.clone())
        .map_err(|e| MeiliError::Rejected {
            what: "settings from the manifest".into(),
            message: e.to_string(),
        })?;
    let task = call(config, "apply settings", || index.set_settings(&settings)).await?;
    wait(client, config, task, "apply settings").await?;

    let tasks = std::sync::Mutex::new(Vec::new());
    let sent = for_each_batch(
        source.store,
        source.location,
        source.success,
        config.batch_bytes,
        |batch| {
            let (index, primary_key, tasks) = (&index, &primary_key, &tasks);
            async move {
                let task = call(config, "send documents", || {
                    index.add_documents_ndjson(
                        futures::io::Cursor::new(batch.clone()),
                        Some(primary_key),
                    )
                })
                .await?;
                if let Ok(mut tasks) = tasks.lock() {
                    tasks.push(task);
                }
                Ok::<(), MeiliError>(())
            }
        },
    )
    .await;
    match sent {
        Ok(()) => {}
        Err(StreamError::Read(e)) => return Err(e.into()),
        Err(StreamError::Consumer(e)) => return Err(e.into()),
    }
    let tasks = tasks.into_inner().unwrap_or_default();
    for task in tasks {
        wait(client, config, task, "index documents").await?;
    }
    let live = document_count(client, config, staging).await?.unwrap_or(0);
    if live != manifest.document_count {
        return Err(MeiliError::CountMismatch {
            index: staging.to_string(),
            live,
            expected: manifest.document_count,
        }
        .into());
    }
    Ok(())
}

/// Documents in `index`, or `None` if it does not exist.
pub(crate) async fn document_count(
    client: &Client,
    config: &MeiliConfig,
    index: &str,
) -> Result<Option<u64>, MeiliError> {
    let handle = client.index(index);
    call(config, "index stats", || async {
        match handle.get_stats().await {
            Ok(stats) => Ok(Some(stats.number_of_documents as u64)),
            Err(Error::Meilisearch(e)) if e.error_code == ErrorCode::IndexNotFound => Ok(None),
            // Servers before v1.13 lack fields the SDK's stats type requires:
            // count through the documents route instead.
            Err(Error::ParseError(_)) => {
                let mut query = DocumentsQuery::new(&handle);
                query.with_limit(0);
                let page = query.execute::<serde_json::Value>().await?;
                Ok(Some(page.total as u64))
            }
            Err(e) => Err(e),
        }
    })
    .await
}

async fn delete_index(
    client: &Client,
    config: &MeiliConfig,
    index: &str,
) -> Result<(), MeiliError> {
    let task = call(config, "delete index", || client.delete_index(index)).await?;
    match wait(client, config, task, "delete index").await {
        Ok(()) => Ok(()),
        // Deleting an index that is not there fails as a task; that is fine.
        Err(MeiliError::TaskFailed { message, .. }) if message.contains("not found") => Ok(()),
        Err(e) => Err(e),
    }
}

/// Waits for a task, with the task timeout; a failed task is an error
/// carrying Meilisearch's message.
pub(crate) async fn wait(
    client: &Client,
    config: &MeiliConfig,
    task: TaskInfo,
    what: &str,
) -> Result<(), MeiliError> {
    let uid = task.task_uid;
    let deadline = Instant::now() + config.task_timeout;
    loop {
        let status = call(config, "task status", || client.get_task(&task)).await;
        match status {
            Ok(Task::Succeeded { .. }) => return Ok(()),
            Ok(Task::Failed { content }) => {
                return Err(MeiliError::TaskFailed {
                    uid,
                    what: what.to_string(),
                    message: content.error.error_message,
                })
            }
            Ok(Task::Enqueued { .. } | Task::Processing { .. }) => {}
            // The SDK has no `canceled` status; it surfaces as an unreadable task.
            Err(MeiliError::Rejected { message, .. }) if message.contains("parsing response") => {
                return Err(MeiliError::TaskFailed {
                    uid,
                    what: what.to_string(),
                    message: format!(
                        "task ended in a state the client cannot read (canceled?): {message}"
                    ),
                })
            }
            Err(e) => return Err(e),
        }
        if Instant::now() >= deadline {
            return Err(MeiliError::TaskTimeout {
                uid,
                what: what.to_string(),
                seconds: config.task_timeout.as_secs(),
            });
        }
        tokio::time::sleep(config.poll_interval).await;
    }
}
