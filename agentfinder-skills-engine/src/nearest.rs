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
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
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
mod tests;
