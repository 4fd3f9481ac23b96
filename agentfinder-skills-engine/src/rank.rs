//! Fusing a keyword ranking and a vector ranking into one, and finding a
//! query's nearest vectors (pure).
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

/// 64-bit words of one row's sign bits.
pub fn sign_words(dimensions: usize) -> usize {
    dimensions.div_ceil(64)
}

/// Appends the sign bits of `vector` to `out`: bit `i % 64` of word
/// `i / 64` is set when component `i` is above zero. One bit a dimension is
/// 32 times less to read than the f32 components, and the Hamming distance
/// between two rows' bits ranks them close to how their cosine does.
pub fn push_sign_bits(vector: &[f32], out: &mut Vec<u64>) {
    for chunk in vector.chunks(64) {
        let mut word = 0u64;
        for (bit, x) in chunk.iter().enumerate() {
            if *x > 0.0 {
                word |= 1 << bit;
            }
        }
        out.push(word);
    }
}

/// The `k` nearest rows as [`nearest`] finds them, without reading every
/// vector: the Hamming distance of each row's sign bits (`bits`, from
/// [`push_sign_bits`]) to the query's picks `shortlist` candidates (at
/// least `k`), and only those are scored exactly from `vectors`. A row the
/// exact scan would rank in the top `k` is missed only when its bits are
/// farther than `shortlist` others' (`cargo bench -p agentfinder-skills-engine --bench shortlist`
/// measures how often).
pub fn nearest_shortlisted(
    bits: &[u64],
    vectors: &[f32],
    dimensions: usize,
    query: &[f32],
    k: usize,
    shortlist: usize,
    keep: impl Fn(u32) -> bool,
) -> Vec<(u32, f32)> {
    let words = sign_words(dimensions);
    if dimensions == 0 || query.len() != dimensions || k == 0 || words == 0 {
        return Vec::new();
    }
    let mut wanted = Vec::with_capacity(words);
    push_sign_bits(query, &mut wanted);
    // Distances fit in u16 (at most `dimensions`); u16::MAX marks a row
    // `keep` refuses.
    let excluded = u16::MAX;
    let mut distances = sign_distances(bits, &wanted);
    // The shortlist is every row under the distance at which the count of
    // closer rows reaches `shortlist` (a counting pass, no sort), then rows
    // at that distance in row order until it is full.
    let shortlist = shortlist.max(k);
    let mut histogram = vec![0usize; dimensions + 1];
    for (row, distance) in distances.iter_mut().enumerate() {
        if keep(row as u32) {
            histogram[usize::from(*distance).min(dimensions)] += 1;
        } else {
            *distance = excluded;
        }
    }
    let mut threshold = dimensions;
    let mut below = 0;
    for (distance, count) in histogram.iter().enumerate() {
        if below + count >= shortlist {
            threshold = distance;
            break;
        }
        below += count;
    }
    let mut room_at_threshold = shortlist.saturating_sub(below);
    let mut rows: Vec<u32> = Vec::with_capacity(shortlist);
    for (row, distance) in distances.iter().enumerate() {
        let distance = usize::from(*distance);
        let take = if distance < threshold {
            true
        } else if distance == threshold && room_at_threshold > 0 {
            room_at_threshold -= 1;
            true
        } else {
            false
        };
        if take {
            rows.push(row as u32);
        }
    }
    let mut best = score_rows(&rows, vectors, query);
    best.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    best.truncate(k);
    best
}

