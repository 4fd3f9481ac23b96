//! A query's nearest vectors (pure).
//!
//! [`nearest`] scans every vector, exactly. A search does less: the
//! Hamming distance of each row's sign bits to the query's (48 bytes a row
//! at 384 dimensions) picks a shortlist, the shortlist is ranked by 8-bit
//! codes of the vectors (a quarter of their f32 bytes), and only the best
//! of those are scored exactly from the f32 vectors
//! ([`Vectors::nearest_shortlisted`]). Measured on 124,792 rows of 384
//! dimensions: the exact scan 25 ms a query, the f32 shortlist 2.35 ms,
//! this one ~1 ms (`cargo bench -p agentfinder-skills-engine --bench shortlist`).

/// One artifact's vectors, in the three forms a search reads, row `r`
/// of each at `r * width`.
#[derive(Debug, Clone, Copy)]
pub struct Vectors<'a> {
    /// Components a row.
    pub dimensions: usize,
    /// The vectors themselves, `dimensions` f32 a row.
    pub exact: &'a [f32],
    /// `dimensions` 8-bit codes a row ([`push_codes`]).
    pub codes: &'a [i8],
    /// Each row's code scale ([`push_codes`]'s return).
    pub scales: &'a [f32],
    /// [`sign_words`] words of sign bits a row ([`push_sign_bits`]).
    pub signs: &'a [u64],
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

/// Appends 8-bit codes of `vector` to `out` and returns their scale:
/// component `i` is about `code[i] * scale`, with the largest component
/// (in magnitude) coded ±127. Dot products of codes rank rows as the f32
/// vectors do, up to rounding: close enough to choose which rows to score
/// exactly, in a quarter of the bytes.
pub fn push_codes(vector: &[f32], out: &mut Vec<i8>) -> f32 {
    let largest = vector
        .iter()
        .filter(|x| x.is_finite())
        .fold(0f32, |m, x| m.max(x.abs()));
    if largest == 0.0 {
        out.extend(std::iter::repeat_n(0, vector.len()));
        return 0.0;
    }
    let scale = largest / 127.0;
    // `as` saturates (and makes NaN 0), so a code is always in range.
    out.extend(vector.iter().map(|x| (x / scale).round() as i8));
    scale
}

/// Rows code-ranked for each row a search returns: the shortlist's best
/// `RESCORED * k` by their codes are scored exactly, and the best `k` of
/// those returned (`cargo bench … --bench shortlist` reports what is lost).
pub const RESCORED: usize = 2;

impl Vectors<'_> {
    /// The `k` nearest rows as [`nearest`] finds them, without reading
    /// every vector: the Hamming distance of each row's sign bits to the
    /// query's picks `shortlist` candidates (at least `k`), their codes
    /// rank them, and the best [`RESCORED`]` * k` are scored exactly. Rows
    /// `keep` refuses (when given) are never returned, nor rows without a
    /// vector (all zeros: a document the build left unembedded, whose
    /// cosine says nothing of it). A row the exact
    /// scan would rank in the top `k` is missed only when its bits are
    /// farther than `shortlist` others', or its code score is below
    /// `RESCORED * k` others'. Scores are exact.
    pub fn nearest_shortlisted(
        &self,
        query: &[f32],
        k: usize,
        shortlist: usize,
        keep: Option<&dyn Fn(u32) -> bool>,
    ) -> Vec<(u32, f32)> {
        let dimensions = self.dimensions;
        let words = sign_words(dimensions);
        if dimensions == 0 || query.len() != dimensions || k == 0 {
            return Vec::new();
        }
        let rows = self.signs.len() / words;
        if self.exact.len() < rows * dimensions
            || self.codes.len() < rows * dimensions
            || self.scales.len() < rows
        {
            return Vec::new();
        }
        let mut wanted = Vec::with_capacity(words);
        push_sign_bits(query, &mut wanted);
        let shortlisted =
            shortlist_by_signs(self.signs, &wanted, dimensions, shortlist.max(k), keep);

        let mut query_codes = Vec::with_capacity(dimensions);
        push_codes(query, &mut query_codes);
        let mut coded = score_codes(&shortlisted, self.codes, self.scales, &query_codes);
        // A zero vector's code scale is 0 ([`push_codes`]).
        coded.retain(|&(row, _)| self.scales.get(row as usize).is_some_and(|&s| s > 0.0));
        let rescored = k.saturating_mul(RESCORED);
        if coded.len() > rescored {
            coded.select_nth_unstable_by(rescored - 1, |a, b| b.1.total_cmp(&a.1));
            coded.truncate(rescored);
        }
        // In row order, so the exact vectors are read front to back.
        let mut best_rows: Vec<u32> = coded.into_iter().map(|(row, _)| row).collect();
        best_rows.sort_unstable();
        let mut best = score_rows(&best_rows, self.exact, query);
        best.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        best.truncate(k);
        best
    }
}

