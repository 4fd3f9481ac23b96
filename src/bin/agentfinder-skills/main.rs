//! `agentfinder-skills`: each command is handed to one function that reads
//! as the story of that command; failures map to documented exit codes.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

mod args;
mod serving;

use args::{
    BackfillArgs, BuildArgs, Cli, Command, Common, LintArgs, MaterializeArgs, PromoteArgs,
    VerifyArgs,
};

use agentfinder_skills::backfill::{backfill, BackfillRequest, Selection};
use agentfinder_skills::build::sources::{build_sources, SourcesRequest};
use agentfinder_skills::build::{build, BuildError, BuildRequest};
use agentfinder_skills::config::Config;
use agentfinder_skills::logging::{self, Reporter};
use agentfinder_skills::promote::verify::verify;
use agentfinder_skills::promote::{promote, PromotePolicy, Promotion};
use agentfinder_skills::shard::Shard;
use agentfinder_skills::source::SourceSpec;
use agentfinder_skills::validate::StrictPolicy;
use agentfinder_skills_reader::cli::{describe_sync, sync_or_load, MeiliArgs};
use agentfinder_skills_reader::contract::ArtifactLocation;
use agentfinder_skills_reader::meili::{ping, RetryPolicy, SyncOptions};
use agentfinder_skills_reader::store::Store;

/// mimalloc reuses the embedding model's large tensor buffers; with glibc's
/// allocator each was mapped afresh (9 million page faults, 14 s of system
/// time to embed 238 documents).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Exit codes, one per failure class (see README, "Exit codes").
mod exit {
    pub const FAILURE: u8 = 1;
    pub const SOURCE: u8 = 3;
    pub const VALIDATION: u8 = 4;
    pub const STORAGE: u8 = 5;
    pub const PROMOTION_REFUSED: u8 = 6;
    pub const VERIFY_FAILED: u8 = 7;
    pub const LOAD: u8 = 8;
    pub const NO_SOURCE_BUILT: u8 = 9;
}

fn main() -> ExitCode {
    // Before any thread starts: it sets candle's thread count.
    agentfinder_skills::embed::one_thread_per_pass();
    let cli = Cli::parse();
    logging::set_global_format(cli.log_format);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            logging::global().error(
                format!("cannot start the async runtime: {e}"),
                exit::FAILURE,
            );
            return ExitCode::from(exit::FAILURE);
        }
    };
    let config = cli.config.as_deref();
    let result = runtime.block_on(async {
        match cli.command {
            Command::Build(args) => run_build(args, config).await,
            Command::Backfill(args) => run_backfill(args, config).await,
            Command::Verify(args) => run_verify(args, config).await,
            Command::Promote(args) => run_promote(args, config).await,
            Command::Materialize(args) => run_materialize(args, config).await,
            Command::Lint(args) => run_lint(&args, config),
            Command::Serving(command) => run_serving(command, config).await,
        }
    });
    // A source that ran past its timeout may still hold a thread in a
    // clone that never returns; the run is over, so do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            let message = format!("{:#}", failure.error);
            if !message.is_empty() {
                logging::global().error(message, failure.code);
            }
            ExitCode::from(failure.code)
        }
    }
}

/// An error and the exit code of its class.
struct Failure {
    error: anyhow::Error,
    code: u8,
}

impl Failure {
    fn new(code: u8, error: impl Into<anyhow::Error>) -> Self {
        Self {
            error: error.into(),
            code,
        }
    }
}

impl Failure {
    /// A failure whose command already said why (health's exit codes).
    fn silent(code: u8) -> Self {
        Self {
            error: anyhow::anyhow!(""),
            code,
        }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Self {
        Self::new(exit::FAILURE, error)
    }
}

/// `--config`, else `./pipeline.toml` if present, else the defaults; a
/// file that cannot be used is an error (exit 1) naming the key and line.
fn load_config(path: Option<&std::path::Path>) -> Result<Config, Failure> {
    let config = match path {
        Some(path) => Config::load(path),
        None if std::path::Path::new("pipeline.toml").exists() => {
            Config::load("pipeline.toml".as_ref())
        }
        None => Ok(Config::default()),
    };
    Ok(config.context("configuration")?)
}

/// Whether a command writes to the store or only reads it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Write,
    Read,
}

