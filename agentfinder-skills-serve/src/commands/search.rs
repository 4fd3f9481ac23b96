//! `search`: the skills that fit a query, from Meilisearch when
//! `MEILI_URL` is set, else from the store itself (the embedded engine).
//! A short list for people, JSON with `--json`, TopGun's adapter object
//! with `--format topgun`.

use std::time::{Duration, Instant};

use clap::Args;

use agentfinder_skills_reader::cli::{exit, index_name, seconds, CommandFailure, MeiliArgs};
use agentfinder_skills_reader::contract::Severity;
use agentfinder_skills_reader::outln;

use super::{check_query, check_ratio, ServingDefaults, DEFAULT_SEMANTIC_RATIO};
use crate::pipeline::{self, Asked, Engine};
use crate::present::agentfinder::search_body;
use crate::present::topgun::adapter_response;
use crate::present::{present, AgentText, Answer};

/// `search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for, in your own words.
    pub query: String,
    /// Most results (1 to 100).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub limit: u16,
    /// Only results of this source (a `[[sources]]` id).
    #[arg(long, value_name = "ID")]
    pub source: Option<String>,
    /// Artifact store the embedded engine searches when no Meilisearch is
    /// configured [default: [output].store].
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Meilisearch filter, e.g. `kind = skill` or `skill = pdf` (Meilisearch only).
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// Every matching section, not one result per skill (Meilisearch only).
    #[arg(long)]
    pub all_sections: bool,
    /// Print JSON (Agent Finder SearchResult objects) instead of a list.
    #[arg(long)]
    pub json: bool,
    /// Meilisearch index to search [default: the loaded one, else hf_skills].
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
    /// Keyword search only, even when vectors are there.
    #[arg(long)]
    pub keyword_only: bool,
    /// Leave out skills whose risk findings reach above this level
    /// (none, info, low, medium, high, critical), e.g. `medium` to keep
    /// anything `high` or `critical` away from an agent.
    #[arg(long, value_name = "LEVEL", value_parser = crate::pipeline::risk_level)]
    pub max_risk: Option<Severity>,
    /// Output shape: Agent Finder SearchResults, or TopGun's adapter object
    /// (`{registry, status, reason, results, latency_ms}`; an engine that
    /// cannot answer is status "unavailable" with the reason, exit 0).
    #[arg(long, value_enum, default_value_t = ResultFormat::Agentfinder)]
    pub format: ResultFormat,
    /// With `--format topgun`: the registry name in the adapter object.
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

/// `search`: check what was asked, search, print.
pub async fn run(mut args: SearchArgs, defaults: &ServingDefaults) -> Result<u8, CommandFailure> {
    args.meili.resolve_state();
    check_ratio(args.semantic_ratio)?;
    let query = check_query(&args.query)?.to_string();
    let config = args.meili.config();
    if config.is_none() {
        for (given, flag) in [
            (args.filter.is_some(), "--filter"),
            (args.all_sections, "--all-sections"),
        ] {
            if given {
                return Err(CommandFailure::new(
                    exit::USAGE,
                    format!("{flag} is Meilisearch's (set MEILI_URL); the embedded engine takes --source"),
                ));
            }
        }
    }
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
        source: args.source.clone(),
        filter: args.filter.clone(),
        semantic_ratio: (!args.keyword_only).then_some(args.semantic_ratio),
        all_sections: args.all_sections,
        store: args.store.clone(),
        first_seen: super::first_seen(defaults, args.store.as_deref()).await,
        max_risk: args.max_risk,
        ..Asked::default()
    };
    if args.format == ResultFormat::Topgun {
        return print_topgun(engine, &asked, &args).await;
    }
    let ranked = pipeline::run(engine, &asked)
        .await
        .map_err(|e| match engine {
            // Cleaned: an engine's error can quote what a skill's author wrote.
            Engine::Meili { config, .. } => {
                CommandFailure::new(exit::MEILI, AgentText::field(&config.scrub(&e.to_string())))
            }
            Engine::Embedded(_) => {
                CommandFailure::new(exit::STORAGE, AgentText::field(&e.to_string()))
            }
        })?;
    if ranked.results.is_empty() {
        if let Some(source) = &asked.source {
            check_source(engine, source, asked.store.as_deref()).await?;
        }
    }
    let answer = present(ranked, None);
    if let Some(reason) = &answer.notice {
        eprintln!("search: {reason}");
    }
    if !answer.strength.good {
        eprintln!(
            "search: no good match: {} (the store may hold no skill for this)",
            answer.strength.rule
        );
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&search_body(&answer)).unwrap_or_default()
        );
    } else {
        print_list(&answer);
    }
    Ok(0)
}

