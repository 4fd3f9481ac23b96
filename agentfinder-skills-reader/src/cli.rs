//! The serving-side commands (`sync`, `load`, `search`, `health`), shared by
//! this crate's thin binary and the builder's binary so both take the same
//! flags and print the same things.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use crate::contract::ArtifactLocation;
use crate::meili::{
    self, LoadOutcome, MeiliConfig, RetryPolicy, SearchOptions, SyncError, SyncOptions,
};
use crate::store::{Store, StoreError, StoreOptions};

/// `println!` to stdout, quietly stopping when the reader went away (a
/// pipe into `head` or `grep -q` is not an error).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `print!` likewise.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

/// Exit codes of the serving commands.
pub mod exit {
    /// Anything not listed.
    pub const FAILURE: u8 = 1;
    /// Bad arguments (the code clap exits with for the ones it checks).
    pub const USAGE: u8 = 2;
    /// The artifact store failed or the artifact is unreadable (after retries).
    pub const STORAGE: u8 = 5;
    /// Meilisearch is not configured, unreachable, or failed the load.
    pub const MEILI: u8 = 8;
}

/// Serving-side subcommands.
#[derive(Debug, Subcommand)]
pub enum ReaderCommand {
    /// Bring the live Meilisearch index up to date with the store's artifact (a no-op if it is).
    Sync(SyncArgs),
    /// Load the artifact into Meilisearch unconditionally (staging index, atomic swap).
    Load(SyncArgs),
    /// Search the live index; one best hit per skill.
    Search(SearchArgs),
    /// Report configured / reachable / loaded / stale; exit 0 only when loaded and fresh.
    Health(HealthArgs),
    /// Measure search quality: top-1 / top-3 / MRR of keyword against hybrid search.
    Eval(EvalArgs),
    /// TopGun's FindSkills: search every source as a registry, write the
    /// output file, print the completion block.
    Find(FindArgs),
    /// Serve search over HTTP (GET /search, /health, /): Meilisearch when
    /// it is up, else the binary's embedded engine (the builder's binary
    /// has one; this crate's answers 503 without Meilisearch).
    #[cfg(feature = "serve")]
    Serve(ServeArgs),
    /// Serve the search as MCP tools over stdio (search_skills, get_skill,
    /// list_sources), for an agent's configuration to launch; `serve` has
    /// the same tools under /mcp.
    #[cfg(feature = "serve")]
    Mcp(McpArgs),
}

/// `mcp`.
#[cfg(feature = "serve")]
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Seconds between looks at the store for a new latest/ (0: only at start).
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub refresh: u64,
    #[command(flatten)]
    pub service: ServiceArgs,
}

/// What `serve` and `mcp` search, and how.
#[cfg(feature = "serve")]
#[derive(Debug, Args)]
pub struct ServiceArgs {
    /// Artifact store searched (and synced by `serve`) [default: the binary's default store].
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Longest a request (or tool call) may take, in seconds.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = seconds)]
    pub request_timeout: Duration,
    /// Weight of semantic ranking in hybrid search, from 0 to 1.
    #[arg(long, env = "AGENTFINDER_SEMANTIC_RATIO", default_value_t = DEFAULT_SEMANTIC_RATIO)]
    pub semantic_ratio: f32,
    /// Meilisearch index [default: the loaded one, else the binary's default].
    #[arg(long)]
    pub index: Option<String>,
    #[command(flatten)]
    pub meili: MeiliArgs,
}

/// `serve`.
#[cfg(feature = "serve")]
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

impl ReaderCommand {
    /// The Meilisearch flags of the command.
    pub fn meili_mut(&mut self) -> &mut MeiliArgs {
        match self {
            Self::Sync(args) | Self::Load(args) => &mut args.meili,
            Self::Search(args) => &mut args.meili,
            Self::Health(args) => &mut args.meili,
            Self::Eval(args) => &mut args.meili,
            Self::Find(args) => &mut args.meili,
            #[cfg(feature = "serve")]
            Self::Serve(args) => &mut args.service.meili,
            #[cfg(feature = "serve")]
            Self::Mcp(args) => &mut args.service.meili,
        }
    }
}

