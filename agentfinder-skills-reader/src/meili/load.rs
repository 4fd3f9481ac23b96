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
use super::stale::{decide, Decision, StaleReason};
use super::{MeiliConfig, MeiliError};
use crate::artifact::ReadError;
use crate::contract::{ArtifactLocation, Manifest};
use crate::documents::{for_each_batch, StreamError};
use crate::sources::ArtifactIdentity;
use crate::sources::ArtifactSet;
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
    /// What each source gave (one entry, `.`, for a single artifact).
    pub sources: Vec<super::LoadedSource>,
    /// Sources left out because their `latest/` could not be read, and why.
    pub left_out: Vec<(String, String)>,
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
    /// A source the live index holds could not be read: loading without it
    /// would drop it from search, so the live index is kept as it is.
    #[error("source {source_id} is in the live index but its latest/ could not be read ({reason}); the live index is kept as it is")]
    SourceUnreadable {
        /// The source id.
        source_id: String,
        /// Why it could not be read.
        reason: String,
    },
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
    let set = ArtifactSet::read(
        store,
        &options.location,
        options.artifact_attempts,
        options.artifact_pause,
    )
    .await?;
    let Some(leading) = set.leading_manifest() else {
        return Err(SyncError::Artifact(ReadError::Empty {
            location: options.location.to_string(),
        }));
    };
    let identity = set.identity();
    let index = leading.meilisearch.index.clone();
    let state = LoadedState::read(&options.state_path);
    // A source that was loaded and cannot be read now (a transient store
    // error, a promotion stuck halfway) is not dropped from search: the
    // sync refuses before it touches Meilisearch, as promotion refuses to
    // shrink, and says which (`load`, which forces, is how an operator
    // drops it on purpose).
    if let (false, Some(state)) = (force, &state) {
        if let Some((source_id, reason)) = set
            .left_out
            .iter()
            .find(|(id, _)| state.sources.iter().any(|s| &s.source == id))
        {
            return Err(SyncError::SourceUnreadable {
                source_id: source_id.clone(),
                reason: reason.clone(),
            });
        }
    }
    let client = config.client()?;
    let live_count = document_count(&client, config, &index).await?;
    let decision = if force {
        Decision::Load(StaleReason::Forced)
    } else {
        decide(&identity, state.as_ref(), live_count)
    };
    let report = |outcome, documents| LoadReport {
        outcome,
        commit: identity.source_commit.clone(),
        documents,
        index: index.clone(),
        sources: super::LoadedSource::of_set(&set),
        left_out: set.left_out.clone(),
        seconds: started.elapsed().as_secs_f64(),
    };
    let reason = match decision {
        Decision::UpToDate => return Ok(report(LoadOutcome::Unchanged, live_count.unwrap_or(0))),
        Decision::Load(reason) => reason,
    };

    let staging = format!("{index}_staging");
    let marker = LoadMarker::new(&identity);
    // The documents are streamed and checked on the way; a promotion that
    // raced this read shows at the end as a mismatch: start again.
    let mut attempt = 1;
    loop {
        match fill_staging(&client, config, &set, leading, &marker, &staging).await {
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
    swap_once(&client, config, &index, &staging, &marker).await?;
    // The staging index now holds the previous documents; dropping it is tidy-up.
    let _ = delete_index(&client, config, &staging).await;

    let sources = match set.parts.as_slice() {
        [part] if part.source.is_none() => Vec::new(),
        _ => super::LoadedSource::of_set(&set),
    };
    let state = LoadedState {
        schema_version: identity.schema_version,
        source_commit: identity.source_commit.clone(),
        documents_sha256: identity.documents_sha256.clone(),
        document_count: identity.document_count,
        settings_sha256: identity.settings_sha256.clone(),
        index: index.clone(),
        loaded_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        sources,
    };
    state
        .write(&options.state_path)
        .map_err(|error| SyncError::State {
            path: options.state_path.display().to_string(),
            error,
        })?;
    Ok(report(LoadOutcome::Loaded(reason), identity.document_count))
}

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
    fn new(identity: &ArtifactIdentity) -> Self {
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
async fn swap_once(
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

/// Creates `staging` afresh, applies the leading manifest's settings,
/// streams every document of every part in batches (checked against each
/// `_SUCCESS` as they go) and checks the count.
async fn fill_staging(
    client: &Client,
    config: &MeiliConfig,
    set: &ArtifactSet,
    manifest: &Manifest,
    marker: &LoadMarker,
    staging: &str,
) -> Result<(), SyncError> {
    delete_index(client, config, staging).await?;
    let primary_key = manifest.meilisearch.primary_key.clone();
    let task = call(config, "create staging index", || {
        client.create_index(staging, Some(&primary_key))
    })
    .await?;
    wait(client, config, task, "create staging index").await?;

    let index = client.index(staging);
    let mut settings: Settings = serde_json::from_value(manifest.meilisearch.settings.clone())
        .map_err(|e| MeiliError::Rejected {
            what: "settings from the manifest".into(),
            message: e.to_string(),
        })?;
    let mut synonyms = settings.synonyms.take().unwrap_or_default();
    synonyms.insert(LOAD_MARKER_KEY.to_string(), vec![marker.word.clone()]);
    settings.synonyms = Some(synonyms);
    let task = call(config, "apply settings", || index.set_settings(&settings)).await?;
    wait(client, config, task, "apply settings").await?;

    let tasks = std::sync::Mutex::new(Vec::new());
    for part in &set.parts {
        let sent = for_each_batch(
            &part.store,
            &part.location,
            &part.success,
            &part.manifest,
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
    }
    let tasks = tasks.into_inner().unwrap_or_default();
    for task in tasks {
        wait(client, config, task, "index documents").await?;
    }
    let live = document_count(client, config, staging).await?.unwrap_or(0);
    let expected = set.document_count();
    if live != expected {
        return Err(MeiliError::CountMismatch {
            index: staging.to_string(),
            live,
            expected,
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
