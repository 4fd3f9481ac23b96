//! `mcp`: the search as MCP tools over stdio ([`crate::mcp`]), for an
//! agent's configuration to launch; `serve` has the same tools at `/mcp`.

use std::sync::Arc;

use clap::Args;

use agentfinder_skills_reader::cli::{exit, CommandFailure};

use super::{ServiceArgs, ServingDefaults};
use crate::searcher::{watch, Searcher};

/// `mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Seconds between looks at the store for a new latest/ (0: only at start).
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub refresh: u64,
    #[command(flatten)]
    pub service: ServiceArgs,
}

/// `mcp`: the tools over stdio until the client closes it. The store is
/// looked at again every `--refresh` seconds (Meilisearch is searched when
/// it answers, never synced from here: `serve` or `sync` keep it).
pub async fn run(mut args: McpArgs, defaults: &ServingDefaults) -> Result<u8, CommandFailure> {
    let settings = args.service.settings(defaults)?;
    let searcher = Arc::new(Searcher::new(settings, defaults.embedded.clone()));
    let watcher = tokio::spawn(watch(searcher.clone(), args.refresh, "mcp"));
    let served = crate::mcp::serve_stdio(searcher).await;
    watcher.abort();
    served.map_err(|e| CommandFailure::new(exit::FAILURE, format!("mcp: {e}")))?;
    Ok(0)
}