/// How to reach Meilisearch (the key comes from MEILI_MASTER_KEY or MEILI_API_KEY only).
#[derive(Debug, Clone, Args)]
pub struct MeiliArgs {
    /// Meilisearch URL.
    #[arg(
        long = "meili-url",
        env = "MEILI_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    pub url: Option<String>,
    /// Timeout of each HTTP call, in seconds.
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = seconds)]
    pub timeout: Duration,
    /// Timeout of each Meilisearch task (indexing, swap), in seconds.
    #[arg(long, value_name = "SECS", default_value = "600", value_parser = seconds)]
    pub task_timeout: Duration,
    /// Retries of a 429, 5xx or timeout, with exponential backoff.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub retries: u32,
    /// First backoff pause, in seconds (then doubled: 1, 2, 4 by default).
    #[arg(long, value_name = "SECS", default_value = "1", value_parser = seconds)]
    pub retry_pause: Duration,
    /// Loaded-state file recording what the live index holds [default:
    /// $XDG_STATE_HOME/agentfinder-skills/loaded-<digest of the Meilisearch
    /// URL>.json, else under ~/.local/state].
    #[arg(
        long = "state",
        env = "AGENTFINDER_STATE",
        value_name = "PATH",
        hide_env_values = true
    )]
    pub state_flag: Option<PathBuf>,
    /// The state file in use (`--state`, else the default for the URL).
    #[arg(skip)]
    pub state: PathBuf,
}

/// Where the loaded state of the Meilisearch at `url` is kept by default:
/// a state folder (`$XDG_STATE_HOME`, else `~/.local/state`, else
/// `./.agentfinder-state`), one file per server, never the working
/// directory.
pub fn default_state_path(url: Option<&str>) -> PathBuf {
    use sha2::Digest;
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/state"))
        })
        .unwrap_or_else(|| PathBuf::from(".agentfinder-state"));
    let server = url.map(crate::store::redact_url).unwrap_or_default();
    let digest = hex::encode(sha2::Sha256::digest(
        server.trim_end_matches('/').as_bytes(),
    ));
    base.join("agentfinder-skills")
        .join(format!("loaded-{}.json", &digest[..12]))
}

impl MeiliArgs {
    /// Fills in [`MeiliArgs::state`]; called once the flags are parsed.
    pub fn resolve_state(&mut self) {
        self.state = self
            .state_flag
            .clone()
            .unwrap_or_else(|| default_state_path(self.url.as_deref()));
    }

    /// The configuration, or `None` without a URL.
    pub fn config(&self) -> Option<MeiliConfig> {
        let url = self.url.as_ref().filter(|u| !u.trim().is_empty())?;
        let mut config = MeiliConfig::new(url);
        config.call_timeout = self.timeout.max(Duration::from_millis(1));
        config.task_timeout = self.task_timeout.max(Duration::from_millis(1));
        config.retry = RetryPolicy::exponential(self.retry_pause, self.retries);
        Some(config)
    }
}

/// `sync` and `load`.
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Artifact store (folder or object_store URL).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Artifact to load: `latest` or a commit id.
    #[arg(long, value_name = "SHA|latest", default_value = "latest")]
    pub commit: String,
    #[command(flatten)]
    pub meili: MeiliArgs,
}

/// `search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for, in your own words.
    pub query: String,
    /// Most results.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Only results of this source (a `[[sources]]` id).
    #[arg(long, value_name = "ID")]
    pub source: Option<String>,
    /// Artifact store the embedded engine searches when no Meilisearch is
    /// configured [default: [output].store].
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Meilisearch filter, e.g. `kind = skill` or `skill = pdf`.
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// Every matching section, not one best hit per skill.
    #[arg(long)]
    pub all_sections: bool,
    /// Print JSON (Agent Finder SearchResult objects).
    #[arg(long)]
    pub json: bool,
    /// Index to search [default: the loaded one, else hf_skills].
    #[arg(long)]
    pub index: Option<String>,
    /// Weight of vectors against keywords in hybrid search (0 to 1); `eval`
    /// compares ratios and names the best.
    #[arg(
        long,
        value_name = "R",
        env = "AGENTFINDER_SEMANTIC_RATIO",
        hide_env_values = true,
        default_value_t = DEFAULT_SEMANTIC_RATIO
    )]
    pub semantic_ratio: f32,
    /// Keyword search only, even when the index has an embedder.
    #[arg(long)]
    pub keyword_only: bool,
    /// Output shape: Agent Finder SearchResults, or TopGun's adapter object
    /// (`{registry, status, reason, results, latency_ms}`; Meilisearch down is
    /// status "unavailable" with the reason, exit 0).
    #[arg(long, value_enum, default_value_t = ResultFormat::Agentfinder)]
    pub format: ResultFormat,
    /// The registry name in TopGun's adapter object.
    #[arg(long, value_name = "NAME", default_value = "agentfinder-skills")]
    pub registry: String,
    /// With `--format topgun`: answer within this many seconds, retries
    /// included (TopGun gives a registry 8 s); past it, status "unavailable".
    #[arg(long, value_name = "SECS", default_value = "8", value_parser = seconds)]
    pub deadline: Duration,
    #[command(flatten)]
    pub meili: MeiliArgs,
}