/// The `shortlist` rows whose sign bits are closest to `wanted`, in row
/// order: every row under the distance at which the count of closer rows
/// reaches `shortlist` (a counting pass, no sort), then rows at that
/// distance in row order until it is full.
fn shortlist_by_signs(
    signs: &[u64],
    wanted: &[u64],
    dimensions: usize,
    shortlist: usize,
    keep: Option<&dyn Fn(u32) -> bool>,
) -> Vec<u32> {
    // Distances are at most `dimensions` (a u16); u16::MAX marks a row
    // `keep` refuses.
    let excluded = u16::MAX;
    let mut histogram = vec![0u32; dimensions + 1];
    let mut distances = Vec::with_capacity(signs.len() / wanted.len().max(1));
    sign_distances(signs, wanted, &mut distances, &mut histogram);
    if let Some(keep) = keep {
        for (row, distance) in distances.iter_mut().enumerate() {
            if !keep(row as u32) {
                if let Some(count) = histogram.get_mut(usize::from(*distance)) {
                    *count = count.saturating_sub(1);
                }
                *distance = excluded;
            }
        }
    }
    let mut threshold = dimensions;
    let mut below = 0usize;
    for (distance, count) in histogram.iter().enumerate() {
        let count = *count as usize;
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
    rows
}

/// Appends the Hamming distance of each row of `bits` (rows of
/// `wanted.len()` words) to `wanted` to `out`, and counts each distance
/// in `histogram` (at least `64 * wanted.len() + 1` long). Compiled for
/// POPCNT too: without it `count_ones` is a dozen instructions a word.
/// The usual widths (384, 768 and 1,024 dimensions) get a loop of fixed
/// length. Scalar POPCNT beats what LLVM vectorizes for AVX2 here
/// (measured on 124,792 rows of 6 words: 0.55 ms against 1.03 ms).
#[multiversion::multiversion(targets("x86_64+popcnt"))]
fn sign_distances(bits: &[u64], wanted: &[u64], out: &mut Vec<u16>, histogram: &mut [u32]) {
    #[inline(always)]
    fn fixed<const W: usize>(
        bits: &[u64],
        wanted: &[u64; W],
        out: &mut Vec<u16>,
        histogram: &mut [u32],
    ) {
        for row in bits.chunks_exact(W) {
            let mut distance = 0u32;
            for word in 0..W {
                distance += (row[word] ^ wanted[word]).count_ones();
            }
            if let Some(count) = histogram.get_mut(distance as usize) {
                *count += 1;
            }
            out.push(distance as u16);
        }
    }
    if let Ok(wanted) = <&[u64; 6]>::try_from(wanted) {
        return fixed(bits, wanted, out, histogram);
    }
    if let Ok(wanted) = <&[u64; 12]>::try_from(wanted) {
        return fixed(bits, wanted, out, histogram);
    }
    if let Ok(wanted) = <&[u64; 16]>::try_from(wanted) {
        return fixed(bits, wanted, out, histogram);
    }
    for row in bits.chunks_exact(wanted.len().max(1)) {
        let distance: u32 = row
            .iter()
            .zip(wanted)
            .map(|(a, b)| (a ^ b).count_ones())
            .sum();
        if let Some(count) = histogram.get_mut(distance as usize) {
            *count += 1;
        }
        out.push(distance as u16);
    }
}

/// How many rows ahead of the one being scored the scoring loops ask the
/// CPU to fetch: the shortlist's rows are far apart, and waiting for each
/// from memory was most of their cost.
const PREFETCH_AHEAD: usize = 4;

/// Asks the CPU to start loading `slice[at..at + len]` into its cache (a
/// hint: nothing is read, and a range out of bounds is ignored).
#[inline(always)]
fn prefetch<T>(slice: &[T], at: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(part) = slice.get(at..at + len) {
        let start = part.as_ptr().cast::<i8>();
        for offset in (0..std::mem::size_of_val(part)).step_by(64) {
            // SAFETY: a prefetch only hints; it cannot fault, and the
            // address is inside `slice`.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    start.wrapping_add(offset),
                )
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, at, len);
}

/// `(row, approximate dot product with the query)` for each of `rows`,
/// from the rows' codes and scales and the query's codes (its own scale
/// left out: it scales every row alike). Integer sums, so every target
/// computes the same; compiled for AVX2 too, where they are 16 lanes wide.
/// Rows past the end are left out.
#[multiversion::multiversion(targets("x86_64+avx2"))]
fn score_codes(rows: &[u32], codes: &[i8], scales: &[f32], query: &[i8]) -> Vec<(u32, f32)> {
    let dimensions = query.len();
    let mut scored = Vec::with_capacity(rows.len());
    for (i, &row) in rows.iter().enumerate() {
        if let Some(&ahead) = rows.get(i + PREFETCH_AHEAD) {
            prefetch(codes, ahead as usize * dimensions, dimensions);
        }
        let at = row as usize * dimensions;
        let (Some(code), Some(scale)) = (codes.get(at..at + dimensions), scales.get(row as usize))
        else {
            continue;
        };
        let sum: i32 = code
            .iter()
            .zip(query)
            .map(|(a, b)| i32::from(*a) * i32::from(*b))
            .sum();
        scored.push((row, sum as f32 * scale));
    }
    scored
}

/// `(row, dot product with query)` for each of `rows` (rows of
/// `query.len()` components in `vectors`; one past the end is left out).
/// Compiled for AVX2 too, without FMA, so every lane adds the same products
/// in the same order and scores are bit for bit those of the baseline.
#[multiversion::multiversion(targets("x86_64+avx2"))]
fn score_rows(rows: &[u32], vectors: &[f32], query: &[f32]) -> Vec<(u32, f32)> {
    let dimensions = query.len();
    let mut scored = Vec::with_capacity(rows.len());
    for (i, &row) in rows.iter().enumerate() {
        if let Some(&ahead) = rows.get(i + PREFETCH_AHEAD) {
            prefetch(vectors, ahead as usize * dimensions, dimensions);
        }
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
}
