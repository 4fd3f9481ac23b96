//! What a start-up script needs to know about search.

use std::path::Path;

use serde::Serialize;

use super::load::document_count;
use super::retry::call;
use super::sidecar::LoadedState;
use super::MeiliConfig;
use crate::contract::ArtifactLocation;
use crate::sources::ArtifactSet;
use crate::store::{Store, StoreError};

/// Health of the serving side.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HealthReport {
    /// `MEILI_URL` is set.
    pub configured: bool,
    /// Meilisearch answered its health check.
    pub reachable: bool,
    /// The live index holds the recorded artifact's documents.
    pub loaded: bool,
    /// Commit recorded as loaded.
    pub loaded_commit: Option<String>,
    /// Schema version recorded as loaded.
    pub schema_version: Option<u32>,
    /// Documents in the live index.
    pub document_count: Option<u64>,
    /// Commit of the store's `latest/`, if complete.
    pub artifact_commit: Option<String>,
    /// The store's `latest/` could be read (opened, complete, digests
    /// matching). When false, freshness is unknown: never reported fresh.
    pub store_readable: bool,
    /// The live index is behind the store (or not loaded).
    pub stale: bool,
    /// Why something is not well, scrubbed of secrets.
    pub problems: Vec<String>,
}

impl HealthReport {
    /// Exit code for scripts: 0 loaded and fresh, 10 not configured,
    /// 11 unreachable, 12 not loaded, 13 stale, 14 loaded but the store's
    /// artifact cannot be read, so freshness is unknown.
    pub fn exit_code(&self) -> u8 {
        if !self.configured {
            10
        } else if !self.reachable {
            11
        } else if !self.loaded {
            12
        } else if !self.store_readable {
            14
        } else if self.stale {
            13
        } else {
            0
        }
    }
}

/// Checks Meilisearch, the loaded state and the store (`Err` when the store
/// could not even be opened).
pub async fn health(
    config: Option<&MeiliConfig>,
    store: Result<&Store, &StoreError>,
    index: &str,
    state_path: &Path,
) -> HealthReport {
    let mut report = HealthReport::default();
    let state = LoadedState::read(state_path);
    report.loaded_commit = state.as_ref().map(|s| s.source_commit.clone());
    report.schema_version = state.as_ref().map(|s| s.schema_version);
    match store {
        Ok(store) => {
            let set = ArtifactSet::read(
                store,
                &ArtifactLocation::Latest,
                1,
                std::time::Duration::ZERO,
            )
            .await;
            match set {
                Ok(set) => {
                    report.artifact_commit = Some(set.identity().source_commit);
                    report.store_readable = true;
                    for (source, why) in &set.left_out {
                        report
                            .problems
                            .push(format!("source {source} left out: {why}"));
                    }
                }
                Err(e) => report.problems.push(format!("artifact: {e}")),
            }
        }
        Err(e) => report.problems.push(format!("store: {e}")),
    }
    let Some(config) = config else {
        report
            .problems
            .push(format!("{} is not set", super::URL_ENV));
        report.stale = true;
        return report;
    };
    report.configured = true;
    let client = match config.client() {
        Ok(client) => client,
        Err(e) => {
            report.problems.push(e.to_string());
            return report;
        }
    };
    if let Err(e) = call(config, "health", || client.health()).await {
        report.problems.push(e.to_string());
        report.stale = true;
        return report;
    }
    report.reachable = true;
    match document_count(&client, config, index).await {
        Ok(count) => report.document_count = count,
        Err(e) => report.problems.push(e.to_string()),
    }
    report.loaded = match (&state, report.document_count) {
        (Some(s), Some(count)) => s.document_count == count && s.index == index,
        _ => false,
    };
    if !report.loaded {
        report
            .problems
            .push("the live index does not hold the recorded artifact".into());
    }
    report.stale = !report.loaded
        || !report.store_readable
        || match (&report.artifact_commit, &report.loaded_commit) {
            (Some(artifact), Some(loaded)) => artifact != loaded,
            _ => false,
        };
    report
}

/// Whether Meilisearch answers its health check (with the config's retries).
pub async fn ping(config: &MeiliConfig) -> Result<(), super::MeiliError> {
    let client = config.client()?;
    call(config, "health check", || client.health())
        .await
        .map(|_| ())
}
