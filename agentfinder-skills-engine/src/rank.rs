//! The vector half of the embedded engine's ranking (pure): the nearest
//! rows to a query vector. The fusion with the keyword half is the reader's
//! [`agentfinder_skills_reader::rank::fuse`], the same rule the Meilisearch
//! path applies.

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
        let score: f32 = vector.iter().zip(query).map(|(a, b)| a * b).sum();
        if best.len() == k && best.last().is_some_and(|last| score <= last.1) {
            continue;
        }
        let at = best.partition_point(|probe| probe.1 >= score);
        best.insert(at, (row, score));
        best.truncate(k);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

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
