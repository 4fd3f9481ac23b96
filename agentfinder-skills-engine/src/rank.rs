//! Fusing a keyword ranking and a vector ranking into one (pure).
//!
//! Reciprocal rank fusion: a document's score is the sum over the rankings
//! that hold it of `1 / (K + rank)` (rank from 1). It needs no score
//! calibration between BM25 and cosine, and a document both rankings like
//! beats one only one of them likes. Scores are scaled so that first in
//! both rankings is 1.
//!
//! The engine fuses by skill ([`fuse_by_skill`]): keywords often find a
//! skill by a section that has no vector of its own (`[embed]
//! sections_per_skill`), and vectors the same skill by its card, so two
//! rows of one skill, which fusing by row kept apart, add up. Measured with
//! `eval` at ratio 0.5 over 27 skills plus AgentWorkers/skills' 18,434
//! (judged pools): top-3 0.787 -> 0.854, MRR 0.732 -> 0.755; over the 27
//! alone top-1 0.865 -> 0.899, top-3 0.989 either way.

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

/// Fuses rankings of rows as [`fuse`] does, but by skill: a skill's
/// score is the sum over the rankings of `weight / (K + rank)` at its
/// best-ranked row in each, so a skill one ranking finds by a section and
/// the other by its card adds the two. Rows come back with their skill's
/// score, a skill's rows together, best row first; rows of no skill keep
/// their own score.
pub fn fuse_by_skill(
    rankings: &[(&[u32], f64)],
    skill_of: impl Fn(u32) -> Option<u64>,
) -> Vec<(u32, f64)> {
    let rows = fuse(rankings);
    let best: f64 = rankings.iter().map(|(_, w)| w / (RRF_K + 1.0)).sum();
    let mut skill_scores: HashMap<u64, f64> = HashMap::new();
    for (ranking, weight) in rankings {
        let mut seen: std::collections::HashSet<u64> = std::collections::HashSet::new();
        for (rank, row) in ranking.iter().enumerate() {
            let Some(skill) = skill_of(*row) else {
                continue;
            };
            if seen.insert(skill) {
                *skill_scores.entry(skill).or_default() += weight / (RRF_K + rank as f64 + 1.0);
            }
        }
    }
    let mut scored: Vec<(u32, f64, f64)> = rows
        .into_iter()
        .map(|(row, own)| {
            let skill = skill_of(row)
                .and_then(|s| skill_scores.get(&s))
                .map_or(own, |s| if best > 0.0 { s / best } else { 0.0 });
            (row, skill, own)
        })
        .collect();
    scored.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then(b.2.total_cmp(&a.2))
            .then(a.0.cmp(&b.0))
    });
    scored
        .into_iter()
        .map(|(row, skill, _)| (row, skill))
        .collect()
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
    fn a_skill_found_by_a_section_and_by_its_card_adds_the_two() {
        // Rows 1 and 2 are skill 10's section and card; row 3 is skill 30,
        // first in the keyword ranking; row 4 is skill 40, second in both.
        let skill_of = |row: u32| Some(if row <= 2 { 10 } else { u64::from(row) * 10 });
        let keyword = [3, 1, 4];
        let vector = [2, 4];
        let by_row: Vec<u32> = fuse(&[(&keyword, 1.0), (&vector, 1.0)])
            .iter()
            .map(|f| f.0)
            .collect();
        assert_eq!(by_row[0], 4, "by row, the skill both rank second wins");
        let fused = fuse_by_skill(&[(&keyword, 1.0), (&vector, 1.0)], skill_of);
        let order: Vec<u32> = fused.iter().map(|f| f.0).collect();
        // Skill 10 (keyword 2nd + vector 1st) beats skill 40 (2nd and 2nd)
        // and skill 30 (keyword 1st only); its better row comes first, and
        // both its rows carry its score.
        assert_eq!(order, [2, 1, 4, 3], "{fused:?}");
        assert_eq!(fused[0].1, fused[1].1);
        assert!(fused[0].1 > fused[2].1 && fused[2].1 > fused[3].1);
        // First in both is still 1.
        let top = fuse_by_skill(&[(&[7], 1.0), (&[7], 1.0)], |_| Some(1));
        assert!((top[0].1 - 1.0).abs() < 1e-9);
    }
}