/// The Hamming distance of each row of `bits` (rows of `wanted.len()`
/// words) to `wanted`. Compiled for POPCNT too: without it `count_ones` is
/// a dozen instructions a word, and this reads every row of the index.
/// The usual widths (384, 768 and 1,024 dimensions) get a loop of fixed
/// length, unrolled; a row of a width only known at run time costs an
/// iterator step a word.
#[multiversion::multiversion(targets("x86_64+popcnt+avx2", "x86_64+popcnt"))]
fn sign_distances(bits: &[u64], wanted: &[u64]) -> Vec<u16> {
    #[inline(always)]
    fn fixed<const W: usize>(bits: &[u64], wanted: &[u64; W]) -> Vec<u16> {
        bits.chunks_exact(W)
            .map(|row| {
                let mut distance = 0u32;
                for word in 0..W {
                    distance += (row[word] ^ wanted[word]).count_ones();
                }
                distance as u16
            })
            .collect()
    }
    if let Ok(wanted) = <&[u64; 6]>::try_from(wanted) {
        return fixed(bits, wanted);
    }
    if let Ok(wanted) = <&[u64; 12]>::try_from(wanted) {
        return fixed(bits, wanted);
    }
    if let Ok(wanted) = <&[u64; 16]>::try_from(wanted) {
        return fixed(bits, wanted);
    }
    bits.chunks_exact(wanted.len().max(1))
        .map(|row| {
            row.iter()
                .zip(wanted)
                .map(|(a, b)| (a ^ b).count_ones() as u16)
                .sum()
        })
        .collect()
}

/// `(row, dot product with query)` for each of `rows` (rows of
/// `query.len()` components in `vectors`; one past the end is left out).
/// Compiled for AVX2 too, without FMA, so every lane adds the same products
/// in the same order and scores are bit for bit those of the baseline.
#[multiversion::multiversion(targets("x86_64+avx2"))]
fn score_rows(rows: &[u32], vectors: &[f32], query: &[f32]) -> Vec<(u32, f32)> {
    let dimensions = query.len();
    let mut scored = Vec::with_capacity(rows.len());
    for &row in rows {
        let at = row as usize * dimensions;
        if let Some(vector) = vectors.get(at..at + dimensions) {
            scored.push((row, dot(vector, query)));
        }
    }
    scored
}

/// Lanes of [`dot`]'s partial sums.
const LANES: usize = 16;

