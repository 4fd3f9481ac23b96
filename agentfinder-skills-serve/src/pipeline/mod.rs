//! The one results pipeline, for both engines:
//!
//! ```text
//! candidates (Meilisearch's page | the embedded engine's ranking)
//!   -> none above the risk level asked for                 (within_risk)
//!   -> the shared rules the engine did not apply itself   (rules)
//!   -> skills named as the query first                    (fold::name_first)
//!   -> copies folded into one result                      (fold::fold)
//!   -> present: the agentfinder JSON, the MCP answer, the TopGun object
//! ```
//!
//! Every command that searches (`search`, `find`, `eval`, `serve`'s
//! `/search`, MCP's `search_skills`) goes through [`run`], then
//! [`crate::present`].

pub mod fold;
pub mod meili;
pub mod rules;

use std::time::Instant;

use agentfinder_skills_engine::{Embedded, Query};
use agentfinder_skills_reader::contract::card_text;
use agentfinder_skills_reader::contract::Severity;
use agentfinder_skills_reader::meili::{MeiliConfig, MeiliError};
use agentfinder_skills_reader::results::{Candidates, Hit, MatchStrength, Measured};

use fold::Folded;
use rules::Rules;

/// Hits asked of an engine per result wanted, for copies to fold into and
/// the rules to re-rank (AgentWorkers/skills holds up to 60 copies of one
/// skill; a few per result is what a page of its results held).
pub const COPIES_FETCHED: usize = 4;

/// Most hits asked for one page of results (past it, a page may come back
/// short of copies folded in further down).
pub const MAX_FETCHED: usize = 200;

/// The embedder both engines' hybrid search uses (the artifact's vectors
/// are `_vectors.default`).
pub const EMBEDDER: &str = "default";

/// Hits an engine is asked for to make `limit` results.
pub fn page_size(limit: usize) -> usize {
    limit
        .saturating_mul(COPIES_FETCHED)
        .min(limit.max(MAX_FETCHED))
}

/// Which engine gives the candidates.
#[derive(Debug, Clone, Copy)]
pub enum Engine<'a> {
    /// A Meilisearch server and its index.
    Meili {
        /// How to reach it.
        config: &'a MeiliConfig,
        /// The index searched.
        index: &'a str,
    },
    /// The embedded engine over the store's artifacts.
    Embedded(&'a Embedded),
}

impl Engine<'_> {
    /// Its name in results and logs (`metadata.sourceType`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Meili { .. } => "meilisearch",
            Self::Embedded(engine) => engine.name(),
        }
    }
}

/// What is asked.
#[derive(Debug, Clone, Default)]
pub struct Asked {
    /// The words.
    pub text: String,
    /// Most results.
    pub limit: usize,
    /// Only results of this source.
    pub source: Option<String>,
    /// A Meilisearch filter expression (Meilisearch only).
    pub filter: Option<String>,
    /// Weight of vector ranking, 0 to 1; `None` for keywords only.
    pub semantic_ratio: Option<f32>,
    /// Best-matching sections to name per result (embedded engine).
    pub sections: usize,
    /// Every matching section, not one result per skill (Meilisearch only).
    pub all_sections: bool,
    /// The store the embedded engine searches, when not its default.
    pub store: Option<String>,
    /// When the search must have started (embedded engine; a search still
    /// queued then is refused as busy).
    pub start_by: Option<Instant>,
    /// The shared rules to apply to Meilisearch's page, when not all of
    /// them (`eval --rules`, to measure what each does).
    pub meili_rules: Option<Rules>,
    /// When the pipeline first saw each content, as the store records it
    /// (which copy of a skill is shown; [`fold::shown`]).
    pub first_seen: Option<std::sync::Arc<fold::FirstSeen>>,
    /// Leave out skills whose risk level (`signals.risk.level`) is above
    /// this one; `None` keeps every level.
    pub max_risk: Option<Severity>,
}

/// Why an engine gave no candidates.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// Meilisearch failed (its message scrubbed of secrets).
    #[error("{0}")]
    Meili(#[from] MeiliError),
    /// The embedded engine could not answer.
    #[error("{0}")]
    Embedded(String),
}

/// Results, best first, and what was said of them.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    /// The engine that gave the candidates.
    pub engine: &'static str,
    /// The results.
    pub results: Vec<Folded>,
    /// How well the answer matches the query ([`MatchStrength::judge`]).
    pub strength: MatchStrength,
    /// Why the answer is not the usual one (keywords only), when it is not.
    pub fallback: Option<String>,
}

