//! What both engines share about ranking (pure): the words of a query
//! neither matches on.
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
}
