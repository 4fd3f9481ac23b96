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
    /// The engine's own score (Meilisearch's `_rankingScore`, the embedded
    /// engine's fused score), as it gave it.
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
/// most likely holds no skill for the query. Measured with
/// all-MiniLM-L6-v2 over `fixtures/eval/queries.json` (27 skills): every
/// one of the 89 answerable queries had a best similarity of 0.649 or more,
/// and 7 of the 8 with no answer less than 0.64 (the eighth, "fine-tune a
/// speech recognition model on GPUs", 0.668). Another model needs its own
/// threshold.
pub const NO_GOOD_MATCH_BELOW: f64 = 0.64;

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
    /// Whether `best_similarity` reaches the threshold; false means: no
    /// good match.
    pub good: bool,
}

impl MatchStrength {
    /// The strength of a best similarity.
    pub fn of(best_similarity: f64) -> Self {
        Self {
            best_similarity,
            threshold: NO_GOOD_MATCH_BELOW,
            good: best_similarity >= NO_GOOD_MATCH_BELOW,
        }
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
    }
}