/// Runs the pipeline: `engine`'s candidates for `asked`, then the shared
/// steps ([`rank`]). When hits above the risk asked for leave a page
/// short of results and the engine had more, a page four times larger is
/// asked for (up to [`MAX_FETCHED`]): a query whose first hits are a
/// campaign's copies still finds the skills below them.
pub async fn run(engine: Engine<'_>, asked: &Asked) -> Result<Ranked, SearchError> {
    let mut page = if asked.all_sections {
        asked.limit
    } else {
        page_size(asked.limit)
    };
    loop {
        let (candidates, rules) = candidates(engine, asked, page).await?;
        let fetched = candidates.hits.len();
        let candidates = within_risk(candidates, asked.max_risk);
        let dropped = candidates.hits.len() < fetched;
        let mut ranked = if asked.all_sections {
            unfolded(&asked.text, candidates, asked.limit)
        } else {
            let none = fold::FirstSeen::new();
            let first_seen = asked.first_seen.as_deref().unwrap_or(&none);
            rank(&asked.text, candidates, rules, asked.limit, first_seen)
        };
        let short = ranked.results.len() < asked.limit.max(1);
        if dropped && short && fetched >= page && page < MAX_FETCHED {
            page = page.saturating_mul(4).min(MAX_FETCHED);
            continue;
        }
        ranked.engine = engine.name();
        if let Engine::Embedded(embedded) = engine {
            ranked = with_cards(ranked, embedded, asked).await;
        }
        return Ok(ranked);
    }
}

/// A page of `page` hits for `asked` from `engine`, with the shared rules
/// the pipeline still has to apply to it.
async fn candidates(
    engine: Engine<'_>,
    asked: &Asked,
    page: usize,
) -> Result<(Candidates, Rules), SearchError> {
    Ok(match engine {
        Engine::Meili { config, index } => {
            let rules = asked.meili_rules.unwrap_or(Rules::MEILISEARCH);
            let query = meili::MeiliQuery {
                index,
                text: &asked.text,
                limit: page,
                filter: meili_filter(asked.filter.as_deref(), asked.source.as_deref()),
                all_sections: asked.all_sections,
                hybrid: asked.semantic_ratio.map(|r| (EMBEDDER, r)),
                share_of_words: rules.share_of_words,
            };
            // The share of the words is weighed inside the ranking.
            let left = Rules {
                share_of_words: false,
                ..rules
            };
            (meili::candidates(config, &query).await?, left)
        }
        Engine::Embedded(embedded) => {
            let query = Query {
                text: asked.text.clone(),
                limit: page,
                source: asked.source.clone(),
                semantic_ratio: asked.semantic_ratio,
                sections: asked.sections,
                store: asked.store.clone(),
                start_by: asked.start_by,
            };
            let found = embedded
                .search(&query)
                .await
                .map_err(SearchError::Embedded)?;
            (found, Rules::NONE)
        }
    })
}

/// The shared steps: the `rules` the engine did not apply, skills named
/// as the query first, copies folded; at most `limit` results.
pub fn rank(
    query: &str,
    candidates: Candidates,
    rules: Rules,
    limit: usize,
    first_seen: &fold::FirstSeen,
) -> Ranked {
    let hits = fold::trusted_first(rules::apply(query, candidates.hits, rules));
    let hits = fold::name_first(query, hits);
    let results = fold::fold(hits, limit.max(1), first_seen);
    Ranked {
        engine: "",
        strength: strength(query, &results, candidates.similarity),
        results,
        fallback: candidates.fallback,
    }
}

/// How well `results` match `query` ([`MatchStrength::judge`]): the
/// engine's best vector similarity, and the share of the query's words
/// the first result holds.
fn strength(query: &str, results: &[Folded], similarity: Option<f64>) -> MatchStrength {
    let words_held = results
        .first()
        .and_then(|first| rules::share_of_words(query, &first.hit));
    MatchStrength::judge(Measured {
        any: !results.is_empty(),
        best_similarity: similarity,
        words_held,
        ..Measured::default()
    })
}

/// Most results whose names and descriptions are compared with the query
/// when vectors did not rank them.
pub const CARDS_COMPARED: usize = 3;

/// `ranked` judged again with the similarity of its first results' names
/// and descriptions to the query, embedded now by `embedded`'s query
/// model, when vectors did not rank them (keywords only); as it was when
/// they did, when nothing was found, or when the first result holds every
/// word of the query (then the cards could not make it weak). Cards that
/// could not be compared leave the words' verdict, saying why.
async fn with_cards(mut ranked: Ranked, embedded: &Embedded, asked: &Asked) -> Ranked {
    let strength = &ranked.strength;
    if strength.best_similarity.is_some()
        || ranked.results.is_empty()
        || strength.words_held.is_some_and(|share| share >= 1.0)
    {
        return ranked;
    }
    let cards: Vec<String> = ranked
        .results
        .iter()
        .take(CARDS_COMPARED)
        .map(|result| card_text(&result.hit.document))
        .collect();
    let measured = match embedded
        .card_similarity(&asked.text, &cards, asked.start_by)
        .await
    {
        Ok(card) => Measured {
            card_similarity: Some(card),
            ..measured(&ranked.strength)
        },
        Err(why) => Measured {
            cards_not_compared: Some(why),
            ..measured(&ranked.strength)
        },
    };
    ranked.strength = MatchStrength::judge(measured);
    ranked
}

/// What a strength was judged on, again.
fn measured(strength: &MatchStrength) -> Measured {
    Measured {
        any: true,
        best_similarity: strength.best_similarity,
        card_similarity: strength.card_similarity,
        words_held: strength.words_held,
        cards_not_compared: None,
    }
}