/// Loads the configuration and opens the store named by flags or config
/// (for reading, a local folder that does not exist is "empty", not created).
fn setup(
    common: &Common,
    config: Option<&std::path::Path>,
    access: Access,
) -> Result<(Config, Store, Reporter), Failure> {
    let config = load_config(config)?;
    let store_spec = common
        .store
        .clone()
        .unwrap_or_else(|| config.output.store.clone());
    let store = match access {
        Access::Write => Store::open_with(&store_spec, &config.store),
        Access::Read => Store::open_existing_with(&store_spec, &config.store),
    }
    .map_err(|e| Failure::new(exit::STORAGE, e))?;
    let reporter = Reporter {
        quiet: common.quiet,
        verbose: common.verbose,
        format: logging::global().format,
        source: None,
    };
    Ok((config, store, reporter))
}

async fn run_build(
    mut args: BuildArgs,
    config_path: Option<&std::path::Path>,
) -> Result<(), Failure> {
    let (mut config, store, reporter) = setup(&args.common, config_path, Access::Write)?;
    config.embed.enabled &= !args.no_embed;
    config.embed.required |= args.require_embed;
    if let Some(shard) = args.embed_shard {
        // A shard without its model would have done nothing.
        config.embed.required = true;
        config.embed.shard = Some(shard);
        args.no_promote = true;
    }
    if args.source.is_none() && !config.sources.is_empty() {
        return run_build_sources(args, config, store, reporter).await;
    }
    if !args.only.is_empty() {
        return Err(Failure::new(
            exit::FAILURE,
            anyhow::anyhow!("--only picks [[sources]] entries, and the configuration has none"),
        ));
    }
    name_repository(&mut config, args.source.as_deref(), args.repo.as_deref());
    let source = source_of(args.source.as_deref(), &config)?;
    let strict = strict_policy(args.strict.as_deref())
        .map_err(|e| Failure::new(exit::FAILURE, anyhow::anyhow!(e)))?;
    let request = BuildRequest {
        config,
        source,
        reference: args.reference.clone(),
        promote: !args.no_promote,
        force: args.force,
        strict,
    };
    let summary = build(request, &store, &reporter)
        .await
        .map_err(|e| Failure::new(build_code(&e), e))?;
    if let Some(Promotion::Promoted { previous }) = &summary.promotion {
        reporter.info(
            "promote",
            format!(
                "promoted latest/ to {} (was {})",
                summary.commit,
                previous.as_deref().unwrap_or("empty")
            ),
        );
    }
    let location = if args.no_promote {
        ArtifactLocation::Commit(summary.commit.clone())
    } else {
        ArtifactLocation::Latest
    };
    let load = direct_load(&args, &store, location).await;
    let mut summary = summary;
    summary.load = Some(match &load {
        Ok(outcome) => outcome.clone(),
        Err(_) => "failed".to_string(),
    });
    reporter.summary(&summary.line(), summary.fields());
    load.map(|_| ())
}

