//! `build` and `backfill`: each hands its request to the library's command,
//! then the optional load into Meilisearch, and prints the summary.

use std::path::PathBuf;

use anyhow::Context;

use agentfinder_skills::backfill::{backfill, BackfillRequest, Selection};
use agentfinder_skills::build::interrupt;
use agentfinder_skills::build::sources::{build_sources, SourcesRequest};
use agentfinder_skills::build::{build, BuildError, BuildRequest};
use agentfinder_skills::config::Config;
use agentfinder_skills::logging::{self, Reporter};
use agentfinder_skills::promote::Promotion;
use agentfinder_skills::shard::Shard;
use agentfinder_skills::source::SourceSpec;
use agentfinder_skills::validate::StrictPolicy;
use agentfinder_skills_reader::cli::{describe_sync, sync_or_load, MeiliArgs};
use agentfinder_skills_reader::contract::ArtifactLocation;
use agentfinder_skills_reader::meili::{ping, RetryPolicy, SyncOptions};
use agentfinder_skills_reader::store::Store;

use crate::args::{BackfillArgs, BuildArgs};
use crate::artifacts::promote_code;
use crate::{exit, new_local_store, remove_if_empty, setup, signals, Access, Failure};

pub async fn run_build(
    args: BuildArgs,
    config_path: Option<&std::path::Path>,
) -> Result<(), Failure> {
    signals::watch();
    let new_store = new_local_store(&args.common, config_path);
    let result = build_command(args, config_path).await;
    if let (Err(_), Some(folder)) = (&result, &new_store) {
        remove_if_empty(folder);
    }
    result
}

async fn build_command(
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
        allow_empty: args.allow_empty,
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
pub async fn run_build_sources(
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
        allow_empty: args.allow_empty,
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
    if let Some(signal) = interrupt::requested() {
        let why = format!(
            "interrupted by {}: the sources not finished were stopped before promotion (their latest/ unchanged; the report names them)",
            signal.name()
        );
        return Err(Failure::new(signal.exit_code(), anyhow::anyhow!(why)));
    }
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

pub async fn run_backfill(
    args: BackfillArgs,
    config_path: Option<&std::path::Path>,
) -> Result<(), Failure> {
    signals::watch();
    let new_store = new_local_store(&args.common, config_path);
    let result = backfill_command(args, config_path).await;
    if let (Err(_), Some(folder)) = (&result, &new_store) {
        remove_if_empty(folder);
    }
    result
}

async fn backfill_command(
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
        BuildError::Source(_)
        | BuildError::TimedOut(_)
        | BuildError::Stopped
        | BuildError::Empty { .. } => exit::SOURCE,
        BuildError::Interrupted(signal) => signal.exit_code(),
        BuildError::Embed(_) => exit::FAILURE,
        BuildError::Glob(_) | BuildError::Validation(_) => exit::VALIDATION,
        BuildError::Write(_)
        | BuildError::Read(_)
        | BuildError::Internal(_)
        | BuildError::Lock(_) => exit::STORAGE,
        BuildError::Promote(p) => promote_code(p),
    }
}
