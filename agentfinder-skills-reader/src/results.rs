//! What an engine found for a query, before anything is made of it
//! (pure): the neutral types both engines answer with (Meilisearch's page
//! and the embedded engine's ranking), which the serving side's one
//! results pipeline ranks, folds and presents.

use serde_json::Value;

/// One skill an engine found: the document of it that matched best, with
/// its score, and, when asked, its best-matching sections.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The document (the artifact's contract), as the engine holds it.
    pub document: Value,
    /// The score the results are ranked by, higher is better: the
    /// engine's, then the results pipeline's (a rule that weighs a hit,
    /// or a name that puts it first, changes it).
    pub score: f64,
    /// The score the engine ranked it by, as it gave it (the fused score
    /// of its keyword and vector rankings; Meilisearch's `_rankingScore` for
    /// its own page: `--all-sections`, a query with no word to search).
    pub ranking_score: f64,
    /// The skill's best-matching section documents, best first, with
    /// their scores (empty unless asked for).
    pub sections: Vec<(Value, f64)>,
}

impl Hit {
    /// A hit with no sections named.
    pub fn new(document: Value, score: f64) -> Self {
        Self {
            document,
            score,
            ranking_score: score,
            sections: Vec::new(),
        }
    }

    /// A text field of the document (empty when absent).
    pub fn text(&self, key: &str) -> &str {
        self.document
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

/// An engine's answer: hits best first, one per skill.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Candidates {
    /// The hits.
    pub hits: Vec<Hit>,
    /// How well the best hit matches, when vectors ranked them.
    pub strength: Option<MatchStrength>,
    /// Why the answer is not the usual one (hybrid search fell back to
    /// keywords), when it is not.
    pub fallback: Option<String>,
}

/// Below this vector similarity (Meilisearch's scale: `(1 + cosine) / 2`,
/// so 0.64 is a cosine of 0.28) the best hit is no good match: the store
/// most likely holds no skill for the query. Between it and
/// [`GOOD_MATCH_FROM`] the best hit is a good match only when the first
/// result also holds [`WORDS_HELD_FOR_A_MATCH`] of the query's words:
/// an off-topic question ("deploy my Next.js site to Vercel", 0.658) finds
/// some skill about as close as a paraphrase does, but not its words.
/// Measured with all-MiniLM-L6-v2 over the 27 skills of
/// `fixtures/eval/queries.json` (113 queries, 24 with no answer; set on
/// them) and held out on `queries-holdout.json` (42, 16 with no answer):
/// similarity alone flagged 18/24 and 10/16 of the queries with no
/// answer and none of the answerable ones; with the words held, 23/24
/// and 16/16, and 1 of 89 and 0 of 26 answerable. Another model needs
/// its own thresholds.
pub const NO_GOOD_MATCH_BELOW: f64 = 0.64;

/// At or above this similarity the best hit is a good match whatever
/// words it holds.
pub const GOOD_MATCH_FROM: f64 = 0.70;

/// The share of the query's words the first result must hold to be a
/// good match between [`NO_GOOD_MATCH_BELOW`] and [`GOOD_MATCH_FROM`].
pub const WORDS_HELD_FOR_A_MATCH: f64 = 0.5;

/// Meilisearch's similarity of a cosine: `(1 + cosine) / 2`, in 0 to 1.
pub fn similarity_of_cosine(cosine: f32) -> f64 {
    ((1.0 + f64::from(cosine)) / 2.0).clamp(0.0, 1.0)
}

/// How well the best hit matches, when the engine ranked by vectors.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MatchStrength {
    /// The highest vector similarity among the hits (0 to 1).
    pub best_similarity: f64,
    /// [`NO_GOOD_MATCH_BELOW`].
    pub threshold: f64,
    /// The share of the query's words the first result holds (0 to 1),
    /// when the results pipeline measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub words_held: Option<f64>,
    /// Whether `best_similarity` reaches the threshold; false means: no
    /// good match.
    pub good: bool,
}

impl MatchStrength {
    /// The strength of a best similarity alone.
    pub fn of(best_similarity: f64) -> Self {
        Self::judged(best_similarity, None)
    }

    /// The strength of a best similarity and the share of the query's
    /// words the first result holds (`None`: not measured).
    pub fn judged(best_similarity: f64, words_held: Option<f64>) -> Self {
        let good = best_similarity >= GOOD_MATCH_FROM
            || (best_similarity >= NO_GOOD_MATCH_BELOW
                && words_held.is_none_or(|share| share >= WORDS_HELD_FOR_A_MATCH));
        Self {
            best_similarity,
            threshold: NO_GOOD_MATCH_BELOW,
            words_held,
            good,
        }
    }

    /// The same similarity, judged with the share of the query's words
    /// the first result holds.
    pub fn with_words_held(self, share: Option<f64>) -> Self {
        Self::judged(self.best_similarity, share)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_weak_best_similarity_is_no_good_match() {
        assert!((similarity_of_cosine(0.28) - 0.64).abs() < 1e-6);
        assert_eq!(similarity_of_cosine(1.0), 1.0);
        assert_eq!(similarity_of_cosine(-1.0), 0.0);
        assert!(!MatchStrength::of(0.60).good);
        assert!(MatchStrength::of(0.70).good);
        // Between the two, the words held decide.
        assert!(MatchStrength::of(0.66).good);
        assert!(!MatchStrength::judged(0.66, Some(0.4)).good);
        assert!(MatchStrength::judged(0.66, Some(0.5)).good);
        assert!(MatchStrength::judged(0.70, Some(0.0)).good);
        assert!(!MatchStrength::judged(0.63, Some(1.0)).good);
    }
}
