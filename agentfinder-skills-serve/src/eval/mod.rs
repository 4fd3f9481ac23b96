//! Search quality: for a set of queries with the skills that should answer
//! them, top-1 and top-3 hit rates and mean reciprocal rank, overall and per
//! kind of query, keyword search against hybrid search, for either engine
//! through the one results pipeline ([`evaluate`]).

use std::collections::BTreeMap;
use std::future::Future;

use serde::{Deserialize, Serialize};

use crate::present::agentfinder::SearchResult;
use crate::present::Answer;

pub mod judgments;

pub use judgments::{Judgment, JudgmentFile, UnknownQuery};

/// One query and the skills that answer it (none: a query with no answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalQuery {
    /// What an agent asks.
    pub query: String,
    /// Skill folder names that are right answers.
    pub expect: Vec<String>,
    /// Free-form class (`paraphrase`, `body-detail`, `identifier`, ...).
    #[serde(default)]
    pub kind: String,
    /// Source ids whose skills are right answers (empty: any source's
    /// skill of an `expect` name is).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
    /// Results judged right (`true`) or wrong answers beyond the labels,
    /// by key (`<source id>:<path>`; see [`JudgmentFile`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub judged: BTreeMap<String, bool>,
}

impl EvalQuery {
    /// Whether `result` is a right answer: a labelled skill (of an answer
    /// source, when the set names them) or a result judged right. A result
    /// that stands for copies of one skill (`alsoAt`) answers when any of
    /// them does.
    pub fn answered_by(&self, result: &SearchResult) -> bool {
        locations(result).any(|at| {
            let labelled = at
                .folder
                .is_some_and(|f| self.expect.iter().any(|e| e == f))
                && (self.sources.is_empty() || self.sources.iter().any(|s| s == at.source));
            labelled || self.judged.get(&at.key()) == Some(&true)
        })
    }

    /// Whether a reader said if `result` answers: labelled or judged.
    fn judged_or_labelled(&self, result: &SearchResult) -> bool {
        self.answered_by(result) || locations(result).any(|at| self.judged.contains_key(&at.key()))
    }
}

/// One place a result is: its source, the path of its SKILL.md, and the
/// skill folder the labels name.
struct Location<'r> {
    source: &'r str,
    path: &'r str,
    folder: Option<&'r str>,
}

impl Location<'_> {
    /// Its key in judgments: `<source id>:<path of its SKILL.md>`.
    fn key(&self) -> String {
        format!("{}:{}", self.source, self.path)
    }
}

/// A result's own key in judgments.
fn own_key(result: &SearchResult) -> String {
    Location {
        source: &result.metadata.source_id,
        path: &result.metadata.path,
        folder: None,
    }
    .key()
}

/// Where a result is: its own place (whose folder is `metadata.skill`),
/// then its copies' (whose folder is read from their path).
fn locations(result: &SearchResult) -> impl Iterator<Item = Location<'_>> {
    let own = Location {
        source: &result.metadata.source_id,
        path: &result.metadata.path,
        folder: Some(&result.metadata.skill),
    };
    std::iter::once(own).chain(result.metadata.also_at.iter().filter_map(|at| {
        let path = at.get("path")?.as_str()?;
        Some(Location {
            source: at.get("source_id")?.as_str()?,
            path,
            folder: path.rsplit('/').nth(1),
        })
    }))
}

/// A result in a query's first three that neither its labels nor a
/// judgment say anything of: what a reader judges next.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unjudged {
    /// The query.
    pub query: String,
    /// The result's key (`<source id>:<path>`), as judgments name it.
    pub key: String,
    /// Its rank, from 1.
    pub rank: usize,
    /// The skill's name.
    pub name: String,
    /// Its description (or the matching section's title).
    pub about: String,
}

/// Scores of one search mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct EvalScores {
    /// Answerable queries.
    pub queries: usize,
    /// Share with a right skill first.
    pub top1: f64,
    /// Share with a right skill in the first three.
    pub top3: f64,
    /// Mean reciprocal rank of the first right skill (0 when absent).
    pub mrr: f64,
    /// Mean best score on queries that have no answer (lower is better).
    pub no_answer_top_score: f64,
    /// Share of the queries with no answer that the search called "no good
    /// match" ([`agentfinder_skills_reader::results::MatchStrength`]; higher
    /// is better); `None` when the set has none.
    pub no_answer_flagged: Option<f64>,
    /// Share of the answerable queries it called "no good match" (lower
    /// is better); `None` likewise.
    pub answerable_flagged: Option<f64>,
}