/// The risk level of a hit's skill: `signals.risk.level`; `None` where
/// the artifact says nothing of risk (built before schema 7).
pub fn hit_risk(hit: &Hit) -> Option<Severity> {
    hit.document.get("signals").and_then(signals_risk)
}

/// The risk level a document's `signals` state (`risk.level`), if any.
pub fn signals_risk(signals: &serde_json::Value) -> Option<Severity> {
    signals
        .pointer("/risk/level")
        .and_then(serde_json::Value::as_str)
        .and_then(Severity::parse)
}

/// A risk level as a person or an agent names it (`--max-risk`,
/// `max_risk`): any case; the error lists the levels.
pub fn risk_level(text: &str) -> Result<Severity, String> {
    Severity::parse(text).ok_or_else(|| {
        format!("{text:?} is not a risk level: use none, info, low, medium, high or critical")
    })
}

/// An optional maximum risk as a request gives it (`max_risk` of
/// `/search` and MCP): absent or blank is none; otherwise a level, or the
/// error that lists them.
pub fn max_risk_param(text: Option<&str>) -> Result<Option<Severity>, String> {
    match text.map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => risk_level(text)
            .map(Some)
            .map_err(|e| format!("`max_risk`: {e}")),
    }
}

/// `candidates` without the hits above `max` (all of them without one).
/// A hit whose artifact says nothing of risk is unknown, not safe: kept
/// only when every level is. Before folding, so a risky copy is not
/// listed in a result's `also_at`.
pub fn within_risk(mut candidates: Candidates, max: Option<Severity>) -> Candidates {
    if let Some(max) = max {
        candidates.hits.retain(|hit| match hit_risk(hit) {
            Some(level) => level <= max,
            None => max == Severity::Critical,
        });
    }
    candidates
}

/// Every hit as it came, each its own result (`--all-sections`).
fn unfolded(query: &str, candidates: Candidates, limit: usize) -> Ranked {
    let results: Vec<Folded> = candidates
        .hits
        .into_iter()
        .take(limit.max(1))
        .map(|hit| Folded {
            hit,
            also_at: Vec::new(),
        })
        .collect();
    Ranked {
        engine: "",
        strength: strength(query, &results, candidates.similarity),
        results,
        fallback: candidates.fallback,
    }
}

/// `filter` narrowed to one source.
pub fn meili_filter(filter: Option<&str>, source: Option<&str>) -> Option<String> {
    let source = source.map(|id| format!("source = {}", serde_json::Value::from(id)));
    match (filter, source) {
        (Some(filter), Some(source)) => Some(format!("({filter}) AND {source}")),
        (Some(filter), None) => Some(filter.to_string()),
        (None, source) => source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn candidates(content: &str, similarity: f64) -> Candidates {
        Candidates {
            hits: vec![Hit::new(
                json!({"skill_name": "x", "skill_description": "y", "content": content}),
                0.9,
            )],
            similarity: Some(similarity),
            fallback: None,
        }
    }

    #[test]
    fn hits_above_the_risk_asked_for_or_of_unknown_risk_are_left_out() {
        let hit = |name: &str, level: Option<&str>| {
            let mut doc = json!({"skill_name": name});
            if let Some(level) = level {
                doc["signals"] = json!({"risk": {"level": level}});
            }
            Hit::new(doc, 0.5)
        };
        let candidates = Candidates {
            hits: vec![
                hit("bad", Some("critical")),
                hit("old", None),
                hit("hf", Some("medium")),
                hit("odd", Some("high")),
            ],
            similarity: None,
            fallback: None,
        };
        let names = |c: Candidates| -> Vec<String> {
            c.hits
                .iter()
                .map(|h| h.text("skill_name").to_string())
                .collect()
        };
        assert_eq!(names(within_risk(candidates.clone(), None)).len(), 4);
        // An artifact built before risk findings says nothing: unknown.
        assert_eq!(
            names(within_risk(candidates.clone(), Some(Severity::Medium))),
            ["hf"]
        );
        assert!(names(within_risk(candidates.clone(), Some(Severity::None))).is_empty());
        assert_eq!(
            names(within_risk(candidates, Some(Severity::Critical))).len(),
            4
        );
    }

    #[test]
    fn a_close_vector_whose_result_holds_few_of_the_words_is_no_good_match() {
        let query = "deploy my Next.js site to Vercel";
        let strength = |content: &str, similarity: f64| {
            rank(
                query,
                candidates(content, similarity),
                Rules::NONE,
                10,
                &fold::FirstSeen::new(),
            )
            .strength
        };
        let off_topic = strength("Create art with seeded randomness", 0.658);
        assert_eq!(off_topic.words_held, Some(0.0));
        assert!(!off_topic.good, "{off_topic:?}");
        // The same similarity with the words: a match; a closer vector: a match.
        assert!(strength("Deploy a Next.js site to Vercel", 0.658).good);
        assert!(strength("Create art with seeded randomness", 0.71).good);
    }
}
