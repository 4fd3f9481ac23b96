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

/// The `k` rows whose vectors have the highest dot product with `query`
/// (cosine, for unit vectors), best first; `keep` says which rows may be
/// returned.
pub fn nearest(
    vectors: &[f32],
    dimensions: usize,
    query: &[f32],
    k: usize,
    keep: impl Fn(u32) -> bool,
) -> Vec<(u32, f32)> {
    if dimensions == 0 || query.len() != dimensions || k == 0 {
        return Vec::new();
    }
    let mut best: Vec<(u32, f32)> = Vec::with_capacity(k + 1);
    for (row, vector) in vectors.chunks_exact(dimensions).enumerate() {
        let row = row as u32;
        if !keep(row) {
            continue;
        }
        let score = dot(vector, query);
        if best.len() == k && best.last().is_some_and(|last| score <= last.1) {
            continue;
        }
        let at = best.partition_point(|probe| probe.1 >= score);
        best.insert(at, (row, score));
        best.truncate(k);
    }
    best
}

/// Lanes of [`dot`]'s partial sums.
const LANES: usize = 16;

/// The dot product of two equally long vectors, summed in [`LANES`]
/// independent partial sums: a plain `.sum()` must add in order, which
/// keeps the compiler from using SIMD; lanes let it (measured: the scan of
/// 124,792 vectors of 384 dimensions is the bulk of a hybrid search).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut sums = [0.0f32; LANES];
    let (a_lanes, b_lanes) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = a_lanes
        .remainder()
        .iter()
        .zip(b_lanes.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a_lanes.zip(b_lanes) {
        for lane in 0..LANES {
            sums[lane] += x[lane] * y[lane];
        }
    }
    sums.iter().sum::<f32>() + tail
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

    #[test]
    fn the_dot_product_in_lanes_is_the_dot_product() {
        for n in [0, 3, 16, 17, 384, 385] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - plain).abs() < 1e-4, "{n}");
        }
    }

    #[test]
    fn nearest_keeps_the_k_best_allowed_rows() {
        let vectors = [1.0, 0.0, 0.0, 1.0, 0.7, 0.7, -1.0, 0.0];
        let found = nearest(&vectors, 2, &[1.0, 0.0], 2, |_| true);
        assert_eq!(found.iter().map(|f| f.0).collect::<Vec<_>>(), [0, 2]);
        let found = nearest(&vectors, 2, &[1.0, 0.0], 2, |row| row != 0);
        assert_eq!(found.iter().map(|f| f.0).collect::<Vec<_>>(), [2, 1]);
        assert!(nearest(&vectors, 2, &[1.0], 2, |_| true).is_empty());
    }
}