/// `build` over every enabled `[[sources]]` entry (or `--only` those):
/// each into `sources/<id>/`, then the run report, then one load of them all.
async fn run_build_sources(
    args: BuildArgs,
    config: Config,
    store: Store,
    reporter: Reporter,
) -> Result<(), Failure> {
    let strict = strict_policy(args.strict.as_deref())
        .map_err(|e| Failure::new(exit::FAILURE, anyhow::anyhow!(e)))?;
    let request = SourcesRequest {
        config,
        only: args.only.clone(),
        promote: !args.no_promote,
        force: args.force,
        strict,
        home: std::env::var("HOME").ok(),
    };
    let (report, path) = build_sources(request, &store, &reporter)
        .await
        .map_err(|e| Failure::new(exit::FAILURE, e))?;
    if report.unavailable_warning {
        reporter.warn(
            "sources",
            format!(
                "{} sources are unavailable: {}",
                report.unavailable_count,
                report.unavailable_list()
            ),
        );
    }
    let load = if report.ok_count > 0 && !args.no_promote {
        direct_load(&args, &store, ArtifactLocation::Latest).await
    } else {
        Ok("skipped".to_string())
    };
    let text = format!(
        "summary: sources={} ok={} failed={} unavailable={} documents={} load={} report={} store={} seconds={:.2}",
        report.sources.len(),
        report.ok_count,
        report.failed_count,
        report.unavailable_count,
        report.sources.iter().map(|s| s.result_count).sum::<u64>(),
        load.as_deref().unwrap_or("failed"),
        path,
        store.display,
        report.elapsed_ms as f64 / 1000.0,
    );
    let mut fields = serde_json::to_value(&report).unwrap_or_default();
    if let Some(object) = fields.as_object_mut() {
        object.insert("event".into(), "build-sources".into());
        object.insert("report".into(), path.clone().into());
        object.insert("store".into(), store.display.clone().into());
        object.insert("load".into(), load.as_deref().unwrap_or("failed").into());
    }
    reporter.summary(&text, fields);
    load?;
    if report.ok_count == 0 {
        return Err(Failure::new(
            exit::NO_SOURCE_BUILT,
            anyhow::anyhow!("no source was built: {}", report.reasons(|_| true)),
        ));
    }
    Ok(())
}

/// The optional load stage: sync Meilisearch when MEILI_URL is set and
/// reachable; otherwise say why it was skipped (a failure with --require-load).
async fn direct_load(
    args: &BuildArgs,
    store: &Store,
    location: ArtifactLocation,
) -> Result<String, Failure> {
    let skipped = |why: String| {
        if args.require_load {
            Err(Failure::new(
                exit::LOAD,
                anyhow::anyhow!("load required but skipped: {why}"),
            ))
        } else {
            logging::global().info("load", format!("load: skipped ({why})"));
            Ok("skipped".to_string())
        }
    };
    if args.embed_shard.is_some() {
        return skipped("an embed shard writes no artifact".into());
    }
    let Some(config) = args.meili.config().map(|c| args.tasks.apply(c)) else {
        return skipped("MEILI_URL is not set".into());
    };
    let mut probe = config.clone();
    probe.retry = RetryPolicy::exponential(std::time::Duration::from_millis(500), 1);
    probe.call_timeout = probe.call_timeout.min(std::time::Duration::from_secs(5));
    if let Err(e) = ping(&probe).await {
        return skipped(format!(
            "Meilisearch at {} is unreachable: {e}",
            config.display_url()
        ));
    }
    let options = SyncOptions {
        location,
        ..SyncOptions::latest(state_path(&args.meili))
    };
    let report = sync_or_load(store, &config, &options, false)
        .await
        .map_err(|f| Failure::new(exit::LOAD, anyhow::anyhow!(f.message)))?;
    logging::global().info("load", describe_sync(&report, &config));
    Ok(match report.outcome {
        agentfinder_skills_reader::meili::LoadOutcome::Unchanged => "unchanged".to_string(),
        agentfinder_skills_reader::meili::LoadOutcome::Loaded(_) => "loaded".to_string(),
    })
}

/// The loaded-state file of `meili` (`--state`, else its default).
fn state_path(meili: &MeiliArgs) -> PathBuf {
    let mut meili = meili.clone();
    meili.resolve_state();
    meili.state
}

/// A serving command (`search`, `serve`, `mcp`, ...), with the embedded
/// engine and the store and index the configuration names.
async fn run_serving(
    command: agentfinder_skills_serve::ServingCommand,
    config_path: Option<&std::path::Path>,
) -> Result<(), Failure> {
    let config = load_config(config_path)?;
    let defaults = serving::defaults(&config);
    match agentfinder_skills_serve::run(command, &defaults).await {
        Ok(0) => Ok(()),
        Ok(code) => Err(Failure::silent(code)),
        Err(failure) => Err(Failure::new(failure.code, anyhow::anyhow!(failure.message))),
    }
}

