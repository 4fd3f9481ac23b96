//! Building many sources at once: every enabled `[[sources]]` entry (or
//! those `--only` names) into its own `sources/<id>/` of the store, a few
//! at a time. A source that fails, is missing, rate-limited, down or slower
//! than its timeout is reported and left alone (its previous `latest/`
//! stays), and the others go on. The run ends with a report in
//! `runs/<timestamp>.json`.

use std::time::{Duration, Instant};

use futures::StreamExt;

use agentfinder_skills_reader::sources::SourceStatus;
use agentfinder_skills_reader::sources::{
    prune_runs, reason_text, source_store, RunReport, SourceOutcome, RUNS_KEPT,
};
use agentfinder_skills_reader::store::Store;

use super::{build_by, BuildError, BuildRequest, BuildSummary};
use crate::config::sources::SourceEntry;
use crate::config::Config;
use crate::logging::Reporter;
use crate::source::network::NetworkFailure;
use crate::source::{SourceError, SourceSpec};
use crate::validate::StrictPolicy;

/// Pauses before the retries of a rate-limited source.
pub const RATE_LIMIT_DELAYS: [Duration; 3] = [
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
];

/// What a many-source build is asked.
#[derive(Debug, Clone)]
pub struct SourcesRequest {
    /// The configuration, with its `[[sources]]`.
    pub config: Config,
    /// Only these ids (`--only`); all enabled sources when empty.
    pub only: Vec<String>,
    /// Promote each source's `latest/`.
    pub promote: bool,
    /// Skip promotion's checks.
    pub force: bool,
    /// What fails a source's build.
    pub strict: StrictPolicy,
    /// Build a source that holds no skill (refused otherwise).
    pub allow_empty: bool,
    /// The home folder `~` and `$HOME` expand to.
    pub home: Option<String>,
}

/// A many-source build could not start.
#[derive(Debug, thiserror::Error)]
pub enum SourcesError {
    /// `--only` names a source the configuration does not have.
    #[error("--only names {0}, which [[sources]] does not list")]
    UnknownSource(String),
    /// Nothing to build.
    #[error(
        "no enabled source to build (every [[sources]] entry is disabled, or --only named none)"
    )]
    NothingToBuild,
    /// The run report could not be written.
    #[error("cannot write the run report {path}: {message}")]
    Report {
        /// Its path in the store.
        path: String,
        /// Why.
        message: String,
    },
}

/// Builds the sources of `request` into `store` and writes the run report.
pub async fn build_sources(
    request: SourcesRequest,
    store: &Store,
    reporter: &Reporter,
) -> Result<(RunReport, String), SourcesError> {
    let started = Instant::now();
    let started_at = crate::source::rfc3339(crate::time::unix_seconds());
    let entries = selected(&request)?;
    let concurrency = request.config.source.concurrency;
    let outcomes: Vec<SourceOutcome> = futures::stream::iter(entries)
        .map(|entry| build_one(&request, entry, store, reporter))
        .buffered(concurrency)
        .collect()
        .await;
    let report = RunReport::new(started_at, started.elapsed().as_millis() as u64, outcomes);
    let path = report
        .write(store)
        .await
        .map_err(|e| SourcesError::Report {
            path: report.path(),
            message: reason_text(&e.to_string()),
        })?;
    // Older reports go: `find` and `/health` read the newest, and a daily
    // job would otherwise grow the listing for ever.
    match prune_runs(store, RUNS_KEPT).await {
        Ok(0) => {}
        Ok(n) => reporter.info("sources", format!("removed {n} old run reports")),
        Err(e) => reporter.warn("sources", format!("old run reports: {e}")),
    }
    Ok((report, path))
}

/// The entries to build, in configuration order.
fn selected(request: &SourcesRequest) -> Result<Vec<&SourceEntry>, SourcesError> {
    let sources = &request.config.sources;
    for id in &request.only {
        if !sources.iter().any(|s| &s.id == id) {
            return Err(SourcesError::UnknownSource(id.clone()));
        }
    }
    let chosen: Vec<&SourceEntry> = sources
        .iter()
        .filter(|s| match request.only.is_empty() {
            true => s.enabled,
            false => request.only.contains(&s.id),
        })
        .collect();
    if chosen.is_empty() {
        return Err(SourcesError::NothingToBuild);
    }
    Ok(chosen)
}

