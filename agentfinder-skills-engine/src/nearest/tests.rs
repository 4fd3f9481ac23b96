//! Tests of the module beside this file.

use super::*;

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

/// The three forms of `exact`, as the local index writes them.
struct Encoded {
    dimensions: usize,
    exact: Vec<f32>,
    codes: Vec<i8>,
    scales: Vec<f32>,
    signs: Vec<u64>,
}

impl Encoded {
    fn new(exact: Vec<f32>, dimensions: usize) -> Self {
        let (mut codes, mut scales, mut signs) = (Vec::new(), Vec::new(), Vec::new());
        for v in exact.chunks_exact(dimensions) {
            scales.push(push_codes(v, &mut codes));
            push_sign_bits(v, &mut signs);
        }
        Self {
            dimensions,
            exact,
            codes,
            scales,
            signs,
        }
    }

    fn view(&self) -> Vectors<'_> {
        Vectors {
            dimensions: self.dimensions,
            exact: &self.exact,
            codes: &self.codes,
            scales: &self.scales,
            signs: &self.signs,
        }
    }

    fn row(&self, row: usize) -> &[f32] {
        &self.exact[row * self.dimensions..(row + 1) * self.dimensions]
    }

    /// With every `step`th row as a query, how many of the exact scan's
    /// top 10 rows a search with `shortlist` finds, and of how many.
    fn top_10_found(&self, shortlist: usize, step: usize) -> (usize, usize) {
        let rows = self.exact.len() / self.dimensions;
        let (mut found, mut wanted) = (0, 0);
        for q in (0..rows).step_by(step) {
            let query = self.row(q);
            let exact = nearest(&self.exact, self.dimensions, query, 10, |_| true);
            let short = self.view().nearest_shortlisted(query, 10, shortlist, None);
            wanted += exact.len();
            found += exact.iter().filter(|e| short.contains(e)).count();
        }
        (found, wanted)
    }
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
fn codes_are_the_components_over_a_scale_that_codes_the_largest_127() {
    let mut codes = Vec::new();
    let scale = push_codes(&[0.5, -0.25, 0.0, 0.002, -0.5], &mut codes);
    assert_eq!(codes, [127, -64, 0, 1, -127]);
    assert!((scale - 0.5 / 127.0).abs() < 1e-9);
    // A zero vector codes zeros; a NaN or infinite component codes 0
    // and doesn't set the scale.
    codes.clear();
    assert_eq!(push_codes(&[0.0, 0.0], &mut codes), 0.0);
    assert_eq!(codes, [0, 0]);
    codes.clear();
    let scale = push_codes(&[f32::NAN, 1.0, f32::INFINITY], &mut codes);
    assert_eq!((codes[0], codes[1]), (0, 127));
    assert!((scale - 1.0 / 127.0).abs() < 1e-9);
    // Every component is within half a step of its code.
    let v = unit_vectors(1, 384);
    codes.clear();
    let scale = push_codes(&v, &mut codes);
    for (x, code) in v.iter().zip(&codes) {
        assert!((x - f32::from(*code) * scale).abs() <= scale / 2.0 + 1e-7);
    }
}

