//! `find`: TopGun's FindSkills over the index, one registry per source.
//!
//! Every source the store knows (a `sources/<id>/` folder, or a source of
//! the newest run report) is a registry. One that has an artifact is
//! searched on its own within the deadline, all at once; one that was
//! never built is `unavailable` with the run's reason. A store of a single
//! source is one registry searched whole. The answers go through the
//! results pipeline and the presenting step, then TopGun's normalisation,
//! into its FindSkills output.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;

use agentfinder_skills_reader::artifact::read_success;
use agentfinder_skills_reader::cli::{exit, index_name, seconds, CommandFailure, MeiliArgs};
use agentfinder_skills_reader::contract::ArtifactLocation;
use agentfinder_skills_reader::contract::Severity;
use agentfinder_skills_reader::meili::MeiliError;
use agentfinder_skills_reader::outln;
use agentfinder_skills_reader::sources::{latest_run, list_sources, source_store};
use agentfinder_skills_reader::store::Store;

use super::{check_query, check_ratio, ServingDefaults, DEFAULT_SEMANTIC_RATIO};
use crate::pipeline::{self, Asked, Engine, SearchError};
use crate::present::topgun::{adapter_response, AdapterResponse, FindOutput, RegistryStatus};
use crate::present::{present, Answer};

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
    /// Results per registry (1 to 100).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub limit: u16,
    /// Seconds each registry is given, retries included; past it, "unavailable".
    #[arg(long, value_name = "SECS", default_value = "8", value_parser = seconds)]
    pub deadline: Duration,
    /// Keyword search only.
    #[arg(long)]
    pub keyword_only: bool,
    /// Leave out skills whose risk findings reach above this level
    /// (none, info, low, medium, high, critical), e.g. `medium` to keep
    /// anything `high` or `critical` away from an agent.
    #[arg(long, value_name = "LEVEL", value_parser = crate::pipeline::risk_level)]
    pub max_risk: Option<Severity>,
    /// Weight of semantic results in hybrid search, from 0 to 1.
    #[arg(long, env = "AGENTFINDER_SEMANTIC_RATIO", default_value_t = DEFAULT_SEMANTIC_RATIO)]
    pub semantic_ratio: f32,
    /// Meilisearch index [default: the loaded one, else hf_skills].
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

/// `find`: every source searched as a registry; the output written, then
/// the completion block. An engine that cannot answer is every registry
/// `unavailable`, still exit 0: the file is the answer.
pub async fn run(mut args: FindArgs, defaults: &ServingDefaults) -> Result<u8, CommandFailure> {
    args.meili.resolve_state();
    check_ratio(args.semantic_ratio)?;
    let query = check_query(&args.query)?.to_string();
    let path = output_path(&args)?;
    let store = defaults.reader.open(args.store.as_deref());
    if let Err(e) = &store {
        eprintln!("find: store: {e}; searching the whole index as one registry");
    }
    let registries = registries(store.as_ref().ok(), &args.registry).await;
    let config = args.meili.config();
    let index = index_name(args.index.clone(), &args.meili.state);
    let engine = match &config {
        Some(config) => Engine::Meili {
            config,
            index: &index,
        },
        None => Engine::Embedded(&defaults.embedded),
    };
    let asked = Asked {
        text: query,
        limit: usize::from(args.limit),
        semantic_ratio: (!args.keyword_only).then_some(args.semantic_ratio),
        store: args.store.clone(),
        first_seen: super::first_seen(defaults, args.store.as_deref()).await,
        max_risk: args.max_risk,
        ..Asked::default()
    };
    let deadline = args.deadline.max(Duration::from_millis(1));
    let output = find(engine, registries, &asked, deadline, &mut |line| {
        eprintln!("find: {line}")
    })
    .await;
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
    outln!(
        "{}",
        output
            .completion_block(&path.display().to_string())
            .trim_end_matches('\n')
    );
    Ok(0)
}

/// Where the output goes: `--out`, else TopGun's own place for it.
fn output_path(args: &FindArgs) -> Result<PathBuf, CommandFailure> {
    match (&args.out, args.topgun_home) {
        (Some(path), _) => Ok(path.clone()),
        (None, true) => {
            let home = std::env::var_os("HOME").ok_or_else(|| {
                CommandFailure::new(exit::FAILURE, "--topgun-home: HOME is not set")
            })?;
            Ok(topgun_path(
                std::path::Path::new(&home),
                &crate::present::topgun::query_hash(args.query.trim()),
            ))
        }
        (None, false) => Err(CommandFailure::new(
            exit::USAGE,
            "find: say where the output goes: --out FILE or --topgun-home",
        )),
    }
}

/// One registry to ask: a source, searched when it has an artifact.
#[derive(Debug, Clone, PartialEq)]
pub struct Registry {
    /// Its name (the source id).
    pub name: String,
    /// Its source id (`None`: the whole index).
    pub source: Option<String>,
    /// Why it cannot be searched (never built), if so.
    pub not_built: Option<String>,
}