/// A source named with `--source` that gave nothing: an error when the
/// store has no such source (a typo), nothing otherwise.
async fn check_source(
    engine: Engine<'_>,
    source: &str,
    store: Option<&str>,
) -> Result<(), CommandFailure> {
    let known = match engine {
        Engine::Embedded(embedded) => embedded.sources(store),
        // Meilisearch: whether any document of the index is of it.
        Engine::Meili { config, index } => {
            let asked = Asked {
                limit: 1,
                source: Some(source.to_string()),
                all_sections: true,
                ..Asked::default()
            };
            let any = pipeline::run(Engine::Meili { config, index }, &asked).await;
            match any {
                Ok(found) if found.results.is_empty() => Some(Vec::new()),
                _ => None,
            }
        }
    };
    match known {
        Some(sources) if !sources.iter().any(|s| s == source) => Err(CommandFailure::new(
            exit::USAGE,
            if sources.is_empty() {
                format!("--source {source}: no such source")
            } else {
                format!(
                    "--source {source}: no such source; the sources are {}",
                    sources.join(", ")
                )
            },
        )),
        _ => Ok(()),
    }
}

/// The short list a person reads: per result, its name, source and
/// score, the skill's description, its risk when above `none`, the
/// section that matched, and the link.
fn print_list(answer: &Answer) {
    if answer.results.is_empty() {
        outln!("no skill found");
        return;
    }
    for (n, result) in answer.results.iter().enumerate() {
        let source = if result.source_id.is_empty() {
            &result.repo
        } else {
            &result.source_id
        };
        outln!(
            "{:>2}. {}  ({source}, score {:.3})",
            n + 1,
            result.name,
            result.score
        );
        if !result.description.is_empty() {
            outln!("    {}", shortened(&result.description, 100));
        }
        let (level, classes) = result.risk();
        if level > Severity::None {
            outln!("    risk: {level} ({})", classes.join(", "));
        }
        if let Some(section) = result
            .sections
            .first()
            .filter(|s| !s.heading_path.is_empty())
        {
            // Joined, headings could spell what none of them does.
            let path: Vec<&str> = section.heading_path.iter().map(|h| h.as_str()).collect();
            outln!("    section: {}", AgentText::field(&path.join(" > ")));
        }
        outln!("    {}", result.url);
        if !result.also_at.is_empty() {
            outln!("    copies elsewhere: {}", result.also_at.len());
        }
    }
}

/// `text` cut to `max` characters, ending in `…` when cut.
fn shortened(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// `search --format topgun`: the adapter object, whatever happens to the
/// engine (down, unset, too slow: `unavailable` with the reason, never a
/// crash).
async fn print_topgun(
    engine: Engine<'_>,
    asked: &Asked,
    args: &SearchArgs,
) -> Result<u8, CommandFailure> {
    let started = Instant::now();
    if let Engine::Embedded(embedded) = engine {
        embedded.prepare(asked.store.as_deref()).await;
    }
    let deadline = args.deadline.max(Duration::from_millis(1));
    let outcome = super::find::outcome(engine, asked, deadline).await;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_description_is_shortened_for_the_list() {
        assert_eq!(shortened("short", 10), "short");
        assert_eq!(shortened("0123456789abc", 10), "012345678…");
        assert_eq!(shortened("ééééé", 5), "ééééé");
    }
}
