//! The serving commands, one module each, and the one function that hands
//! a parsed command to its module ([`run`]). `sync` and `load` are the
//! reader crate's, shared with its thin binary; `health` is the reader's
//! check with Meilisearch and the embedded engine's without ([`health`]).

pub mod eval;
pub mod find;
pub mod health;
pub mod mcp;
pub mod search;
pub mod serve;

use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};

use agentfinder_skills_engine::Embedded;
use agentfinder_skills_reader::cli::{
    self, exit, seconds, CommandFailure, Defaults, HealthArgs, MeiliArgs, SyncArgs, SyncCommand,
};

/// The serving commands.
#[derive(Debug, Subcommand)]
pub enum ServingCommand {
    /// Bring the live Meilisearch index up to date with the store's artifact (a no-op if it is).
    Sync(SyncArgs),
    /// Load the artifact into Meilisearch unconditionally (staging index, atomic swap).
    Load(SyncArgs),
    /// Search for skills in your own words: Meilisearch when MEILI_URL is set, else the store itself.
    Search(search::SearchArgs),
    /// Whether search can answer: with MEILI_URL, configured / reachable /
    /// loaded / stale (exit 0 only when loaded and fresh); without it, the
    /// embedded engine (exit 0 when it can serve the store).
    Health(HealthArgs),
    /// Measure search quality: top-1 / top-3 / MRR of keyword against hybrid search.
    Eval(eval::EvalArgs),
    /// TopGun's FindSkills: search every source as a registry, write the
    /// output file, print the completion block.
    Find(find::FindArgs),
    /// Serve search over HTTP (GET /search, /health, /, and MCP at /mcp):
    /// Meilisearch when it is up, else the embedded engine.
    Serve(serve::ServeArgs),
    /// Serve the search as MCP tools over stdio (search_skills, get_skill,
    /// list_sources), for an agent's configuration to launch.
    Mcp(mcp::McpArgs),
}

/// What the serving commands use when a flag is absent, and the embedded
/// engine they answer from when no Meilisearch does.
#[derive(Debug, Clone)]
pub struct ServingDefaults {
    /// The store, how it is reached, and the index.
    pub reader: Defaults,
    /// The embedded engine (its model included).
    pub embedded: Arc<Embedded>,
}

/// Runs a serving command with `defaults` for absent flags. Returns the
/// exit code (0 on success; `health` has its own codes).
pub async fn run(
    command: ServingCommand,
    defaults: &ServingDefaults,
) -> Result<u8, CommandFailure> {
    match command {
        ServingCommand::Sync(args) => cli::run(SyncCommand::Sync(args), &defaults.reader).await,
        ServingCommand::Load(args) => cli::run(SyncCommand::Load(args), &defaults.reader).await,
        ServingCommand::Health(args) => health::run(args, defaults).await,
        ServingCommand::Search(args) => search::run(args, defaults).await,
        ServingCommand::Eval(args) => eval::run(args, defaults).await,
        ServingCommand::Find(args) => find::run(args, defaults).await,
        ServingCommand::Serve(args) => serve::run(args, defaults).await,
        ServingCommand::Mcp(args) => mcp::run(args, defaults).await,
    }
}

/// When the store's pipeline first saw each content (which copy of a skill
/// is shown), for a command searching `store` (else the default store);
/// `None` when the store cannot be read (a Meilisearch without one).
pub async fn first_seen(
    defaults: &ServingDefaults,
    store: Option<&str>,
) -> Option<Arc<crate::pipeline::fold::FirstSeen>> {
    let store = defaults.reader.open(store).ok()?;
    agentfinder_skills_reader::seen::first_seen(&store)
        .await
        .ok()
        .map(Arc::new)
}

/// Semantic ratio of hybrid search unless told otherwise.
pub const DEFAULT_SEMANTIC_RATIO: f32 = 0.5;

/// A semantic ratio is from 0 to 1 (Meilisearch refuses others).
pub fn check_ratio(ratio: f32) -> Result<(), CommandFailure> {
    if (0.0..=1.0).contains(&ratio) {
        Ok(())
    } else {
        Err(CommandFailure::new(
            exit::USAGE,
            format!("--semantic-ratio {ratio}: a ratio is from 0 to 1"),
        ))
    }
}

/// A query as a command takes it: trimmed, not empty, not too long.
pub fn check_query(query: &str) -> Result<&str, CommandFailure> {
    let query = query.trim();
    if query.is_empty() {
        return Err(CommandFailure::new(
            exit::USAGE,
            "the query is empty: say what the skill should do, e.g. \"merge two pdf files\"",
        ));
    }
    if query.len() > crate::MAX_QUERY_BYTES {
        return Err(CommandFailure::new(
            exit::USAGE,
            format!(
                "the query is {} bytes; at most {}",
                query.len(),
                crate::MAX_QUERY_BYTES
            ),
        ));
    }
    Ok(query)
}

/// What `serve` and `mcp` search, and how.
#[derive(Debug, Args)]
pub struct ServiceArgs {
    /// Artifact store searched (and synced by `serve`) [default: [output].store].
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Longest a request (or tool call) may take, in seconds.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = seconds)]
    pub request_timeout: Duration,
    /// Weight of semantic ranking in hybrid search, from 0 to 1.
    #[arg(long, env = "AGENTFINDER_SEMANTIC_RATIO", default_value_t = DEFAULT_SEMANTIC_RATIO)]
    pub semantic_ratio: f32,
    /// Meilisearch index [default: the loaded one, else hf_skills].
    #[arg(long)]
    pub index: Option<String>,
    /// Requests (searches, MCP tool calls) answered at once; more wait,
    /// within their timeout.
    #[arg(long, default_value_t = 32)]
    pub concurrency: usize,
    #[command(flatten)]
    pub meili: MeiliArgs,
}

impl ServiceArgs {
    /// What is searched, and how, from these flags.
    pub fn settings(
        &mut self,
        defaults: &ServingDefaults,
    ) -> Result<crate::searcher::SearchSettings, CommandFailure> {
        check_ratio(self.semantic_ratio)?;
        self.meili.resolve_state();
        let reader = &defaults.reader;
        Ok(crate::searcher::SearchSettings {
            store: self.store.clone().unwrap_or_else(|| reader.store.clone()),
            store_options: reader.store_options.clone(),
            meili: self.meili.config(),
            index: cli::index_or(
                self.index.clone(),
                &self.meili.state,
                reader.index.as_deref().unwrap_or(cli::DEFAULT_INDEX),
            ),
            state: self.meili.state.clone(),
            request_timeout: self.request_timeout.max(Duration::from_millis(100)),
            semantic_ratio: self.semantic_ratio,
            concurrency: self.concurrency,
        })
    }
}
