//! Search quality against a running Meilisearch: for a set of queries with
//! the skills that should answer them, top-1 and top-3 hit rates and mean
//! reciprocal rank, keyword search against hybrid search.

use serde::{Deserialize, Serialize};

use super::search::{search_detailed, SearchOptions};
use super::{MeiliConfig, MeiliError};

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
}

/// Keyword against hybrid.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    /// Keyword search only.
    pub keyword: EvalScores,
    /// Hybrid search.
    pub hybrid: EvalScores,
    /// Semantic ratio used for hybrid search.
    pub semantic_ratio: f32,
}

/// Runs every query both ways; hits are one per skill, 10 deep.
pub async fn evaluate(
    config: &MeiliConfig,
    index: &str,
    embedder: &str,
    semantic_ratio: f32,
    queries: &[EvalQuery],
) -> Result<EvalReport, MeiliError> {
    let mut modes = Vec::new();
    for hybrid in [None, Some((embedder.to_string(), semantic_ratio))] {
        let options = SearchOptions {
            index: index.to_string(),
            limit: 10,
            filter: None,
            all_sections: false,
            hybrid,
        };
        let mut ranks = Vec::new();
        let mut no_answer = Vec::new();
        for q in queries {
            let results = search_detailed(config, &q.query, &options).await?.results;
            if q.expect.is_empty() {
                no_answer.push(results.first().map_or(0.0, |r| r.score));
            } else {
                ranks.push(
                    results
                        .iter()
                        .position(|r| q.expect.contains(&r.metadata.skill)),
                );
            }
        }
        modes.push(scores(&ranks, &no_answer));
    }
    Ok(EvalReport {
        keyword: modes[0],
        hybrid: modes[1],
        semantic_ratio,
    })
}

/// Scores from the 0-based rank of the first right answer of each query.
pub fn scores(ranks: &[Option<usize>], no_answer: &[f64]) -> EvalScores {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hit_rates_and_reciprocal_rank() {
        let s = scores(&[Some(0), Some(2), None, Some(1)], &[0.2, 0.4]);
        assert_eq!(s.queries, 4);
        assert_eq!(s.top1, 0.25);
        assert_eq!(s.top3, 0.75);
        assert!((s.mrr - (1.0 + 1.0 / 3.0 + 0.0 + 0.5) / 4.0).abs() < 1e-12);
        assert!((s.no_answer_top_score - 0.3).abs() < 1e-12);
    }
}