/// How `search` prints its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ResultFormat {
    /// Agent Finder `SearchResult`s.
    Agentfinder,
    /// TopGun's adapter contract object.
    Topgun,
}

/// Semantic ratio of hybrid search unless told otherwise.
pub const DEFAULT_SEMANTIC_RATIO: f32 = 0.5;

/// The longest duration a flag takes: a week, far past any timeout or
/// deadline worth waiting for, and far from overflowing an `Instant`.
pub const MAX_FLAG_SECONDS: f64 = 7.0 * 24.0 * 3600.0;

/// Parses a flag's seconds (`2`, `0.25`): a finite number from 0 to
/// [`MAX_FLAG_SECONDS`], so `inf`, `NaN`, negatives and `1e300` are refused
/// with a message instead of panicking when made a [`Duration`].
pub fn seconds(text: &str) -> Result<Duration, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !value.is_finite() || !(0.0..=MAX_FLAG_SECONDS).contains(&value) {
        return Err(format!(
            "`{text}` seconds is out of range: give a number from 0 to {MAX_FLAG_SECONDS} (a week)"
        ));
    }
    Duration::try_from_secs_f64(value).map_err(|e| format!("`{text}` seconds: {e}"))
}

/// `eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// JSON file: `{"queries": [{"query", "expect": [skill, ...], "kind"}]}`.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "fixtures/eval/queries.json"
    )]
    pub queries: PathBuf,
    /// Artifact store the embedded engine searches when no Meilisearch is
    /// configured [default: [output].store].
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Index to search [default: the loaded one, else hf_skills].
    #[arg(long)]
    pub index: Option<String>,
    /// Semantic ratios of the hybrid runs, comma-separated (each from 0 to
    /// 1); several compare them and name the best, e.g. 0.25,0.5,0.75,1.
    #[arg(
        long,
        value_name = "R,...",
        value_delimiter = ',',
        default_value = "0.5"
    )]
    pub semantic_ratio: Vec<f32>,
    /// Only skills of these sources are right answers (comma-separated
    /// source ids): the query set's own collections, when the store also
    /// holds others as distractors, whose copies of a skill do not count.
    #[arg(long, value_name = "ID,...", value_delimiter = ',')]
    pub answer_sources: Vec<String>,
    /// Judgments of results beyond the labels (a judged pool: each result
    /// `<source id>:<path>` judged a right or wrong answer to a query); a
    /// result judged right counts as an answer, and each mode says how many
    /// of its first three are still unjudged (listed with --misses).
    #[arg(long, value_name = "FILE")]
    pub judgments: Option<PathBuf>,
    /// Also list each mode's misses: queries whose right answer is not in
    /// the first three, with the three that ranked first (always in --json).
    #[arg(long)]
    pub misses: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub meili: MeiliArgs,
}

/// `find`.
#[derive(Debug, Args)]
pub struct FindArgs {
    /// What the skill should do, in the agent's words.
    pub query: String,
    /// Write the output here.
    #[arg(long, value_name = "FILE", conflicts_with = "topgun_home")]
    pub out: Option<PathBuf>,
    /// Write the output to ~/.topgun/found-skills-<hash>.json, where TopGun looks.
    #[arg(long)]
    pub topgun_home: bool,
    /// Results per registry.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Seconds each registry is given, retries included; past it, "unavailable".
    #[arg(long, value_name = "SECS", default_value = "8", value_parser = seconds)]
    pub deadline: Duration,
    /// Keyword search only.
    #[arg(long)]
    pub keyword_only: bool,
    /// Weight of semantic results in hybrid search, from 0 to 1.
    #[arg(long, env = "AGENTFINDER_SEMANTIC_RATIO", default_value_t = DEFAULT_SEMANTIC_RATIO)]
    pub semantic_ratio: f32,
    /// Index to search [default: the loaded one, else hf_skills].
    #[arg(long)]
    pub index: Option<String>,
    /// The registry's name when the store holds a single source.
    #[arg(long, default_value = "agentfinder")]
    pub registry: String,
    /// Artifact store whose sources are the registries.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    #[command(flatten)]
    pub meili: MeiliArgs,
}

