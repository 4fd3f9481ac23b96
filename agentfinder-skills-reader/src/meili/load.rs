//! Zero-downtime loading: staging index -> settings -> documents -> count
//! check -> atomic swap with the live index -> delete the old one -> record
//! the loaded state. Searches keep being answered by the old index until the
//! swap; any failure before it leaves the live index untouched.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use meilisearch_sdk::client::Client;
use meilisearch_sdk::documents::DocumentsQuery;
use meilisearch_sdk::errors::{Error, ErrorCode};
use meilisearch_sdk::settings::Settings;

use super::retry::call;
use super::sidecar::LoadedState;
use super::stale::{decide, Decision, StaleReason};
use super::swap::{swap_once, LoadMarker};
use super::tasks::{delete_index, wait};
use super::{MeiliConfig, MeiliError};
use crate::contract::{ArtifactLocation, Manifest};
use crate::documents::for_each_batch;
use crate::read::ReadError;
use crate::read::StreamError;
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
    let (key, words) = marker.synonym();
    synonyms.insert(key, words);
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
