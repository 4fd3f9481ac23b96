//! `serve`: search over HTTP for the Space and for agents.
//!
//! `GET /search?q=&limit=&source=&format=agentfinder|topgun`, `GET /health`,
//! `GET /` (what the service offers) and the MCP tools at `/mcp`.
//! Meilisearch answers when it is configured and healthy; when it is down,
//! or a search of it fails, the embedded engine answers and the response
//! says so (`engine`, and the `X-Search-Engine` header). A background task
//! syncs Meilisearch and refreshes the embedded engine every `--refresh`
//! seconds without holding up a query. Bad input is a JSON error with a
//! 4xx; every request has a timeout and a bounded number run at once;
//! SIGTERM and Ctrl-C drain and stop.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use clap::Args;

use agentfinder_skills_reader::cli::{exit, CommandFailure};
use agentfinder_skills_reader::meili;
use agentfinder_skills_reader::store::Store;

use super::{ServiceArgs, ServingDefaults};
use crate::present::agentfinder::{SearchResult, UNTRUSTED_FIELDS, UNTRUSTED_NOTE};
use crate::present::topgun::{adapter_response, RegistryStatus};
use crate::searcher::{probe, SearchSettings, Searcher};
use crate::MAX_QUERY_BYTES;

/// `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0: any free port; the one taken is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: String,
    /// Seconds between syncs of Meilisearch and refreshes of the embedded engine (0: only at start).
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub refresh: u64,
    /// Requests answered at once; more wait, within their timeout.
    #[arg(long, default_value_t = 32)]
    pub concurrency: usize,
    /// A host name (or host:port) `/mcp` answers besides loopback, e.g. the
    /// Space's public host; repeat for several. Other `Host` headers are
    /// refused, against DNS rebinding.
    #[arg(long, value_name = "HOST")]
    pub mcp_host: Vec<String>,
    #[command(flatten)]
    pub service: ServiceArgs,
}

/// `serve`, until SIGTERM or Ctrl-C.
pub async fn run(mut args: ServeArgs, defaults: &ServingDefaults) -> Result<u8, CommandFailure> {
    let settings = ServeSettings {
        search: args.service.settings(defaults)?,
        addr: args.addr.clone(),
        refresh: args.refresh,
        concurrency: args.concurrency,
        mcp_hosts: args.mcp_host.clone(),
    };
    serve(settings, defaults.embedded.clone())
        .await
        .map_err(|e| CommandFailure::new(exit::FAILURE, format!("serve on {}: {e}", args.addr)))?;
    Ok(0)
}
/// Most results one request gets (a larger `limit` is capped).
pub const MAX_LIMIT: usize = 100;
/// Results when `limit` is absent.
pub const DEFAULT_LIMIT: usize = 10;

/// How the service runs.
pub struct ServeSettings {
    /// Where to listen.
    pub addr: String,
    /// What is searched, and how.
    pub search: SearchSettings,
    /// Seconds between syncs and engine refreshes (0: never).
    pub refresh: u64,
    /// Requests served at once; more wait (within their timeout).
    pub concurrency: usize,
    /// Hosts `/mcp` answers (the `Host` header), besides loopback.
    pub mcp_hosts: Vec<String>,
}

struct App {
    searcher: Arc<Searcher>,
    refresh: u64,
    permits: tokio::sync::Semaphore,
    started: Instant,
}

/// Runs the service until SIGTERM or Ctrl-C. Prints `listening on
/// http://<addr>` on stdout once it accepts connections.
pub async fn serve(
    settings: ServeSettings,
    embedded: Arc<agentfinder_skills_engine::Embedded>,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(&settings.addr).await?;
    let local = listener.local_addr()?;
    let searcher = Arc::new(Searcher::new(settings.search, embedded));
    let app = Arc::new(App {
        searcher: searcher.clone(),
        refresh: settings.refresh,
        permits: tokio::sync::Semaphore::new(settings.concurrency.max(1)),
        started: Instant::now(),
    });
    let refresher = tokio::spawn(refresh_loop(app.clone()));
    // Cancelled at SIGTERM: it ends MCP sessions and their open streams,
    // which graceful shutdown would otherwise wait on for ever.
    let stopping = tokio_util::sync::CancellationToken::new();
    let router = Router::new()
        .route("/", get(describe))
        .route("/search", get(search))
        .route("/health", get(health))
        .nest_service(
            "/mcp",
            crate::mcp::http_service(searcher, &settings.mcp_hosts, stopping.clone()),
        )
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such endpoint; GET / lists them") })
        .with_state(app);
    println!("listening on http://{local}");
    let signalled = stopping.clone();
    let drain = axum::serve(listener, router).with_graceful_shutdown(async move {
        shutdown_signal().await;
        signalled.cancel();
    });
    // Open requests get DRAIN to finish once the signal came; then serve
    // stops whatever is still open.
    let served = tokio::select! {
        served = drain => served,
        () = async {
            stopping.cancelled().await;
            tokio::time::sleep(DRAIN).await;
        } => {
            eprintln!("serve: requests still open {} s after the signal; stopping", DRAIN.as_secs());
            Ok(())
        }
    };
    refresher.abort();
    eprintln!("serve: stopped");
    served
}