/// `health`.
#[derive(Debug, Args)]
pub struct HealthArgs {
    /// Artifact store to compare with.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Index to check [default: the loaded one, else hf_skills].
    #[arg(long)]
    pub index: Option<String>,
    #[command(flatten)]
    pub meili: MeiliArgs,
}

/// A command failed, with its exit code and a secret-free message.
#[derive(Debug)]
pub struct CommandFailure {
    /// Exit code.
    pub code: u8,
    /// What to print.
    pub message: String,
}

impl CommandFailure {
    fn new(code: u8, message: impl std::fmt::Display) -> Self {
        Self {
            code,
            message: message.to_string(),
        }
    }
}

/// What the serving commands use when a flag is absent: the store, and how
/// a remote store is reached (the builder's binary takes both from
/// `pipeline.toml`, as its build does).
#[derive(Debug, Clone, Default)]
pub struct ServingDefaults {
    /// The store when `--store` is absent.
    pub store: String,
    /// Endpoint, region, transport and retries of a remote store.
    pub store_options: StoreOptions,
    /// What `search` and `find` answer from when no Meilisearch is
    /// configured (the builder's binary: the embedded engine).
    pub local: Option<crate::local::LocalEngine>,
    /// The index `serve` searches when neither `--index` nor a loaded
    /// state names one (`None`: `hf_skills`).
    pub index: Option<String>,
}

impl ServingDefaults {
    /// Opens `--store`, else the default store, for reading.
    fn open(&self, flag: Option<&str>) -> Result<Store, StoreError> {
        Store::open_existing_with(flag.unwrap_or(&self.store), &self.store_options)
    }
}

/// Runs a serving command with `defaults` for absent flags. Returns the
/// exit code (0 on success; `health` has its own codes).
pub async fn run(
    mut command: ReaderCommand,
    defaults: &ServingDefaults,
) -> Result<u8, CommandFailure> {
    command.meili_mut().resolve_state();
    match command {
        ReaderCommand::Sync(args) => run_sync(args, defaults, false).await,
        ReaderCommand::Load(args) => run_sync(args, defaults, true).await,
        ReaderCommand::Search(args) => run_search(args, defaults).await,
        ReaderCommand::Health(args) => run_health(args, defaults).await,
        ReaderCommand::Eval(args) => run_eval(args, defaults).await,
        ReaderCommand::Find(args) => run_find(args, defaults).await,
        #[cfg(feature = "serve")]
        ReaderCommand::Serve(args) => run_serve(args, defaults).await,
        #[cfg(feature = "serve")]
        ReaderCommand::Mcp(args) => run_mcp(args, defaults).await,
    }
}

/// `find`: every source searched as a registry; the output written, then
/// the completion block. Meilisearch down is every registry `unavailable`,
/// still exit 0: the file is the answer.
async fn run_find(args: FindArgs, defaults: &ServingDefaults) -> Result<u8, CommandFailure> {
    use crate::find::{find, registries, topgun_path, FindOptions};
    check_ratio(args.semantic_ratio)?;
    let store = defaults.open(args.store.as_deref());
    if let Err(e) = &store {
        eprintln!("find: store: {e}; searching the whole index as one registry");
    }
    let registries = registries(store.as_ref().ok(), &args.registry).await;
    let options = FindOptions {
        index: index_name(args.index.clone(), &args.meili.state),
        limit: args.limit,
        hybrid: (!args.keyword_only).then(|| ("default".to_string(), args.semantic_ratio)),
        deadline: args.deadline.max(Duration::from_millis(1)),
        store: args.store.clone(),
    };
    let config = args.meili.config();
    let local = match &config {
        Some(_) => None,
        None => defaults.local.as_ref().map(|l| l.0.as_ref()),
    };
    let output = find(
        config.as_ref(),
        local,
        registries,
        &args.query,
        &options,
        &mut |line| eprintln!("find: {line}"),
    )
    .await;
    let path = match (&args.out, args.topgun_home) {
        (Some(path), _) => path.clone(),
        (None, true) => {
            let home = std::env::var_os("HOME").ok_or_else(|| {
                CommandFailure::new(exit::FAILURE, "--topgun-home: HOME is not set")
            })?;
            topgun_path(std::path::Path::new(&home), &output.query_hash)
        }
        (None, false) => {
            return Err(CommandFailure::new(
                exit::USAGE,
                "find: say where the output goes: --out FILE or --topgun-home",
            ))
        }
    };
    let mut bytes = serde_json::to_vec_pretty(&output).unwrap_or_default();
    bytes.push(b'\n');
    let written = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, bytes));
    written.map_err(|e| {
        CommandFailure::new(
            exit::FAILURE,
            format!("cannot write {}: {e}", path.display()),
        )
    })?;
    out!("{}", output.completion_block(&path.display().to_string()));
    Ok(0)
}

