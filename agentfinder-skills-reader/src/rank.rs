//! One ranking rule for every engine (pure): a keyword ranking and a vector
//! ranking fused by reciprocal rank, over the words of a query that are not
//! [`STOP_WORDS`].
//!
//! Reciprocal rank fusion: an item's score is the sum over the rankings
//! that hold it of `weight / (K + rank)` (rank from 1). It needs no score
//! calibration between BM25 and cosine, and an item both rankings like
//! beats one only one of them likes. Scores are scaled so that first in
//! every ranking is 1. The embedded engine fuses document rows; the
//! Meilisearch path fuses skills from a keyword and a vector query.

use std::collections::HashMap;
use std::hash::Hash;

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

/// The damping constant of reciprocal rank fusion (the usual 60).
pub const RRF_K: f64 = 60.0;

/// Fuses rankings (best first), weighting each; returns `(item, score)`
/// best first, ties broken by the item's order.
pub fn fuse<K: Hash + Eq + Ord + Clone>(rankings: &[(&[K], f64)]) -> Vec<(K, f64)> {
    let mut scores: HashMap<K, f64> = HashMap::new();
    let best: f64 = rankings.iter().map(|(_, w)| w / (RRF_K + 1.0)).sum();
    for (ranking, weight) in rankings {
        for (rank, item) in ranking.iter().enumerate() {
            *scores.entry(item.clone()).or_default() += weight / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(K, f64)> = scores
        .into_iter()
        .map(|(item, score)| (item, if best > 0.0 { score / best } else { 0.0 }))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_both_rankings_like_wins() {
        let keyword = [7, 3, 9];
        let vector = [3, 5, 7];
        let fused = fuse(&[(&keyword[..], 1.0), (&vector[..], 1.0)]);
        let order: Vec<u32> = fused.iter().map(|f| f.0).collect();
        assert_eq!(order[..2], [3, 7], "{fused:?}");
        assert_eq!(fused.len(), 4);
        // First in both would be 1.
        let top = fuse(&[(&[1][..], 1.0), (&[1][..], 1.0)]);
        assert!((top[0].1 - 1.0).abs() < 1e-9);
        assert!(fused.iter().all(|f| f.1 > 0.0 && f.1 <= 1.0));
    }

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
    fn weights_decide_between_rankings_that_disagree() {
        let keyword = ["a".to_string(), "b".to_string()];
        let vector = ["b".to_string(), "a".to_string()];
        let by_vector = fuse(&[(&keyword[..], 0.25), (&vector[..], 0.75)]);
        assert_eq!(by_vector[0].0, "b");
        let by_keyword = fuse(&[(&keyword[..], 0.75), (&vector[..], 0.25)]);
        assert_eq!(by_keyword[0].0, "a");
        // A ranking of weight 0 changes nothing.
        let alone = fuse(&[(&keyword[..], 1.0), (&vector[..], 0.0)]);
        assert_eq!(alone[0].0, "a");
    }
}