/// An answerable query whose right answer was not in the first three:
/// what an operator reads to learn why a ranking falls short.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalMiss {
    /// The query.
    pub query: String,
    /// Its kind.
    pub kind: String,
    /// Rank of the first right answer, from 1 (`None`: not in the first 10).
    pub rank: Option<usize>,
    /// The first three results, as `source:skill`.
    pub ahead: Vec<String>,
}

/// How often searches called their best hit "no good match".
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Flags {
    /// Answerable queries flagged, of all answerable ones.
    pub answerable: (usize, usize),
    /// Queries with no answer flagged, of all of them.
    pub no_answer: (usize, usize),
}

impl Flags {
    fn count(
        &mut self,
        answerable: bool,
        strength: &agentfinder_skills_reader::results::MatchStrength,
    ) {
        let slot = if answerable {
            &mut self.answerable
        } else {
            &mut self.no_answer
        };
        slot.0 += usize::from(!strength.good);
        slot.1 += 1;
    }
}

/// Scores of hybrid search at one semantic ratio.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HybridScores {
    /// `semanticRatio` of the runs (0 = keyword only, 1 = vectors only).
    pub semantic_ratio: f32,
    /// What it scored.
    #[serde(flatten)]
    pub scores: EvalScores,
    /// The same, per kind of query.
    pub by_kind: BTreeMap<String, EvalScores>,
    /// Queries answered below the first three, or not at all.
    pub misses: Vec<EvalMiss>,
    /// Results in the first three that nothing says answer or not.
    pub unjudged: Vec<Unjudged>,
}

/// Keyword search against hybrid search at each semantic ratio asked for.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    /// The engine measured (`meilisearch`, `embedded`).
    pub engine: String,
    /// Keyword search only.
    pub keyword: EvalScores,
    /// The same, per kind of query.
    pub keyword_by_kind: BTreeMap<String, EvalScores>,
    /// Queries keyword search answered below the first three, or not at all.
    pub keyword_misses: Vec<EvalMiss>,
    /// Results keyword search put in the first three that nothing says
    /// answer or not.
    pub keyword_unjudged: Vec<Unjudged>,
    /// Hybrid search, one entry per ratio, in the order asked.
    pub hybrid: Vec<HybridScores>,
}

impl EvalReport {
    /// The ratio that ranks best: highest MRR, then top-1, then top-3; a
    /// tie goes to the lower ratio (less work for the server's embedder).
    pub fn best(&self) -> Option<&HybridScores> {
        let key = |h: &HybridScores| (h.scores.mrr, h.scores.top1, h.scores.top3);
        self.hybrid
            .iter()
            .fold(None, |best: Option<&HybridScores>, h| match best {
                Some(b) if key(b) > key(h) => Some(b),
                Some(b) if key(b) == key(h) && b.semantic_ratio <= h.semantic_ratio => Some(b),
                _ => Some(h),
            })
    }
}

/// Runs every query with keyword search (`None`), then with hybrid search
/// at each of `ratios`, through `search`, which answers with one hit per
/// skill, best first (10 are looked at), and how well the best matches.
pub async fn evaluate<F, Fut, E>(
    engine: &str,
    search: F,
    ratios: &[f32],
    queries: &[EvalQuery],
) -> Result<EvalReport, E>
where
    F: Fn(String, Option<f32>) -> Fut,
    Fut: Future<Output = Result<Answer, E>>,
{
    let keyword = run_queries(&search, None, queries).await?;
    let mut hybrid = Vec::new();
    for &ratio in ratios {
        let run = run_queries(&search, Some(ratio), queries).await?;
        hybrid.push(HybridScores {
            semantic_ratio: ratio,
            scores: run.scores,
            by_kind: run.by_kind,
            misses: run.misses,
            unjudged: run.unjudged,
        });
    }
    Ok(EvalReport {
        engine: engine.to_string(),
        keyword: keyword.scores,
        keyword_by_kind: keyword.by_kind,
        keyword_misses: keyword.misses,
        keyword_unjudged: keyword.unjudged,
        hybrid,
    })
}