#[test]
fn the_compiled_for_the_cpu_loops_equal_the_plain_ones_bit_for_bit() {
    // Every width with a loop of its own (384, 768, 1,024 dimensions),
    // and one without (320).
    for dimensions in [384, 768, 1024, 320] {
        let encoded = Encoded::new(unit_vectors(64, dimensions), dimensions);
        let bits = &encoded.signs;
        let words = sign_words(dimensions);
        let query = encoded.row(3);
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
        let (mut distances, mut histogram) = (Vec::new(), vec![0u32; dimensions + 1]);
        sign_distances(bits, wanted, &mut distances, &mut histogram);
        assert_eq!(distances, plain, "{dimensions}");
        assert_eq!(plain[3], 0);
        for (distance, count) in histogram.iter().enumerate() {
            let counted = plain
                .iter()
                .filter(|d| usize::from(**d) == distance)
                .count();
            assert_eq!(*count as usize, counted, "distance {distance}");
        }
        let rows: Vec<u32> = (0..64).rev().step_by(3).chain([64, 1000]).collect();
        let scored = score_rows(&rows, &encoded.exact, query);
        // Rows past the end are left out; the rest scored as `dot` does.
        assert_eq!(scored.len(), rows.len() - 2);
        for (row, score) in scored {
            let plain = dot(encoded.row(row as usize), query);
            assert_eq!(
                score.to_bits(),
                plain.to_bits(),
                "row {row} of {dimensions}"
            );
        }
        let query_codes = &encoded.codes[3 * dimensions..4 * dimensions];
        let coded = score_codes(&rows, &encoded.codes, &encoded.scales, query_codes);
        assert_eq!(coded.len(), rows.len() - 2);
        for (row, score) in coded {
            let at = row as usize * dimensions;
            let sum: i32 = encoded.codes[at..at + dimensions]
                .iter()
                .zip(query_codes)
                .map(|(a, b)| i32::from(*a) * i32::from(*b))
                .sum();
            let plain = sum as f32 * encoded.scales[row as usize];
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
    let encoded = Encoded::new(unit_vectors(300, dimensions), dimensions);
    let vectors = encoded.view();
    let query = encoded.row(5);
    let exact = nearest(&encoded.exact, dimensions, query, 20, |_| true);
    let full = vectors.nearest_shortlisted(query, 20, 300, None);
    assert_eq!(exact, full);
    // The query's own row is found first by its bits, with any shortlist.
    let short = vectors.nearest_shortlisted(query, 5, 5, None);
    assert_eq!(short[0].0, 5);
    assert_eq!(short.len(), 5);
    // Scores are the exact ones.
    for (row, score) in &short {
        assert_eq!(
            score.to_bits(),
            dot(encoded.row(*row as usize), query).to_bits()
        );
    }
}

#[test]
fn a_shortlist_finds_most_of_the_exact_neighbours_and_obeys_keep() {
    let dimensions = 96;
    let encoded = Encoded::new(unit_vectors(3000, dimensions), dimensions);
    let vectors = encoded.view();
    let (found, wanted) = encoded.top_10_found(300, 97);
    // A 10% shortlist of random unit vectors keeps most exact neighbours;
    // a broken distance (or a shortlist in row order) keeps about 10%.
    assert!(found * 10 >= wanted * 7, "{found} of {wanted}");
    let query = encoded.row(0);
    let odd = |row: u32| row % 2 == 1;
    let found = vectors.nearest_shortlisted(query, 10, 100, Some(&odd));
    assert_eq!(found.len(), 10);
    assert!(found.iter().all(|(r, _)| r % 2 == 1));
    // Refusing every row returns none; a query of another width none.
    assert!(vectors
        .nearest_shortlisted(query, 10, 100, Some(&|_| false))
        .is_empty());
    assert!(vectors
        .nearest_shortlisted(&query[1..], 10, 100, None)
        .is_empty());
}

#[test]
fn rows_without_a_vector_are_never_returned() {
    let dimensions = 64;
    let mut exact = unit_vectors(40, dimensions);
    // Rows 10..40 have no vector: zeros, as the local index writes them.
    exact[10 * dimensions..].iter_mut().for_each(|x| *x = 0.0);
    let encoded = Encoded::new(exact, dimensions);
    let found = encoded
        .view()
        .nearest_shortlisted(encoded.row(0), 20, 40, None);
    // Ten rows have a vector, so ten are found, however many are asked.
    assert_eq!(found.len(), 10, "{found:?}");
    assert!(found.iter().all(|(row, _)| *row < 10), "{found:?}");
}

#[test]
fn codes_rank_the_shortlist_as_the_exact_scores_do() {
    // The shortlist is every row, so only the codes can lose a row:
    // they must keep the exact top 10 within the best 20 they rank.
    let dimensions = 384;
    let encoded = Encoded::new(unit_vectors(2000, dimensions), dimensions);
    let (found, wanted) = encoded.top_10_found(2000, 101);
    assert!(found * 100 >= wanted * 99, "{found} of {wanted}");
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