async fn run_sync(
    args: SyncArgs,
    defaults: &ServingDefaults,
    force: bool,
) -> Result<u8, CommandFailure> {
    let config = args.meili.config().ok_or_else(no_meilisearch)?;
    let store = defaults
        .open(args.store.as_deref())
        .map_err(|e| CommandFailure::new(exit::STORAGE, e))?;
    let options = SyncOptions {
        location: ArtifactLocation::parse(&args.commit),
        ..SyncOptions::latest(&args.meili.state)
    };
    let report = sync_or_load(&store, &config, &options, force).await?;
    for (source, why) in &report.left_out {
        eprintln!("warning: source {source} left out of the index: {why}");
    }
    outln!("{}", describe_sync(&report, &config));
    Ok(0)
}

/// Runs a sync (or a forced load) and maps failures to exit codes.
pub async fn sync_or_load(
    store: &Store,
    config: &MeiliConfig,
    options: &SyncOptions,
    force: bool,
) -> Result<meili::LoadReport, CommandFailure> {
    let result = if force {
        meili::load(store, config, options).await
    } else {
        meili::sync(store, config, options).await
    };
    result.map_err(|e| {
        let code = match &e {
            SyncError::Artifact(_) | SyncError::SourceUnreadable { .. } => exit::STORAGE,
            SyncError::Meili(_) | SyncError::State { .. } => exit::MEILI,
        };
        CommandFailure::new(
            code,
            format!(
                "{}; the live index was left as it was",
                config.scrub(&e.to_string())
            ),
        )
    })
}

/// The one line a sync prints.
pub fn describe_sync(report: &meili::LoadReport, config: &MeiliConfig) -> String {
    let outcome = match &report.outcome {
        LoadOutcome::Unchanged => "outcome=unchanged".to_string(),
        LoadOutcome::Loaded(reason) => format!("outcome=loaded reason=\"{reason}\""),
    };
    let sources = match report.sources.as_slice() {
        [only] if only.source == "." => String::new(),
        all => format!(" sources={}", all.len()),
    };
    let left_out = match report.left_out.len() {
        0 => String::new(),
        n => format!(" left_out={n}"),
    };
    format!(
        "sync: meilisearch={} index={} commit={}{sources}{left_out} documents={} {outcome} seconds={:.2}",
        config.display_url(),
        report.index,
        report.commit,
        report.documents,
        report.seconds
    )
}

/// What `serve` and `mcp` search, and how, from their flags.
#[cfg(feature = "serve")]
fn search_settings(
    args: &ServiceArgs,
    defaults: &ServingDefaults,
) -> Result<crate::answer::SearchSettings, CommandFailure> {
    check_ratio(args.semantic_ratio)?;
    Ok(crate::answer::SearchSettings {
        store: args.store.clone().unwrap_or_else(|| defaults.store.clone()),
        store_options: defaults.store_options.clone(),
        meili: args.meili.config(),
        index: index_or(
            args.index.clone(),
            &args.meili.state,
            defaults.index.as_deref().unwrap_or(DEFAULT_INDEX),
        ),
        state: args.meili.state.clone(),
        request_timeout: args.request_timeout.max(Duration::from_millis(100)),
        semantic_ratio: args.semantic_ratio,
    })
}

/// `serve`, until SIGTERM or Ctrl-C.
#[cfg(feature = "serve")]
async fn run_serve(args: ServeArgs, defaults: &ServingDefaults) -> Result<u8, CommandFailure> {
    let settings = crate::serve::ServeSettings {
        addr: args.addr.clone(),
        search: search_settings(&args.service, defaults)?,
        refresh: args.refresh,
        concurrency: args.concurrency,
        mcp_hosts: args.mcp_host.clone(),
    };
    crate::serve::serve(settings, defaults.local.clone())
        .await
        .map_err(|e| CommandFailure::new(exit::FAILURE, format!("serve on {}: {e}", args.addr)))?;
    Ok(0)
}

