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
    /// match" ([`agentfinder_skills_reader::results::NO_GOOD_MATCH_BELOW`]; higher is better);
    /// `None` when no search said how well it matched (keywords only).
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
    /// Answerable queries flagged, of those whose strength was known.
    pub answerable: (usize, usize),
    /// Queries with no answer flagged, of those whose strength was known.
    pub no_answer: (usize, usize),
}

impl Flags {
    fn count(
        &mut self,
        answerable: bool,
        strength: Option<agentfinder_skills_reader::results::MatchStrength>,
    ) {
        let Some(strength) = strength else { return };
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
        all.record(q, &results, answer.strength);
        kinds
            .entry(q.kind.clone())
            .or_default()
            .record(q, &results, answer.strength);
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
        strength: Option<agentfinder_skills_reader::results::MatchStrength>,
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
                        name: result.display_name.clone(),
                        about: result.description.clone(),
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
mod tests {
    use super::*;

    fn hybrid(ratio: f32, mrr: f64, top1: f64) -> HybridScores {
        HybridScores {
            semantic_ratio: ratio,
            scores: EvalScores {
                mrr,
                top1,
                ..Default::default()
            },
            by_kind: BTreeMap::new(),
            misses: Vec::new(),
            unjudged: Vec::new(),
        }
    }

    #[test]
    fn the_best_ratio_ranks_best_and_ties_go_to_the_lower_ratio() {
        let report = |hybrid| EvalReport {
            engine: "test".into(),
            keyword: EvalScores::default(),
            keyword_by_kind: BTreeMap::new(),
            keyword_misses: Vec::new(),
            keyword_unjudged: Vec::new(),
            hybrid,
        };
        let r = report(vec![
            hybrid(0.25, 0.7, 0.6),
            hybrid(0.5, 0.9, 0.8),
            hybrid(0.75, 0.8, 0.9),
        ]);
        assert_eq!(r.best().unwrap().semantic_ratio, 0.5);
        let r = report(vec![
            hybrid(0.75, 0.9, 0.8),
            hybrid(0.5, 0.9, 0.8),
            hybrid(1.0, 0.9, 0.7),
        ]);
        assert_eq!(r.best().unwrap().semantic_ratio, 0.5);
        let r = report(vec![hybrid(0.5, 0.9, 0.7), hybrid(0.75, 0.9, 0.8)]);
        assert_eq!(r.best().unwrap().semantic_ratio, 0.75);
        assert!(report(Vec::new()).best().is_none());
    }

    #[test]
    fn with_answer_sources_a_copy_elsewhere_is_not_an_answer() {
        let result = |source: &str, skill: &str| -> SearchResult {
            serde_json::from_value(serde_json::json!({
                "identifier": "x", "displayName": skill, "description": "", "mediaType": "m",
                "url": "", "score": 1.0,
                "metadata": {"source": "o/r", "sourceType": "embedded", "skill": skill, "path": "p",
                             "skillKey": "k", "sourceId": source, "commit": "c",
                             "rankingScore": 1.0, "kind": "skill"}
            }))
            .unwrap()
        };
        let mut query = EvalQuery {
            query: "merge pdfs".into(),
            expect: vec!["pdf".into()],
            kind: "plain".into(),
            sources: Vec::new(),
            judged: BTreeMap::new(),
        };
        assert!(query.answered_by(&result("copies", "pdf")));
        assert!(!query.answered_by(&result("anthropics", "docx")));
        query.sources = vec!["anthropics".into()];
        assert!(!query.answered_by(&result("copies", "pdf")));
        assert!(query.answered_by(&result("anthropics", "pdf")));
    }

    #[test]
    fn a_query_answered_below_the_first_three_is_a_miss_with_what_ranked_first() {
        let response = |skills: &[&str]| -> Vec<SearchResult> {
            skills
                .iter()
                .map(|skill| {
                    serde_json::from_value(serde_json::json!({
                        "identifier": skill, "displayName": skill, "description": "",
                        "mediaType": "m", "url": "", "score": 1.0,
                        "metadata": {"source": "o/r", "sourceType": "embedded", "skill": skill,
                                     "path": "p", "skillKey": skill, "sourceId": "s",
                                     "commit": "c", "rankingScore": 1.0, "kind": "skill"}
                    }))
                    .unwrap()
                })
                .collect()
        };
        let query = |text: &str| EvalQuery {
            query: text.into(),
            expect: vec!["pdf".into()],
            kind: "plain".into(),
            sources: Vec::new(),
            judged: BTreeMap::new(),
        };
        let mut tally = Tally::default();
        tally.record(&query("third"), &response(&["a", "b", "pdf", "c"]), None);
        tally.record(&query("fourth"), &response(&["a", "b", "c", "pdf"]), None);
        tally.record(&query("absent"), &response(&["a", "b"]), None);
        let misses: Vec<(&str, Option<usize>)> = tally
            .misses
            .iter()
            .map(|m| (m.query.as_str(), m.rank))
            .collect();
        assert_eq!(misses, [("fourth", Some(4)), ("absent", None)]);
        assert_eq!(tally.misses[0].ahead, ["s:a", "s:b", "s:c"]);
        assert_eq!(tally.misses[1].ahead, ["s:a", "s:b"]);
    }

    fn located(source: &str, path: &str, also_at: serde_json::Value) -> SearchResult {
        let skill = path.rsplit('/').nth(1).unwrap_or(path);
        serde_json::from_value(serde_json::json!({
            "identifier": path, "displayName": skill, "description": "about", "mediaType": "m",
            "url": "", "score": 1.0,
            "metadata": {"source": "o/r", "sourceType": "embedded", "skill": skill, "path": path,
                         "skillKey": path, "sourceId": source, "commit": "c",
                         "rankingScore": 1.0, "kind": "skill", "alsoAt": also_at}
        }))
        .unwrap()
    }

    #[test]
    fn a_result_judged_right_answers_and_one_judged_wrong_does_not() {
        let mut query = EvalQuery {
            query: "build a pitch deck".into(),
            expect: vec!["pptx".into()],
            kind: "plain".into(),
            sources: vec!["anthropics".into()],
            judged: BTreeMap::from([
                ("aw:skills/pitch-deck/SKILL.md".to_string(), true),
                ("aw:skills/gif/SKILL.md".to_string(), false),
            ]),
        };
        let none = serde_json::json!([]);
        assert!(query.answered_by(&located("aw", "skills/pitch-deck/SKILL.md", none.clone())));
        assert!(!query.answered_by(&located("aw", "skills/gif/SKILL.md", none.clone())));
        assert!(!query.answered_by(&located("aw", "skills/pptx/SKILL.md", none.clone())));
        assert!(query.answered_by(&located("anthropics", "skills/pptx/SKILL.md", none.clone())));
        // A copy shown for the original, which is among its other places,
        // answers as the original would; judged ones likewise.
        let original =
            serde_json::json!([{"source_id": "anthropics", "path": "skills/pptx/SKILL.md"}]);
        assert!(query.answered_by(&located("aw", "skills/pptx/SKILL.md", original)));
        let judged = serde_json::json!([{"source_id": "aw", "path": "skills/pitch-deck/SKILL.md"}]);
        assert!(query.answered_by(&located("x", "deck/SKILL.md", judged)));
        query.judged.clear();
        assert!(!query.answered_by(&located("aw", "skills/pitch-deck/SKILL.md", none)));
    }

    #[test]
    fn the_first_three_that_nothing_judges_are_the_pool_to_judge_next() {
        let query = EvalQuery {
            query: "build a pitch deck".into(),
            expect: vec!["pptx".into()],
            kind: "plain".into(),
            sources: vec!["anthropics".into()],
            judged: BTreeMap::from([("aw:a/SKILL.md".to_string(), false)]),
        };
        let none = || serde_json::json!([]);
        let results = vec![
            located("aw", "a/SKILL.md", none()),
            located("aw", "b/SKILL.md", none()),
            located("anthropics", "skills/pptx/SKILL.md", none()),
            located("aw", "d/SKILL.md", none()),
        ];
        let mut tally = Tally::default();
        tally.record(&query, &results, None);
        let pool: Vec<(&str, usize)> = tally
            .unjudged
            .iter()
            .map(|u| (u.key.as_str(), u.rank))
            .collect();
        assert_eq!(pool, [("aw:b/SKILL.md", 2)]);
        assert_eq!(tally.ranks, [Some(2)]);
    }

    #[test]
    fn hit_rates_and_reciprocal_rank() {
        let flags = Flags {
            answerable: (1, 4),
            no_answer: (2, 2),
        };
        let s = scores(&[Some(0), Some(2), None, Some(1)], &[0.2, 0.4], &flags);
        assert_eq!(
            (s.answerable_flagged, s.no_answer_flagged),
            (Some(0.25), Some(1.0))
        );
        assert_eq!(scores(&[], &[], &Flags::default()).no_answer_flagged, None);
        assert_eq!(s.queries, 4);
        assert_eq!(s.top1, 0.25);
        assert_eq!(s.top3, 0.75);
        assert!((s.mrr - (1.0 + 1.0 / 3.0 + 0.0 + 0.5) / 4.0).abs() < 1e-12);
        assert!((s.no_answer_top_score - 0.3).abs() < 1e-12);
    }
}
