//! `GET /health`: answered from the last check of Meilisearch and the
//! store, which a background task makes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use agentfinder_skills_reader::meili;
use agentfinder_skills_reader::store::Store;

use super::App;
use crate::present::{AgentJson, AgentText};
use crate::searcher::probe;

/// What a check of Meilisearch and the store found.
#[derive(Clone)]
pub(super) struct Checked {
    report: meili::HealthReport,
    sources: Vec<String>,
    last_run: Option<Value>,
    at: Instant,
}

/// How often Meilisearch and the store are checked for `/health`, at
/// most: a shorter `--refresh` checks as often as it refreshes.
pub const CHECK_EVERY: Duration = Duration::from_secs(15);

/// The pause between checks: [`CHECK_EVERY`], or `--refresh` seconds
/// when the operator asked for fresher answers than that.
fn check_pause(refresh: u64) -> Duration {
    match refresh {
        0 => CHECK_EVERY,
        seconds => CHECK_EVERY.min(Duration::from_secs(seconds)),
    }
}

/// Checks Meilisearch and the store every [`check_pause`], for `/health`
/// to answer from; brings Meilisearch back into use once it answers and
/// holds the index.
pub(super) async fn check_loop(app: Arc<App>) {
    loop {
        let searcher = &app.searcher;
        let settings = &searcher.settings;
        let store = Store::open_existing_with(&settings.store, &settings.store_options);
        let probe = settings.meili.as_ref().map(probe);
        // Without Meilisearch the embedded engine answers: its absence is
        // no problem.
        let report = crate::commands::health::without_meilisearch(
            meili::health(
                probe.as_ref(),
                store.as_ref(),
                &settings.index,
                &settings.state,
            )
            .await,
        );
        if settings.meili.is_some() {
            // An index that does not hold the recorded artifact still
            // answers better than nothing when the embedded engine has
            // nothing to answer with.
            let embedded_ready = searcher.embedded.status(Some(&settings.store))["ready"] == true;
            searcher.set_meili_up(report.reachable && (report.loaded || !embedded_ready));
        }
        let (sources, last_run) = match &store {
            Ok(store) => (
                agentfinder_skills_reader::sources::list_sources(store)
                    .await
                    .unwrap_or_default(),
                agentfinder_skills_reader::sources::latest_run(store)
                    .await
                    .map(|r| json!(r.sources)),
            ),
            Err(_) => (Vec::new(), None),
        };
        if let Ok(mut checked) = app.checked.write() {
            *checked = Some(Checked {
                report,
                sources,
                last_run,
                at: Instant::now(),
            });
        }
        tokio::time::sleep(check_pause(app.refresh)).await;
    }
}

/// `GET /health`: what the service holds (the embedded engine's state, the
/// last check of Meilisearch and the store); it reads nothing itself.
pub(super) async fn health(State(app): State<Arc<App>>) -> Response {
    let searcher = &app.searcher;
    let embedded = searcher.embedded.status(Some(&searcher.settings.store));
    let engine = searcher.engine_name();
    let checked = app.checked.read().ok().and_then(|c| c.clone());
    let Some(checked) = checked else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"engine": engine, "answering": false, "problems": ["starting: not checked yet"],
                        "embedded": AgentJson::clean(embedded), "uptime_seconds": app.started.elapsed().as_secs()})),
        )
            .into_response();
    };
    let report = &checked.report;
    let answering = engine == "meilisearch" || embedded["ready"] == true;
    // Problems, the engine's state, sources and the last run's reasons
    // can quote what a skill's author wrote (an error reading it, a
    // source's id): cleaned.
    let problems: Vec<AgentText> = report
        .problems
        .iter()
        .map(|p| AgentText::field(p))
        .collect();
    let embedded = AgentJson::clean(embedded);
    let body = json!({
        "engine": engine,
        "answering": answering,
        "configured": report.configured,
        "reachable": report.reachable,
        "loaded": report.loaded,
        // Without Meilisearch, what answers is the embedded engine: fresh
        // when it serves what it last read of the store.
        "fresh": if report.configured {
            report.loaded && !report.stale
        } else {
            embedded["ready"] == true && embedded["problem"].is_null()
        },
        "store_readable": report.store_readable,
        "problems": problems,
        "embedded": embedded,
        "sources": AgentJson::clean(json!(checked.sources)),
        "last_run": checked.last_run.clone().map(AgentJson::clean),
        "checked_seconds_ago": checked.at.elapsed().as_secs(),
        "uptime_seconds": app.started.elapsed().as_secs(),
    });
    let status = if answering {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(body)).into_response()
}