/// The dot product of two equally long vectors, summed in [`LANES`]
/// independent partial sums: a plain `.sum()` must add in order, which
/// keeps the compiler from using SIMD; lanes let it (measured: the scan of
/// 124,792 vectors of 384 dimensions is the bulk of a hybrid search).
/// Inlined into its callers, so it takes on their target features.
#[inline(always)]
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

    /// Unit vectors of a seeded pseudo-random walk, some close to others.
    fn unit_vectors(rows: usize, dimensions: usize) -> Vec<f32> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f32 / (1u64 << 53) as f32 - 0.5
        };
        let mut out = Vec::with_capacity(rows * dimensions);
        let mut previous = vec![0f32; dimensions];
        for row in 0..rows {
            // Every third row is a near copy of the one before it.
            let mut v: Vec<f32> = (0..dimensions)
                .map(|i| {
                    if row % 3 == 1 {
                        previous[i] + 0.1 * next()
                    } else {
                        next()
                    }
                })
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-9);
            v.iter_mut().for_each(|x| *x /= norm);
            previous.clone_from(&v);
            out.extend_from_slice(&v);
        }
        out
    }

    fn bits_of(vectors: &[f32], dimensions: usize) -> Vec<u64> {
        let mut bits = Vec::new();
        for v in vectors.chunks_exact(dimensions) {
            push_sign_bits(v, &mut bits);
        }
        bits
    }

    #[test]
    fn sign_bits_are_one_per_dimension_above_zero() {
        let mut bits = Vec::new();
        let mut v = vec![-1.0f32; 70];
        v[0] = 0.5;
        v[63] = 0.1;
        v[64] = 2.0;
        v[69] = 0.0; // zero is not above zero
        push_sign_bits(&v, &mut bits);
        assert_eq!(bits, [1 | (1 << 63), 1]);
        assert_eq!(sign_words(70), 2);
        assert_eq!(sign_words(384), 6);
    }

    #[test]
    fn the_compiled_for_the_cpu_loops_equal_the_plain_ones_bit_for_bit() {
        // Every width with a loop of its own (384, 768, 1,024 dimensions),
        // and one without (320).
        for dimensions in [384, 768, 1024, 320] {
            let vectors = unit_vectors(64, dimensions);
            let bits = bits_of(&vectors, dimensions);
            let words = sign_words(dimensions);
            let query = &vectors[3 * dimensions..4 * dimensions];
            let wanted = &bits[3 * words..4 * words];
            let plain: Vec<u16> = bits
                .chunks_exact(words)
                .map(|row| {
                    row.iter()
                        .zip(wanted)
                        .map(|(a, b)| (a ^ b).count_ones() as u16)
                        .sum()
                })
                .collect();
            assert_eq!(sign_distances(&bits, wanted), plain, "{dimensions}");
            assert_eq!(plain[3], 0);
            let rows: Vec<u32> = (0..64).rev().step_by(3).chain([64, 1000]).collect();
            let scored = score_rows(&rows, &vectors, query);
            // Rows past the end are left out; the rest scored as `dot` does.
            assert_eq!(scored.len(), rows.len() - 2);
            for (row, score) in scored {
                let at = row as usize * dimensions;
                let plain = dot(&vectors[at..at + dimensions], query);
                assert_eq!(
                    score.to_bits(),
                    plain.to_bits(),
                    "row {row} of {dimensions}"
                );
            }
        }
    }

    #[test]
    fn a_shortlist_as_long_as_the_rows_is_the_exact_scan() {
        let dimensions = 48;
        let vectors = unit_vectors(300, dimensions);
        let bits = bits_of(&vectors, dimensions);
        let query = &vectors[5 * dimensions..6 * dimensions];
        let exact = nearest(&vectors, dimensions, query, 20, |_| true);
        let full = nearest_shortlisted(&bits, &vectors, dimensions, query, 20, 300, |_| true);
        assert_eq!(exact, full);
        // The query's own row is found first by its bits, with any shortlist.
        let short = nearest_shortlisted(&bits, &vectors, dimensions, query, 5, 5, |_| true);
        assert_eq!(short[0].0, 5);
        assert_eq!(short.len(), 5);
        // Scores are the exact ones.
        for (row, score) in &short {
            let (_, exact_score) = exact
                .iter()
                .find(|(r, _)| r == row)
                .copied()
                .unwrap_or((0, *score));
            assert!((score - exact_score).abs() < 1e-6);
        }
    }

    #[test]
    fn a_shortlist_finds_most_of_the_exact_neighbours_and_obeys_keep() {
        let dimensions = 96;
        let vectors = unit_vectors(3000, dimensions);
        let bits = bits_of(&vectors, dimensions);
        let (mut found, mut wanted) = (0, 0);
        for q in (0..3000).step_by(97) {
            let query = &vectors[q * dimensions..(q + 1) * dimensions];
            let exact = nearest(&vectors, dimensions, query, 10, |_| true);
            let short = nearest_shortlisted(&bits, &vectors, dimensions, query, 10, 300, |_| true);
            wanted += exact.len();
            found += exact.iter().filter(|e| short.contains(e)).count();
        }
        // A 10% shortlist of random unit vectors keeps most exact neighbours;
        // a broken distance (or a shortlist in row order) keeps about 10%.
        assert!(found * 10 >= wanted * 7, "{found} of {wanted}");
        let query = &vectors[..dimensions];
        let odd = nearest_shortlisted(&bits, &vectors, dimensions, query, 10, 100, |r| r % 2 == 1);
        assert_eq!(odd.len(), 10);
        assert!(odd.iter().all(|(r, _)| r % 2 == 1));
        assert!(
            nearest_shortlisted(&bits, &vectors, dimensions, &query[1..], 10, 100, |_| true)
                .is_empty()
        );
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