/// `mcp`: the tools over stdio until the client closes it. The store is
/// looked at again every `--refresh` seconds (Meilisearch is searched when
/// it answers, never synced from here: `serve` or `sync` keep it).
#[cfg(feature = "serve")]
async fn run_mcp(args: McpArgs, defaults: &ServingDefaults) -> Result<u8, CommandFailure> {
    use std::sync::Arc;
    let settings = search_settings(&args.service, defaults)?;
    let searcher = Arc::new(crate::answer::Searcher::new(
        settings,
        defaults.local.clone(),
    ));
    let watcher = tokio::spawn(crate::answer::watch(searcher.clone(), args.refresh));
    let served = crate::mcp::serve_stdio(searcher).await;
    watcher.abort();
    served.map_err(|e| CommandFailure::new(exit::FAILURE, format!("mcp: {e}")))?;
    Ok(0)
}

/// The index when nothing names one.
const DEFAULT_INDEX: &str = "hf_skills";

/// `explicit`, else the index the loaded state records, else [`DEFAULT_INDEX`].
fn index_name(explicit: Option<String>, state: &std::path::Path) -> String {
    index_or(explicit, state, DEFAULT_INDEX)
}

/// `explicit`, else the index the loaded state records, else `otherwise`.
fn index_or(explicit: Option<String>, state: &std::path::Path, otherwise: &str) -> String {
    explicit
        .or_else(|| meili::LoadedState::read(state).map(|s| s.index))
        .unwrap_or_else(|| otherwise.to_string())
}

async fn run_search(args: SearchArgs, defaults: &ServingDefaults) -> Result<u8, CommandFailure> {
    check_ratio(args.semantic_ratio)?;
    if args.format == ResultFormat::Topgun {
        return run_search_topgun(args, defaults).await;
    }
    let response = match (args.meili.config(), &defaults.local) {
        (Some(config), _) => {
            let options = SearchOptions {
                index: index_name(args.index.clone(), &args.meili.state),
                limit: args.limit,
                filter: search_filter(&args),
                all_sections: args.all_sections,
                hybrid: (!args.keyword_only).then(|| ("default".to_string(), args.semantic_ratio)),
            };
            meili::search_detailed(&config, &args.query, &options)
                .await
                .map_err(|e| CommandFailure::new(exit::MEILI, config.scrub(&e.to_string())))?
        }
        (None, Some(local)) => {
            if args.filter.is_some() {
                eprintln!(
                    "search: --filter is Meilisearch's; the embedded engine takes --source only"
                );
            }
            local
                .0
                .search(&local_query(&args))
                .await
                .map_err(|e| CommandFailure::new(exit::STORAGE, e))?
        }
        (None, None) => return Err(no_meilisearch()),
    };
    if let Some(reason) = &response.fallback {
        eprintln!("search: {reason}");
    }
    if let Some(strength) = response.strength.filter(|s| !s.good) {
        eprintln!(
            "search: no good match: the best similarity is {:.3}, under {} (the store may hold no skill for this)",
            strength.best_similarity, strength.threshold
        );
    }
    let results = response.results;
    if args.json || !std::io::stdout().is_terminal() {
        outln!(
            "{}",
            serde_json::to_string_pretty(&results).unwrap_or_default()
        );
    } else {
        outln!(
            "{:>6}  {:<28}  {:<40}  url",
            "score",
            "skill",
            "description"
        );
        for r in &results {
            let description: String = r.description.chars().take(40).collect();
            outln!(
                "{:>6.3}  {:<28}  {:<40}  {}",
                r.score,
                r.display_name,
                description.replace('\n', " "),
                r.url
            );
        }
    }
    Ok(0)
}