/// How long open requests may take to finish after SIGTERM or Ctrl-C.
pub const DRAIN: Duration = Duration::from_secs(10);

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

/// Syncs Meilisearch and refreshes the embedded engine: at once, then every
/// `refresh` seconds. Queries never wait for it.
async fn refresh_loop(app: Arc<App>) {
    let mut first = true;
    loop {
        app.searcher.refresh("serve").await;
        if std::mem::take(&mut first) {
            app.searcher.prepare("serve").await;
        }
        if app.refresh == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_secs(app.refresh)).await;
    }
}

/// `GET /`.
async fn describe(State(app): State<Arc<App>>) -> Response {
    let body = json!({
        "service": "agentfinder-skills",
        "version": env!("CARGO_PKG_VERSION"),
        "endpoints": {
            "GET /search": {
                "q": format!("what the skill should do (required, at most {MAX_QUERY_BYTES} bytes)"),
                "limit": format!("results, 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT}; larger is capped)"),
                "source": "only this source id",
                "format": "agentfinder (default): {engine, notice, results: [SearchResult]}; topgun: TopGun's adapter object",
            },
            "GET /health": "configured / reachable / loaded / fresh, the engine in use, and the store's sources",
            "POST /mcp": "the same search as Model Context Protocol tools (streamable HTTP): search_skills, get_skill, list_sources",
        },
        "engine": app.searcher.engine_name(),
    });
    (StatusCode::OK, Json(body)).into_response()
}

/// The parameters of a search.
#[derive(Debug, PartialEq)]
struct SearchParams {
    q: String,
    limit: usize,
    source: Option<String>,
    topgun: bool,
}

/// Parses a raw query string; the error is the status and the message.
fn parse_params(raw: Option<&str>) -> Result<SearchParams, (StatusCode, String)> {
    let bad = |m: String| (StatusCode::BAD_REQUEST, m);
    let mut q = None;
    let mut limit = None;
    let mut source = None;
    let mut format = None;
    for pair in raw.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = value.replace('+', " ");
        let decoded = percent_encoding::percent_decode_str(&value).collect::<Vec<u8>>();
        let value = String::from_utf8(decoded)
            .map_err(|_| bad(format!("parameter `{key}` is not valid UTF-8")))?;
        match key {
            "q" => q = Some(value),
            "limit" => limit = Some(value),
            "source" => source = Some(value).filter(|s| !s.is_empty()),
            "format" => format = Some(value),
            _ => {}
        }
    }
    let q = q.map(|q| q.trim().to_string()).unwrap_or_default();
    if q.is_empty() {
        return Err(bad(
            "`q` is missing or empty: say what the skill should do".into()
        ));
    }
    if q.len() > MAX_QUERY_BYTES {
        return Err((
            StatusCode::URI_TOO_LONG,
            format!("`q` is {} bytes; at most {MAX_QUERY_BYTES}", q.len()),
        ));
    }
    let limit = match limit {
        None => DEFAULT_LIMIT,
        Some(text) => match text.parse::<usize>() {
            Ok(0) => return Err(bad("`limit` must be at least 1".into())),
            Ok(n) => n.min(MAX_LIMIT),
            Err(_) => return Err(bad(format!("`limit` = {text:?} is not a number"))),
        },
    };
    let topgun = match format.as_deref() {
        None | Some("agentfinder") => false,
        Some("topgun") => true,
        Some(other) => {
            return Err(bad(format!(
                "`format` = {other:?}: use agentfinder or topgun"
            )))
        }
    };
    Ok(SearchParams {
        q,
        limit,
        source,
        topgun,
    })
}

/// `GET /search`.
async fn search(State(app): State<Arc<App>>, RawQuery(raw): RawQuery) -> Response {
    let params = match parse_params(raw.as_deref()) {
        Ok(params) => params,
        Err((status, message)) => return error(status, &message),
    };
    let timeout = app.searcher.settings.request_timeout;
    let arrived = Instant::now();
    let answered = tokio::time::timeout(timeout, async {
        let Ok(_permit) = app.permits.acquire().await else {
            return error(StatusCode::SERVICE_UNAVAILABLE, "shutting down");
        };
        answer(&app, &params, arrived).await
    })
    .await;
    answered.unwrap_or_else(|_| {
        error(
            StatusCode::GATEWAY_TIMEOUT,
            &format!("no answer within {:.1} s", timeout.as_secs_f64()),
        )
    })
}

