//! `find`: TopGun's FindSkills over the index, one registry per source.
//!
//! Every source the store knows (a `sources/<id>/` folder, or a source of
//! the newest run report) is a registry. One that has an artifact is
//! searched on its own (`source = "<id>"`) within the deadline, all at once;
//! one that was never built is `unavailable` with the run's reason. A store
//! of a single source is one registry searched whole. The answers are
//! normalised and gathered into [`FindOutput`].

use std::time::{Duration, Instant};

use crate::local::{LocalQuery, LocalSearch};
use crate::meili::{self, MeiliConfig, MeiliError, SearchOptions};
use crate::sources::{latest_run, list_sources};
use crate::store::Store;
use crate::topgun::{adapter_response, AdapterResponse, FindOutput, RegistryStatus};

/// How `find` searches.
#[derive(Debug, Clone)]
pub struct FindOptions {
    /// The index.
    pub index: String,
    /// Results per registry.
    pub limit: usize,
    /// Hybrid search: embedder and semantic ratio; keyword only when `None`.
    pub hybrid: Option<(String, f32)>,
    /// Time each registry is given, retries included.
    pub deadline: Duration,
    /// The store `--store` named, for the embedded engine.
    pub store: Option<String>,
}

/// One registry to ask: a source, searched when it has an artifact.
#[derive(Debug, Clone, PartialEq)]
pub struct Registry {
    /// Its name (the source id).
    pub name: String,
    /// The filter that keeps its documents (`None`: the whole index).
    pub filter: Option<String>,
    /// Its source id (`None`: the whole index).
    pub source: Option<String>,
    /// Why it cannot be searched (never built), if so.
    pub not_built: Option<String>,
}

/// The registries of `store`: its sources (with the newest run's reasons
/// for those never built), else the whole index as `single`.
pub async fn registries(store: Option<&Store>, single: &str) -> Vec<Registry> {
    let Some(store) = store else {
        return vec![whole(single)];
    };
    let listed = list_sources(store).await.unwrap_or_default();
    let mut built = Vec::new();
    // A `sources/<id>/` folder is not a build: a first build that failed
    // leaves one. A source counts as built once it has a `latest/`.
    for id in &listed {
        let promoted = crate::artifact::read_success(
            &crate::sources::source_store(store, id),
            &crate::contract::ArtifactLocation::Latest,
        )
        .await;
        if matches!(promoted, Ok(Some(_))) {
            built.push(id.clone());
        }
    }
    let run = latest_run(store).await;
    let mut names = listed;
    if let Some(run) = &run {
        for outcome in &run.sources {
            if !names.contains(&outcome.source) {
                names.push(outcome.source.clone());
            }
        }
    }
    if names.is_empty() {
        return vec![whole(single)];
    }
    names
        .into_iter()
        .map(|name| {
            let has_artifact = built.contains(&name);
            let reason = run
                .as_ref()
                .and_then(|r| r.sources.iter().find(|s| s.source == name))
                .and_then(|s| s.reason.clone())
                .unwrap_or_else(|| "not built yet".into());
            Registry {
                source: Some(name.clone()),
                filter: Some(format!(
                    "source = {}",
                    serde_json::Value::from(name.as_str())
                )),
                not_built: (!has_artifact).then(|| format!("not built: {reason}")),
                name,
            }
        })
        .collect()
}

fn whole(name: &str) -> Registry {
    Registry {
        name: name.to_string(),
        filter: None,
        source: None,
        not_built: None,
    }
}

/// Asks every registry (at once) and gathers the answers; `log` receives
/// the normalisation's messages. Meilisearch unset or down makes every
/// registry `unavailable`, never an error.
pub async fn find(
    config: Option<&MeiliConfig>,
    local: Option<&dyn LocalSearch>,
    registries: Vec<Registry>,
    query: &str,
    options: &FindOptions,
    log: &mut dyn FnMut(String),
) -> FindOutput {
    let started = Instant::now();
    let searched_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    if let (None, Some(local)) = (config, local) {
        local.prepare(options.store.as_deref()).await;
    }
    let answers = futures::future::join_all(
        registries
            .iter()
            .map(|registry| ask(config, local, registry, query, options)),
    )
    .await;
    let mut gathered = Vec::new();
    for (registry, (outcome, latency_ms)) in registries.iter().zip(answers) {
        let answer: (AdapterResponse, usize) =
            adapter_response(&registry.name, outcome, latency_ms, log);
        gathered.push(answer);
    }
    FindOutput::gather(
        query,
        searched_at,
        started.elapsed().as_millis() as u64,
        gathered,
    )
}