/// The registries of `store`: its sources (with the newest run's reasons
/// for those never built), else the whole index as `single`.
pub async fn registries(store: Option<&Store>, single: &str) -> Vec<Registry> {
    let whole = || {
        vec![Registry {
            name: single.to_string(),
            source: None,
            not_built: None,
        }]
    };
    let Some(store) = store else {
        return whole();
    };
    let listed = list_sources(store).await.unwrap_or_default();
    let mut built = Vec::new();
    // A `sources/<id>/` folder is not a build: a first build that failed
    // leaves one. A source counts as built once it has a `latest/`.
    for id in &listed {
        let promoted = read_success(&source_store(store, id), &ArtifactLocation::Latest).await;
        if matches!(promoted, Ok(Some(_))) {
            built.push(id.clone());
        }
    }
    let run = latest_run(store).await;
    let mut names = listed;
    if let Some(run) = &run {
        for outcome in &run.sources {
            if !names.contains(&outcome.source) {
                names.push(outcome.source.clone());
            }
        }
    }
    if names.is_empty() {
        return whole();
    }
    names
        .into_iter()
        .map(|name| {
            let reason = run
                .as_ref()
                .and_then(|r| r.sources.iter().find(|s| s.source == name))
                .and_then(|s| s.reason.clone())
                .unwrap_or_else(|| "not built yet".into());
            Registry {
                source: Some(name.clone()),
                not_built: (!built.contains(&name)).then(|| format!("not built: {reason}")),
                name,
            }
        })
        .collect()
}

/// Asks every registry (at once) and gathers the answers; `log` receives
/// the normalisation's messages. An engine that cannot answer makes every
/// registry `unavailable`, never an error.
pub async fn find(
    engine: Engine<'_>,
    registries: Vec<Registry>,
    asked: &Asked,
    deadline: Duration,
    log: &mut dyn FnMut(String),
) -> FindOutput {
    let started = Instant::now();
    let searched_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    if let Engine::Embedded(embedded) = engine {
        embedded.prepare(asked.store.as_deref()).await;
    }
    let answers = futures::future::join_all(registries.iter().map(|registry| async {
        let started = Instant::now();
        let outcome = match &registry.not_built {
            Some(reason) => Err((RegistryStatus::Unavailable, reason.clone())),
            None => {
                let asked = Asked {
                    source: registry.source.clone(),
                    ..asked.clone()
                };
                outcome(engine, &asked, deadline).await
            }
        };
        (outcome, started.elapsed().as_millis() as u64)
    }))
    .await;
    let mut gathered: Vec<(AdapterResponse, usize)> = Vec::new();
    for (registry, (outcome, latency_ms)) in registries.iter().zip(answers) {
        gathered.push(adapter_response(&registry.name, outcome, latency_ms, log));
    }
    FindOutput::gather(
        asked.text.as_str(),
        searched_at,
        started.elapsed().as_millis() as u64,
        gathered,
    )
}

/// A registry's presented answer, or its status and reason.
pub type Outcome = Result<Answer, (RegistryStatus, String)>;

/// One search within `deadline` (retries included) as a registry's
/// answer: no answer in time, or an engine that cannot be reached, is
/// `unavailable`; a refusal is `failed`; the reason is scrubbed of
/// secrets.
pub async fn outcome(engine: Engine<'_>, asked: &Asked, deadline: Duration) -> Outcome {
    let asked = Asked {
        // A registry still queued at its deadline is late.
        start_by: Instant::now().checked_add(deadline),
        ..asked.clone()
    };
    let scrub = |text: String| match engine {
        Engine::Meili { config, .. } => config.scrub(&text),
        Engine::Embedded(_) => text,
    };
    match tokio::time::timeout(deadline, pipeline::run(engine, &asked)).await {
        Err(_) => Err((
            RegistryStatus::Unavailable,
            match engine {
                Engine::Meili { config, .. } => format!(
                    "Meilisearch at {} gave no answer within {:.1} s",
                    config.display_url(),
                    deadline.as_secs_f64()
                ),
                Engine::Embedded(_) => {
                    format!("no answer within {:.1} s", deadline.as_secs_f64())
                }
            },
        )),
        Ok(Ok(ranked)) => Ok(present(ranked, None)),
        Ok(Err(SearchError::Meili(e @ MeiliError::Unavailable { .. }))) => {
            Err((RegistryStatus::Unavailable, scrub(e.to_string())))
        }
        Ok(Err(SearchError::Meili(e))) => Err((RegistryStatus::Failed, scrub(e.to_string()))),
        Ok(Err(SearchError::Embedded(e))) => Err((RegistryStatus::Unavailable, e)),
    }
}

/// Where `find --topgun-home` writes: `<home>/.topgun/found-skills-<first
/// 16 hex digits of the query hash>.json`.
pub fn topgun_path(home: &std::path::Path, query_hash: &str) -> PathBuf {
    home.join(".topgun").join(format!(
        "found-skills-{}.json",
        &query_hash[..16.min(query_hash.len())]
    ))
}