/// What one mode's run of the queries scored.
struct Run {
    scores: EvalScores,
    by_kind: BTreeMap<String, EvalScores>,
    misses: Vec<EvalMiss>,
    unjudged: Vec<Unjudged>,
}

async fn run_queries<F, Fut, E>(
    search: &F,
    ratio: Option<f32>,
    queries: &[EvalQuery],
) -> Result<Run, E>
where
    F: Fn(String, Option<f32>) -> Fut,
    Fut: Future<Output = Result<Answer, E>>,
{
    let mut all = Tally::default();
    let mut kinds: BTreeMap<String, Tally> = BTreeMap::new();
    for q in queries {
        let answer = search(q.query.clone(), ratio).await?;
        let results = SearchResult::all(&answer);
        all.record(q, &results, &answer.strength);
        kinds
            .entry(q.kind.clone())
            .or_default()
            .record(q, &results, &answer.strength);
    }
    let by_kind = kinds
        .into_iter()
        .map(|(kind, tally)| (kind, tally.scores()))
        .collect();
    Ok(Run {
        scores: all.scores(),
        by_kind,
        misses: all.misses,
        unjudged: all.unjudged,
    })
}

/// What a set of queries' searches gave.
#[derive(Default)]
struct Tally {
    /// Rank of the first right answer of each answerable query.
    ranks: Vec<Option<usize>>,
    /// Best score of each query with no answer.
    no_answer: Vec<f64>,
    flags: Flags,
    misses: Vec<EvalMiss>,
    unjudged: Vec<Unjudged>,
}

impl Tally {
    fn record(
        &mut self,
        query: &EvalQuery,
        results: &[SearchResult],
        strength: &agentfinder_skills_reader::results::MatchStrength,
    ) {
        let answerable = !query.expect.is_empty();
        self.flags.count(answerable, strength);
        if answerable {
            let rank = results.iter().take(10).position(|r| query.answered_by(r));
            if rank.is_none_or(|r| r >= 3) {
                self.misses.push(EvalMiss {
                    query: query.query.clone(),
                    kind: query.kind.clone(),
                    rank: rank.map(|r| r + 1),
                    ahead: results
                        .iter()
                        .take(3)
                        .map(|r| format!("{}:{}", r.metadata.source_id, r.metadata.skill))
                        .collect(),
                });
            }
            for (at, result) in results.iter().take(3).enumerate() {
                if !query.judged_or_labelled(result) {
                    self.unjudged.push(Unjudged {
                        query: query.query.clone(),
                        key: own_key(result),
                        rank: at + 1,
                        name: result.display_name.to_string(),
                        about: result.description.to_string(),
                    });
                }
            }
            self.ranks.push(rank);
        } else {
            self.no_answer
                .push(results.first().map_or(0.0, |r| r.score));
        }
    }

    fn scores(&self) -> EvalScores {
        scores(&self.ranks, &self.no_answer, &self.flags)
    }
}

/// Scores from the 0-based rank of the first right answer of each query,
/// the best scores of queries with no answer, and the "no good match" flags.
pub fn scores(ranks: &[Option<usize>], no_answer: &[f64], flags: &Flags) -> EvalScores {
    let share =
        |(flagged, known): (usize, usize)| (known > 0).then(|| flagged as f64 / known as f64);
    let n = ranks.len().max(1) as f64;
    let hits = |k: usize| ranks.iter().filter(|r| r.is_some_and(|r| r < k)).count() as f64 / n;
    EvalScores {
        queries: ranks.len(),
        top1: hits(1),
        top3: hits(3),
        mrr: ranks
            .iter()
            .map(|r| r.map_or(0.0, |r| 1.0 / (r as f64 + 1.0)))
            .sum::<f64>()
            / n,
        no_answer_top_score: no_answer.iter().sum::<f64>() / no_answer.len().max(1) as f64,
        no_answer_flagged: share(flags.no_answer),
        answerable_flagged: share(flags.answerable),
    }
}

#[cfg(test)]
mod tests;
