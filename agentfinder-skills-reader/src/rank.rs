//! What both engines share about ranking (pure): the words of a query
//! neither matches on, and when a best match is too weak to be an answer.
//!
//! Measured through the real pipeline on a real Meilisearch 1.50 over the
//! 89 answerable queries of `fixtures/eval/queries.json`, the engines rank
//! best with different fusions of their keyword and vector halves, so each
//! keeps its own: Meilisearch's hybrid search blends the two by score
//! (top-3 0.955 at ratio 0.5), where a reciprocal-rank fusion of a keyword
//! and a vector query in the reader scored 0.854, because its keyword half
//! counts matched words and ranks paraphrases poorly (0.809 alone); the
//! embedded engine fuses BM25 and vectors by rank (0.989 at 0.5).

/// Words that carry no meaning of their own in the sentences agents write
/// ("a tiny animation to use in our team chat"): neither engine matches
/// on them. Meilisearch gets them as the index's `stopWords` (without
/// them its keyword ranking, which counts matched words rather than
/// weighting rare ones, favours whatever skill repeats "a", "to" and
/// "our"); the embedded engine drops them from the query.
pub const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "i", "in", "into", "is", "it",
    "its", "me", "my", "of", "on", "onto", "or", "our", "that", "the", "these", "this", "those",
    "to", "us", "using", "via", "we", "with", "you", "your",
];

/// Whether `word` is one of the [`STOP_WORDS`] (in any case).
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS
        .iter()
        .any(|stop| stop.eq_ignore_ascii_case(word))
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
    fn stop_words_are_matched_in_any_case_and_whole() {
        assert!(is_stop_word("The") && is_stop_word("our"));
        assert!(!is_stop_word("theme") && !is_stop_word("pdf"));
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, STOP_WORDS, "sorted, once each");
    }

    #[test]
    fn a_weak_best_similarity_is_no_good_match() {
        assert!((similarity_of_cosine(0.28) - 0.64).abs() < 1e-6);
        assert_eq!(similarity_of_cosine(1.0), 1.0);
        assert_eq!(similarity_of_cosine(-1.0), 0.0);
        assert!(!MatchStrength::of(0.60).good);
        assert!(MatchStrength::of(0.70).good);
    }
}
