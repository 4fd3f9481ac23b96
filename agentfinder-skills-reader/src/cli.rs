//! The commands that keep Meilisearch in step with a store (`sync`,
//! `load`, `health`): this crate's thin binary runs them, and the main
//! binary hands them here, so both take the same flags and print the same
//! things. Their flags (`MeiliArgs`, `seconds`) are shared with the
//! serving commands.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use crate::contract::ArtifactLocation;
use crate::meili::{self, LoadOutcome, MeiliConfig, RetryPolicy, SyncError, SyncOptions};
use crate::store::{Store, StoreError, StoreOptions};

/// `println!` to stdout, quietly stopping when the reader went away (a
/// pipe into `head` or `grep -q` is not an error).
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
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

/// The commands that keep Meilisearch in step with the store.
#[derive(Debug, Subcommand)]
pub enum SyncCommand {
    /// Bring the live Meilisearch index up to date with the store's artifact (a no-op if it is).
    Sync(SyncArgs),
    /// Load the artifact into Meilisearch unconditionally (staging index, atomic swap).
    Load(SyncArgs),
    /// Report configured / reachable / loaded / stale; exit 0 only when loaded and fresh.
    Health(HealthArgs),
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

/// How long a load may wait for Meilisearch's tasks (for the commands
/// that load: `sync`, `load`, `build`).
#[derive(Debug, Clone, Args)]
pub struct TaskArgs {
    /// Timeout of each Meilisearch task (indexing, swap), in seconds.
    #[arg(long, value_name = "SECS", default_value = "600", value_parser = seconds)]
    pub task_timeout: Duration,
}

impl TaskArgs {
    /// `config` with this task timeout.
    pub fn apply(&self, mut config: MeiliConfig) -> MeiliConfig {
        config.task_timeout = self.task_timeout.max(Duration::from_millis(1));
        config
    }
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
    #[command(flatten)]
    pub tasks: TaskArgs,
}

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
    /// A failure with exit code `code`.
    pub fn new(code: u8, message: impl std::fmt::Display) -> Self {
        Self {
            code,
            message: message.to_string(),
        }
    }
}

/// What a command uses when a flag is absent: the store, how a remote
/// store is reached (the main binary takes both from `pipeline.toml`, as
/// its build does), and the index when nothing names one.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    /// The store when `--store` is absent.
    pub store: String,
    /// Endpoint, region, transport and retries of a remote store.
    pub store_options: StoreOptions,
    /// The index searched when neither `--index` nor a loaded state names
    /// one (`None`: [`DEFAULT_INDEX`]).
    pub index: Option<String>,
}

impl Defaults {
    /// Opens `--store`, else the default store, for reading.
    pub fn open(&self, flag: Option<&str>) -> Result<Store, StoreError> {
        Store::open_existing_with(flag.unwrap_or(&self.store), &self.store_options)
    }
}

/// Runs a command with `defaults` for absent flags. Returns the exit code
/// (0 on success; `health` has its own codes).
pub async fn run(command: SyncCommand, defaults: &Defaults) -> Result<u8, CommandFailure> {
    match command {
        SyncCommand::Sync(mut args) => {
            args.meili.resolve_state();
            run_sync(args, defaults, false).await
        }
        SyncCommand::Load(mut args) => {
            args.meili.resolve_state();
            run_sync(args, defaults, true).await
        }
        SyncCommand::Health(mut args) => {
            args.meili.resolve_state();
            run_health(args, defaults).await
        }
    }
}

async fn run_sync(args: SyncArgs, defaults: &Defaults, force: bool) -> Result<u8, CommandFailure> {
    let config = args
        .tasks
        .apply(args.meili.config().ok_or_else(no_meilisearch)?);
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

/// The index when nothing names one.
pub const DEFAULT_INDEX: &str = "hf_skills";

/// `explicit`, else the index the loaded state records, else [`DEFAULT_INDEX`].
pub fn index_name(explicit: Option<String>, state: &std::path::Path) -> String {
    index_or(explicit, state, DEFAULT_INDEX)
}

/// `explicit`, else the index the loaded state records, else `otherwise`.
pub fn index_or(explicit: Option<String>, state: &std::path::Path, otherwise: &str) -> String {
    explicit
        .or_else(|| meili::LoadedState::read(state).map(|s| s.index))
        .unwrap_or_else(|| otherwise.to_string())
}

async fn run_health(args: HealthArgs, defaults: &Defaults) -> Result<u8, CommandFailure> {
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
pub fn no_meilisearch() -> CommandFailure {
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