/// `search --format topgun`: the adapter object, whatever happens to
/// Meilisearch (down or unset is `unavailable` with the reason, never a crash).
async fn run_search_topgun(
    args: SearchArgs,
    defaults: &ServingDefaults,
) -> Result<u8, CommandFailure> {
    use crate::topgun::{adapter_response, RegistryStatus};
    let started = std::time::Instant::now();
    let deadline = args.deadline.max(Duration::from_millis(1));
    let outcome = match args.meili.config() {
        None => match &defaults.local {
            Some(local) => {
                local.0.prepare(args.store.as_deref()).await;
                let query = local_query(&args);
                crate::find::local_outcome(local.0.as_ref(), &query, deadline).await
            }
            None => Err((
                RegistryStatus::Unavailable,
                "MEILI_URL is not set".to_string(),
            )),
        },
        Some(config) => {
            let options = SearchOptions {
                index: index_name(args.index.clone(), &args.meili.state),
                limit: args.limit,
                filter: search_filter(&args),
                all_sections: args.all_sections,
                hybrid: (!args.keyword_only).then(|| ("default".to_string(), args.semantic_ratio)),
            };
            crate::find::meili_outcome(&config, &args.query, &options, deadline).await
        }
    };
    let latency_ms = started.elapsed().as_millis() as u64;
    let (response, _) = adapter_response(&args.registry, outcome, latency_ms, &mut |line| {
        eprintln!("search: {line}")
    });
    outln!(
        "{}",
        serde_json::to_string_pretty(&response).unwrap_or_default()
    );
    Ok(0)
}

/// What the embedded engine is asked for `args`.
fn local_query(args: &SearchArgs) -> crate::local::LocalQuery {
    crate::local::LocalQuery {
        text: args.query.clone(),
        limit: args.limit,
        source: args.source.clone(),
        semantic_ratio: (!args.keyword_only).then_some(args.semantic_ratio),
        sections: 0,
        store: args.store.clone(),
        start_by: None,
    }
}

/// `--filter`, and with `--source`, `source = "<id>"` too.
fn search_filter(args: &SearchArgs) -> Option<String> {
    source_filter(args.filter.as_deref(), args.source.as_deref())
}

/// `filter` narrowed to one source.
pub fn source_filter(filter: Option<&str>, source: Option<&str>) -> Option<String> {
    let source = source.map(|id| format!("source = {}", serde_json::Value::from(id)));
    match (filter, source) {
        (Some(filter), Some(source)) => Some(format!("({filter}) AND {source}")),
        (Some(filter), None) => Some(filter.to_string()),
        (None, source) => source,
    }
}

/// A semantic ratio is from 0 to 1 (Meilisearch refuses others).
fn check_ratio(ratio: f32) -> Result<(), CommandFailure> {
    if (0.0..=1.0).contains(&ratio) {
        Ok(())
    } else {
        Err(CommandFailure::new(
            exit::USAGE,
            format!("--semantic-ratio {ratio}: a ratio is from 0 to 1"),
        ))
    }
}

