//! Fusing a keyword ranking and a vector ranking into one (pure).
//!
//! Reciprocal rank fusion: a document's score is the sum over the rankings
//! that hold it of `1 / (K + rank)` (rank from 1). It needs no score
//! calibration between BM25 and cosine, and a document both rankings like
//! beats one only one of them likes. Scores are scaled so that first in
//! both rankings is 1.

use std::collections::HashMap;

/// The damping constant of reciprocal rank fusion (the usual 60).
pub const RRF_K: f64 = 60.0;

/// Fuses rankings of row numbers (best first), weighting each; returns
/// `(row, score)` best first, ties broken by the row number.
pub fn fuse(rankings: &[(&[u32], f64)]) -> Vec<(u32, f64)> {
    let mut scores: HashMap<u32, f64> = HashMap::new();
    let best: f64 = rankings.iter().map(|(_, w)| w / (RRF_K + 1.0)).sum();
    for (ranking, weight) in rankings {
        for (rank, row) in ranking.iter().enumerate() {
            *scores.entry(*row).or_default() += weight / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(u32, f64)> = scores
        .into_iter()
        .map(|(row, score)| (row, if best > 0.0 { score / best } else { 0.0 }))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_both_rankings_like_wins() {
        let keyword = [7, 3, 9];
        let vector = [3, 5, 7];
        let fused = fuse(&[(&keyword, 1.0), (&vector, 1.0)]);
        let order: Vec<u32> = fused.iter().map(|f| f.0).collect();
        assert_eq!(order[..2], [3, 7], "{fused:?}");
        assert_eq!(fused.len(), 4);
        // First in both would be 1.
        let top = fuse(&[(&[1], 1.0), (&[1], 1.0)]);
        assert!((top[0].1 - 1.0).abs() < 1e-9);
        assert!(fused.iter().all(|f| f.1 > 0.0 && f.1 <= 1.0));
    }
}
