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

use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use clap::Args;

use agentfinder_skills_reader::cli::{exit, CommandFailure};

use super::{ServiceArgs, ServingDefaults};
use crate::present::AgentText;
use crate::searcher::{SearchSettings, Searcher};
use crate::MAX_QUERY_BYTES;
use health::{check_loop, health, Checked};
use search::search;

mod health;
mod search;

/// `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0: any free port; the one taken is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: String,
    /// Seconds between syncs of Meilisearch and refreshes of the embedded engine (0: only at start).
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub refresh: u64,
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
    /// Hosts `/mcp` answers (the `Host` header), besides loopback.
    pub mcp_hosts: Vec<String>,
}

struct App {
    searcher: Arc<Searcher>,
    refresh: u64,
    started: Instant,
    /// What the last check of Meilisearch and the store found (`/health`
    /// answers from it, never reading the store itself).
    checked: std::sync::RwLock<Option<Checked>>,
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
        started: Instant::now(),
        checked: std::sync::RwLock::new(None),
    });
    let refresher = tokio::spawn(refresh_loop(app.clone()));
    let checker = tokio::spawn(check_loop(app.clone()));
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
        // A POST to /mcp that is not JSON gets JSON-RPC's -32700.
        .layer(axum::middleware::from_fn(crate::mcp::parse::http_errors))
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
    checker.abort();
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

fn with_engine(status: StatusCode, body: Value, engine: &'static str) -> Response {
    let mut response = (status, Json(body)).into_response();
    response
        .headers_mut()
        .insert("x-search-engine", HeaderValue::from_static(engine));
    response
}

/// A JSON error; `message` is cleaned (an engine's error can quote what
/// a skill's author wrote).
fn error(status: StatusCode, message: &str) -> Response {
    let message = AgentText::field(message);
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