/// The search's answer in the format asked for. `arrived` is when the
/// request came.
async fn answer(app: &App, params: &SearchParams, arrived: Instant) -> Response {
    let started = Instant::now();
    let found = app
        .searcher
        .search(
            &params.q,
            params.limit,
            params.source.as_deref(),
            0,
            arrived,
        )
        .await;
    let answer = match found {
        Ok(answer) => answer,
        Err(e) if params.topgun => {
            let (adapter, _) = adapter_response(
                "agentfinder",
                Err((RegistryStatus::Unavailable, e)),
                started.elapsed().as_millis() as u64,
                &mut |_| {},
            );
            return with_engine(StatusCode::OK, json!(adapter), "none");
        }
        Err(e) => {
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("no engine can answer: {e}"),
            )
        }
    };
    let engine = answer.engine;
    if params.topgun {
        let (adapter, _) = adapter_response(
            "agentfinder",
            Ok(answer.results),
            started.elapsed().as_millis() as u64,
            &mut |line| eprintln!("serve: {line}"),
        );
        return with_engine(StatusCode::OK, json!(adapter), engine);
    }
    let results = SearchResult::all(&answer);
    let untrusted = json!({"fields": UNTRUSTED_FIELDS, "note": UNTRUSTED_NOTE});
    with_engine(
        StatusCode::OK,
        json!({"engine": engine, "notice": answer.notice, "match": answer.strength,
               "untrusted": untrusted, "results": results}),
        engine,
    )
}

/// `GET /health`.
async fn health(State(app): State<Arc<App>>) -> Response {
    let searcher = &app.searcher;
    let settings = &searcher.settings;
    let store = Store::open_existing_with(&settings.store, &settings.store_options);
    let probe = settings.meili.as_ref().map(probe);
    let report = meili::health(
        probe.as_ref(),
        store.as_ref(),
        &settings.index,
        &settings.state,
    )
    .await;
    let embedded = searcher.embedded.status(Some(&settings.store));
    let meili_ok = report.reachable && report.loaded;
    searcher.set_meili_up(meili_ok || settings.meili.is_none());
    let engine = searcher.engine_name();
    let sources = match &store {
        Ok(store) => agentfinder_skills_reader::sources::list_sources(store)
            .await
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    let run = match &store {
        Ok(store) => agentfinder_skills_reader::sources::latest_run(store).await,
        Err(_) => None,
    };
    let answering = engine == "meilisearch" || embedded["ready"] == true;
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
        "problems": report.problems,
        "embedded": embedded,
        "sources": sources,
        "last_run": run.map(|r| json!(r.sources)),
        "uptime_seconds": app.started.elapsed().as_secs(),
    });
    let status = if answering {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(body)).into_response()
}

fn with_engine(status: StatusCode, body: Value, engine: &'static str) -> Response {
    let mut response = (status, Json(body)).into_response();
    response
        .headers_mut()
        .insert("x-search-engine", HeaderValue::from_static(engine));
    response
}

fn error(status: StatusCode, message: &str) -> Response {
    let mut response = (
        status,
        Json(json!({"error": message, "status": status.as_u16()})),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_checked() {
        let ok = parse_params(Some("q=merge+pdf%20files&limit=5&source=hf&format=topgun")).unwrap();
        assert_eq!(
            ok,
            SearchParams {
                q: "merge pdf files".into(),
                limit: 5,
                source: Some("hf".into()),
                topgun: true
            }
        );
        assert_eq!(
            parse_params(Some("q=x&limit=100000")).unwrap().limit,
            MAX_LIMIT
        );
        let status = |raw: &str| parse_params(Some(raw)).unwrap_err().0;
        assert_eq!(status("limit=3"), StatusCode::BAD_REQUEST);
        assert_eq!(status("q=%20"), StatusCode::BAD_REQUEST);
        assert_eq!(status("q=x&limit=0"), StatusCode::BAD_REQUEST);
        assert_eq!(status("q=x&limit=ten"), StatusCode::BAD_REQUEST);
        assert_eq!(status("q=x&format=xml"), StatusCode::BAD_REQUEST);
        assert_eq!(status("q=%FF%FE"), StatusCode::BAD_REQUEST);
        assert_eq!(
            status(&format!("q={}", "a".repeat(100_000))),
            StatusCode::URI_TOO_LONG
        );
    }
}