/// A registry's hits with their scores, or its status and reason.
pub type Outcome = Result<Vec<(serde_json::Value, f64)>, (RegistryStatus, String)>;

/// One Meilisearch search as a registry's answer: no answer within
/// `deadline` (retries included), or Meilisearch unreachable, is
/// `unavailable`; a refusal is `failed`; the reason is scrubbed of secrets.
pub async fn meili_outcome(
    config: &MeiliConfig,
    query: &str,
    search: &SearchOptions,
    deadline: Duration,
) -> Outcome {
    match tokio::time::timeout(deadline, meili::search_detailed(config, query, search)).await {
        Err(_) => Err((
            RegistryStatus::Unavailable,
            format!(
                "Meilisearch at {} gave no answer within {:.1} s",
                config.display_url(),
                deadline.as_secs_f64()
            ),
        )),
        Ok(Ok(response)) => Ok(response.documents),
        Ok(Err(e)) => {
            let status = match e {
                MeiliError::Unavailable { .. } => RegistryStatus::Unavailable,
                _ => RegistryStatus::Failed,
            };
            Err((status, config.scrub(&e.to_string())))
        }
    }
}

/// The embedded engine's answer to `query` within `deadline`, as a
/// registry's outcome: its error, or no answer in time, is `unavailable`.
pub async fn local_outcome(
    local: &dyn LocalSearch,
    query: &LocalQuery,
    deadline: Duration,
) -> Outcome {
    match tokio::time::timeout(deadline, local.search(query)).await {
        Ok(Ok(response)) => Ok(response.documents),
        Ok(Err(e)) => Err((RegistryStatus::Unavailable, e)),
        Err(_) => Err((
            RegistryStatus::Unavailable,
            format!("no answer within {:.1} s", deadline.as_secs_f64()),
        )),
    }
}

/// One registry's search within the deadline, and how long it took.
async fn ask(
    config: Option<&MeiliConfig>,
    local: Option<&dyn LocalSearch>,
    registry: &Registry,
    query: &str,
    options: &FindOptions,
) -> (Outcome, u64) {
    let started = Instant::now();
    let outcome = match (config, &registry.not_built) {
        (_, Some(reason)) => Err((RegistryStatus::Unavailable, reason.clone())),
        (None, None) => match local {
            None => Err((
                RegistryStatus::Unavailable,
                format!("{} is not set", meili::URL_ENV),
            )),
            Some(local) => {
                let asked = LocalQuery {
                    text: query.to_string(),
                    limit: options.limit,
                    source: registry.source.clone(),
                    semantic_ratio: options.hybrid.as_ref().map(|h| h.1),
                    sections: 0,
                    store: options.store.clone(),
                    // A registry still queued at its deadline is late.
                    start_by: started.checked_add(options.deadline),
                };
                local_outcome(local, &asked, options.deadline).await
            }
        },
        (Some(config), None) => {
            let search = SearchOptions {
                index: options.index.clone(),
                limit: options.limit,
                filter: registry.filter.clone(),
                all_sections: false,
                hybrid: options.hybrid.clone(),
            };
            meili_outcome(config, query, &search, options.deadline).await
        }
    };
    (outcome, started.elapsed().as_millis() as u64)
}

/// Where `find --topgun-home` writes: `<home>/.topgun/found-skills-<first
/// 16 hex digits of the query hash>.json`.
pub fn topgun_path(home: &std::path::Path, query_hash: &str) -> std::path::PathBuf {
    home.join(".topgun").join(format!(
        "found-skills-{}.json",
        &query_hash[..16.min(query_hash.len())]
    ))
}