async fn run_backfill(
    args: BackfillArgs,
    config_path: Option<&std::path::Path>,
) -> Result<(), Failure> {
    let (mut config, store, reporter) = setup(&args.common, config_path, Access::Write)?;
    config.embed.enabled &= !args.no_embed;
    config.embed.required |= args.require_embed;
    name_repository(&mut config, args.source.as_deref(), args.repo.as_deref());
    let source = source_of(args.source.as_deref(), &config)?;
    let usage = |e: String| Failure::new(exit::FAILURE, anyhow::anyhow!(e));
    let strict = strict_policy(args.strict.as_deref()).map_err(usage)?;
    let shard = args
        .shard
        .as_deref()
        .map(Shard::parse)
        .transpose()
        .map_err(usage)?;
    let since = args
        .since
        .as_deref()
        .map(parse_date)
        .transpose()
        .map_err(usage)?;
    let request = BackfillRequest {
        config,
        source,
        selection: Selection {
            to: args.to.clone(),
            from: args.from.clone(),
            last: args.last,
            since,
            commits: args.commits.clone(),
        },
        shard,
        promote_newest: args.promote_newest,
        force: args.force,
        strict,
    };
    let summary = backfill(request, &store, &reporter)
        .await
        .map_err(|e| Failure::new(build_code(&e), e))?;
    reporter.summary(
        &summary.line(&store.display, shard),
        summary.fields(&store.display, shard),
    );
    if summary.failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::new(
            exit::VALIDATION,
            anyhow::anyhow!(
                "{} commit(s) failed validation; the others were built",
                summary.failed.len()
            ),
        ))
    }
}

/// The repository name a build starts from: `--repo`; else `[source].repo`
/// and `[source].url`, which describe `[source].location` and so do not
/// apply when `--source` names another one (its name is then derived).
fn name_repository(config: &mut Config, source_flag: Option<&str>, repo_flag: Option<&str>) {
    if let Some(repo) = repo_flag {
        config.source.repo = Some(repo.to_string());
        return;
    }
    let elsewhere = match (source_flag, config.source.location.as_deref()) {
        (Some(flag), Some(configured)) => flag != configured,
        _ => false,
    };
    if elsewhere {
        config.source.repo = None;
        config.source.url = None;
    }
}

/// `--source`, else `[source].location`.
fn source_of(flag: Option<&str>, config: &Config) -> Result<SourceSpec, Failure> {
    let source = flag
        .map(str::to_string)
        .or_else(|| config.source.location.clone())
        .context("no source: pass --source URL|PATH or set [source].location in pipeline.toml")?;
    Ok(SourceSpec::parse(&source))
}

/// `YYYY-MM-DD` (midnight UTC) or RFC 3339, as Unix seconds.
fn parse_date(text: &str) -> Result<i64, String> {
    let full = if text.len() == 10 {
        format!("{text}T00:00:00Z")
    } else {
        text.to_string()
    };
    humantime::parse_rfc3339_weak(&full)
        .map_err(|e| format!("--since `{text}`: {e} (use YYYY-MM-DD or RFC 3339)"))?
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .map_err(|_| format!("--since `{text}` is before 1970"))
}

fn strict_policy(strict: Option<&str>) -> Result<StrictPolicy, String> {
    match strict {
        None => Ok(StrictPolicy::off()),
        Some(names) => StrictPolicy::named(&[names.to_string()]),
    }
}

fn build_code(error: &BuildError) -> u8 {
    match error {
        BuildError::Source(_) | BuildError::TimedOut(_) => exit::SOURCE,
        BuildError::Embed(_) => exit::FAILURE,
        BuildError::Glob(_) | BuildError::Validation(_) => exit::VALIDATION,
        BuildError::Write(_)
        | BuildError::Read(_)
        | BuildError::Internal(_)
        | BuildError::Lock(_) => exit::STORAGE,
        BuildError::Promote(p) => promote_code(p),
    }
}