/// Builds one source within its timeout, retrying a rate limit.
async fn build_one(
    request: &SourcesRequest,
    entry: &SourceEntry,
    store: &Store,
    reporter: &Reporter,
) -> SourceOutcome {
    let started = Instant::now();
    let reporter = reporter.for_source(&entry.id);
    let (config, location) = request.config.for_entry(entry, request.home.as_deref());
    let timeout = Duration::from_secs(config.source.timeout_secs);
    let spec = SourceSpec::parse(&location);
    let outcome = match &spec {
        SourceSpec::Local(path) if !path.exists() => Err(Unbuilt::unavailable(format!(
            "{} does not exist on this machine",
            path.display()
        ))),
        _ => {
            let build_request = BuildRequest {
                config,
                source: spec,
                reference: entry.reference.clone(),
                promote: request.promote,
                force: request.force,
                strict: request.strict.clone(),
                allow_empty: request.allow_empty,
            };
            let store = source_store(store, &entry.id);
            // The deadline stops work before promotion only: a
            // promotion under way runs to its end (see `build_by`).
            let deadline = tokio::time::Instant::now().checked_add(timeout);
            build_retrying(build_request, &store, &reporter, deadline)
                .await
                .map_err(Unbuilt::from)
        }
    };
    let latency_ms = started.elapsed().as_millis() as u64;
    let outcome = match outcome {
        Ok(summary) => SourceOutcome {
            source: entry.id.clone(),
            status: SourceStatus::Ok,
            reason: None,
            latency_ms,
            result_count: summary.documents,
            version: Some(summary.commit),
        },
        Err(unbuilt) => SourceOutcome {
            source: entry.id.clone(),
            status: unbuilt.status,
            reason: Some(reason_text(&unbuilt.reason)),
            latency_ms,
            result_count: 0,
            version: None,
        },
    };
    match outcome.status {
        SourceStatus::Ok => reporter.info(
            "sources",
            format!(
                "ok: {} documents ({} ms)",
                outcome.result_count, outcome.latency_ms
            ),
        ),
        status => reporter.warn(
            "sources",
            format!(
                "{}: {}; its previous latest/ stays",
                status_name(status),
                outcome.reason.as_deref().unwrap_or_default()
            ),
        ),
    }
    outcome
}

/// A build, tried again after [`RATE_LIMIT_DELAYS`] while the server
/// answers 429.
async fn build_retrying(
    request: BuildRequest,
    store: &Store,
    reporter: &Reporter,
    deadline: Option<tokio::time::Instant>,
) -> Result<BuildSummary, BuildError> {
    let mut delays = RATE_LIMIT_DELAYS.iter();
    loop {
        let result = build_by(request.clone(), store, reporter, deadline).await;
        let rate_limited = matches!(
            &result,
            Err(BuildError::Source(SourceError::Network {
                failure: NetworkFailure::RateLimited,
                ..
            }))
        );
        let Some(delay) = delays.next().filter(|_| rate_limited) else {
            return result;
        };
        reporter.info(
            "sources",
            format!("rate limited; trying again in {} s", delay.as_secs()),
        );
        let wake = tokio::time::Instant::now() + *delay;
        if deadline.is_some_and(|deadline| wake >= deadline) {
            // No time left to wait for the server.
            return result;
        }
        tokio::time::sleep_until(wake).await;
    }
}

/// Why a source was not built, as the report says it.
struct Unbuilt {
    status: SourceStatus,
    reason: String,
}

impl Unbuilt {
    fn unavailable(reason: String) -> Self {
        Self {
            status: SourceStatus::Unavailable,
            reason,
        }
    }
}

impl From<BuildError> for Unbuilt {
    fn from(error: BuildError) -> Self {
        match &error {
            BuildError::Source(SourceError::Network {
                failure: NetworkFailure::RateLimited,
                ..
            }) => Self::unavailable("rate limited".into()),
            BuildError::Source(SourceError::Network {
                failure: failure @ NetworkFailure::ServerError(_),
                ..
            }) => Self::unavailable(failure.to_string()),
            BuildError::Source(SourceError::Network {
                failure, message, ..
            }) => Self::unavailable(format!("{failure}: {message}")),
            BuildError::TimedOut(_) | BuildError::Stopped | BuildError::Interrupted(_) => {
                Self::unavailable(error.to_string())
            }
            BuildError::Source(SourceError::Missing(path)) => {
                Self::unavailable(format!("{path} does not exist on this machine"))
            }
            _ => Self {
                status: SourceStatus::Failed,
                reason: error.to_string(),
            },
        }
    }
}

/// `ok`, `failed` or `unavailable`.
pub fn status_name(status: SourceStatus) -> &'static str {
    match status {
        SourceStatus::Ok => "ok",
        SourceStatus::Failed => "failed",
        SourceStatus::Unavailable => "unavailable",
    }
}
