//! `eval`: search quality on a query set, keyword against hybrid search,
//! through the same pipeline `search` uses ([`crate::eval`] scores it).

use std::path::PathBuf;

use clap::Args;

use agentfinder_skills_reader::cli::{exit, index_name, CommandFailure, MeiliArgs};
use agentfinder_skills_reader::outln;
use agentfinder_skills_reader::results::{
    CARD_GOOD_MATCH_FROM, CARD_NO_GOOD_MATCH_BELOW, GOOD_MATCH_FROM,
    KEYWORDS_WORDS_HELD_FOR_A_MATCH, NO_GOOD_MATCH_BELOW, WORDS_HELD_FOR_A_MATCH,
};

use super::{check_ratio, ServingDefaults};
use crate::eval::{evaluate, EvalQuery, JudgmentFile};
use crate::pipeline::rules::Rules;
use crate::pipeline::{self, Asked, Engine};
use crate::present::present;

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
    /// With Meilisearch: the shared rules the results pipeline applies to
    /// its page (all; none; or words and compounds, comma-separated), to
    /// measure what each does.
    #[arg(long, value_name = "RULES", default_value = "all", value_parser = Rules::named)]
    pub rules: Rules,
    #[command(flatten)]
    pub meili: MeiliArgs,
}

/// `eval`: every query of the set searched by keywords, then at each
/// semantic ratio; the scores printed.
pub async fn run(mut args: EvalArgs, defaults: &ServingDefaults) -> Result<u8, CommandFailure> {
    args.meili.resolve_state();
    for &ratio in &args.semantic_ratio {
        check_ratio(ratio)?;
    }
    let text = std::fs::read_to_string(&args.queries).map_err(|e| {
        CommandFailure::new(exit::FAILURE, format!("{}: {e}", args.queries.display()))
    })?;
    #[derive(serde::Deserialize)]
    struct File {
        queries: Vec<EvalQuery>,
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
        let judgments: JudgmentFile =
            serde_json::from_str(&text).map_err(|e| fail(e.to_string()))?;
        judgments
            .apply(&mut file.queries)
            .map_err(|e| fail(e.to_string()))?;
    }
    let index = index_name(args.index.clone(), &args.meili.state);
    let config = args.meili.config();
    let engine = match &config {
        Some(config) => Engine::Meili {
            config,
            index: &index,
        },
        None => Engine::Embedded(&defaults.embedded),
    };
    let store = &args.store;
    let rules = Some(args.rules);
    let first_seen = &super::first_seen(defaults, args.store.as_deref()).await;
    let search = |text: String, ratio: Option<f32>| async move {
        let asked = Asked {
            text,
            limit: 10,
            semantic_ratio: ratio,
            store: store.clone(),
            meili_rules: rules,
            first_seen: first_seen.clone(),
            ..Asked::default()
        };
        pipeline::run(engine, &asked)
            .await
            .map(|ranked| present(ranked, None))
    };
    let report = evaluate(engine.name(), search, &args.semantic_ratio, &file.queries)
        .await
        .map_err(|e| match engine {
            Engine::Meili { config, .. } => {
                CommandFailure::new(exit::MEILI, config.scrub(&e.to_string()))
            }
            Engine::Embedded(_) => CommandFailure::new(exit::STORAGE, e),
        })?;
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
            "flagged: the share of the queries with no answer / of the answerable ones that were called \"no good match\" (best vector similarity under {NO_GOOD_MATCH_BELOW}, or under {GOOD_MATCH_FROM} with the first result holding less than {WORDS_HELD_FOR_A_MATCH} of the query's words; keywords only: the first three results' cards under {CARD_NO_GOOD_MATCH_BELOW} like the query unless the first holds every word, or under {CARD_GOOD_MATCH_FROM} with under {WORDS_HELD_FOR_A_MATCH} of them; with no model, the first result holding less than {KEYWORDS_WORDS_HELD_FOR_A_MATCH} of them)"
        );
    }
    Ok(0)
}