/// `lint`: the findings of each SKILL.md below a path, then the counts;
/// exit 1 when any breaks the Agent Skills specification.
fn run_lint(args: &LintArgs, config_path: Option<&std::path::Path>) -> Result<(), Failure> {
    let config = load_config(config_path)?;
    let report = agentfinder_skills::lint::lint(&args.path, &config)
        .map_err(|e| Failure::new(exit::FAILURE, e))?;
    if args.json {
        let text =
            serde_json::to_string_pretty(&report).map_err(|e| Failure::new(exit::FAILURE, e))?;
        println!("{text}");
    } else {
        for f in &report.findings {
            let at = f.line.map_or(String::new(), |line| format!(":{line}"));
            let rule = if f.spec {
                ""
            } else {
                " (not a specification rule)"
            };
            println!("{}{at}: {}: {}{rule}", f.path, f.class, f.message);
        }
        let counts: Vec<String> = report
            .counts
            .iter()
            .map(|(class, n)| format!("{class}={n}"))
            .collect();
        println!(
            "lint: skills={} conforming={} findings={} {}",
            report.skills,
            report.conforming,
            report.findings.len(),
            counts.join(" ")
        );
    }
    if report.fails() {
        return Err(Failure::new(exit::FAILURE, anyhow::anyhow!("")));
    }
    Ok(())
}

async fn run_verify(
    args: VerifyArgs,
    config_path: Option<&std::path::Path>,
) -> Result<(), Failure> {
    let (_, store, reporter) = setup(&args.common, config_path, Access::Read)?;
    let location = ArtifactLocation::parse(&args.commit);
    let verified = verify(&store, &location)
        .await
        .map_err(|e| Failure::new(exit::VERIFY_FAILED, e))?;
    let text = format!(
        "verified: {location} commit={} documents={} skills={} store={}",
        verified.commit, verified.stats.documents, verified.stats.skills, store.display
    );
    let fields = serde_json::json!({
        "event": "verify", "location": location.to_string(), "commit": verified.commit,
        "documents": verified.stats.documents, "skills": verified.stats.skills, "store": store.display,
    });
    reporter.summary(&text, fields);
    Ok(())
}

async fn run_materialize(
    args: MaterializeArgs,
    config_path: Option<&std::path::Path>,
) -> Result<(), Failure> {
    use agentfinder_skills::promote::materialize::{materialize, MaterializeError};
    let (_, store, reporter) = setup(&args.common, config_path, Access::Read)?;
    let location = ArtifactLocation::parse(&args.commit);
    let done = materialize(&store, &location, &args.out)
        .await
        .map_err(|e| {
            let code = match &e {
                MaterializeError::Read(_) => exit::VERIFY_FAILED,
                MaterializeError::Io { .. } => exit::STORAGE,
            };
            Failure::new(code, e)
        })?;
    let text = format!(
        "materialized: {location} commit={} documents={} into {}",
        done.manifest.source_commit,
        done.manifest.document_count,
        args.out.display()
    );
    let fields = serde_json::json!({
        "event": "materialize", "location": location.to_string(),
        "commit": done.manifest.source_commit, "documents": done.manifest.document_count,
        "out": args.out.display().to_string(),
    });
    reporter.summary(&text, fields);
    Ok(())
}

async fn run_promote(
    args: PromoteArgs,
    config_path: Option<&std::path::Path>,
) -> Result<(), Failure> {
    let (config, store, reporter) = setup(&args.common, config_path, Access::Write)?;
    let policy = PromotePolicy {
        force: args.force,
        max_shrink_ratio: config.promote.max_shrink_ratio,
    };
    let outcome = promote(&store, &args.commit, policy)
        .await
        .map_err(|e| Failure::new(promote_code(&e), e))?;
    let what = match outcome {
        Promotion::AlreadyLatest => "already-latest",
        Promotion::Promoted { .. } => "promoted",
    };
    let text = format!(
        "promote: commit={} latest={what} store={}",
        args.commit, store.display
    );
    let fields = serde_json::json!({"event": "promote", "commit": args.commit, "latest": what, "store": store.display});
    reporter.summary(&text, fields);
    Ok(())
}

fn promote_code(error: &agentfinder_skills::promote::PromoteError) -> u8 {
    use agentfinder_skills::promote::PromoteError;
    match error {
        PromoteError::Older { .. }
        | PromoteError::Shrunk { .. }
        | PromoteError::OtherRepository { .. } => exit::PROMOTION_REFUSED,
        PromoteError::Read(_)
        | PromoteError::Write(_)
        | PromoteError::Lock(_)
        | PromoteError::Stage { .. } => exit::STORAGE,
    }
}