async fn run_eval(args: EvalArgs, defaults: &ServingDefaults) -> Result<u8, CommandFailure> {
    for &ratio in &args.semantic_ratio {
        check_ratio(ratio)?;
    }
    let text = std::fs::read_to_string(&args.queries).map_err(|e| {
        CommandFailure::new(exit::FAILURE, format!("{}: {e}", args.queries.display()))
    })?;
    #[derive(serde::Deserialize)]
    struct File {
        queries: Vec<meili::EvalQuery>,
    }
    let mut file: File = serde_json::from_str(&text).map_err(|e| {
        CommandFailure::new(exit::FAILURE, format!("{}: {e}", args.queries.display()))
    })?;
    if !args.answer_sources.is_empty() {
        for query in &mut file.queries {
            query.sources = args.answer_sources.clone();
        }
    }
    if let Some(path) = &args.judgments {
        let fail =
            |e: String| CommandFailure::new(exit::FAILURE, format!("{}: {e}", path.display()));
        let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
        let judgments: meili::JudgmentFile =
            serde_json::from_str(&text).map_err(|e| fail(e.to_string()))?;
        judgments
            .apply(&mut file.queries)
            .map_err(|e| fail(e.to_string()))?;
    }
    let index = index_name(args.index.clone(), &args.meili.state);
    let report = match (args.meili.config(), &defaults.local) {
        (Some(config), _) => meili::evaluate(
            &config,
            &index,
            "default",
            &args.semantic_ratio,
            &file.queries,
        )
        .await
        .map_err(|e| CommandFailure::new(exit::MEILI, config.scrub(&e.to_string())))?,
        (None, Some(local)) => {
            let store = &args.store;
            let search = |text: String, ratio: Option<f32>| async move {
                let query = crate::local::LocalQuery {
                    text,
                    limit: 10,
                    source: None,
                    semantic_ratio: ratio,
                    sections: 0,
                    store: store.clone(),
                    start_by: None,
                };
                local.0.search(&query).await
            };
            meili::evaluate_with(local.0.name(), search, &args.semantic_ratio, &file.queries)
                .await
                .map_err(|e| CommandFailure::new(exit::STORAGE, e))?
        }
        (None, None) => return Err(no_meilisearch()),
    };
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        outln!(
            "{:<12} {:>7} {:>7} {:>7} {:>7} {:>16} {:>18}",
            "mode",
            "queries",
            "top-1",
            "top-3",
            "MRR",
            "no-answer score",
            "flagged: none/ans"
        );
        let share = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.3}"));
        let rows = std::iter::once((
            "keyword".to_string(),
            report.keyword,
            &report.keyword_by_kind,
            &report.keyword_misses,
            &report.keyword_unjudged,
        ))
        .chain(report.hybrid.iter().map(|h| {
            (
                format!("hybrid {:.2}", h.semantic_ratio),
                h.scores,
                &h.by_kind,
                &h.misses,
                &h.unjudged,
            )
        }));
        for (mode, s, by_kind, misses, unjudged) in rows {
            outln!(
                "{mode:<12} {:>7} {:>7.3} {:>7.3} {:>7.3} {:>16.3} {:>18}",
                s.queries,
                s.top1,
                s.top3,
                s.mrr,
                s.no_answer_top_score,
                format!(
                    "{} / {}",
                    share(s.no_answer_flagged),
                    share(s.answerable_flagged)
                )
            );
            for (kind, k) in by_kind {
                if k.queries > 0 {
                    outln!(
                        "  {:<10} {:>7} {:>7.3} {:>7.3} {:>7.3}",
                        kind,
                        k.queries,
                        k.top1,
                        k.top3,
                        k.mrr
                    );
                }
            }
            if args.misses {
                for miss in misses {
                    outln!(
                        "  miss [{}] {:?}: {}; first: {}",
                        miss.kind,
                        miss.query,
                        miss.rank
                            .map_or("not in the first 10".to_string(), |r| format!("rank {r}")),
                        miss.ahead.join(", ")
                    );
                }
            }
            if args.judgments.is_some() {
                outln!(
                    "  unjudged in the first three of answerable queries: {}",
                    unjudged.len()
                );
                if args.misses {
                    for u in unjudged {
                        outln!(
                            "  unjudged {:?} #{} {} ({}): {}",
                            u.query,
                            u.rank,
                            u.key,
                            u.name,
                            u.about
                        );
                    }
                }
            }
        }
        if let (Some(best), true) = (report.best(), report.hybrid.len() > 1) {
            outln!(
                "best semantic ratio: {} (MRR {:.3}); search with --semantic-ratio or AGENTFINDER_SEMANTIC_RATIO set to it",
                best.semantic_ratio, best.scores.mrr
            );
        }
        outln!("engine {} index {index}", report.engine);
        outln!(
            "flagged: the share of the queries with no answer / of the answerable ones that were called \"no good match\" (best vector similarity under {}; vectors only)",
            crate::rank::NO_GOOD_MATCH_BELOW
        );
    }
    Ok(0)
}

async fn run_health(args: HealthArgs, defaults: &ServingDefaults) -> Result<u8, CommandFailure> {
    let config = args.meili.config();
    let store = defaults.open(args.store.as_deref());
    let index = index_name(args.index, &args.meili.state);
    let report = meili::health(config.as_ref(), store.as_ref(), &index, &args.meili.state).await;
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        outln!(
            "health: configured={} reachable={} loaded={} store_readable={} stale={} index={index} loaded_commit={} artifact_commit={} documents={}",
            report.configured,
            report.reachable,
            report.loaded,
            report.store_readable,
            report.stale,
            opt(&report.loaded_commit),
            opt(&report.artifact_commit),
            report.document_count.map_or("-".into(), |c| c.to_string())
        );
        for problem in &report.problems {
            eprintln!("health: {problem}");
        }
    }
    Ok(report.exit_code())
}

/// The failure of a command that needs Meilisearch when none is configured.
fn no_meilisearch() -> CommandFailure {
    CommandFailure::new(exit::MEILI, "MEILI_URL is not set (or pass --meili-url)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_refuse_what_a_duration_cannot_hold() {
        for bad in ["inf", "-inf", "NaN", "-1", "1e300", "604801", "ten", ""] {
            let refused = seconds(bad).expect_err(bad);
            assert!(refused.contains(&format!("`{bad}`")), "{refused}");
        }
        assert_eq!(seconds("0.25"), Ok(Duration::from_millis(250)));
        assert_eq!(seconds("0"), Ok(Duration::ZERO));
        assert_eq!(seconds("604800"), Ok(Duration::from_secs(604_800)));
    }
}
