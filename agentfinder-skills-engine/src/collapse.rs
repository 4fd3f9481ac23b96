//! From a ranking of documents to results (pure): one result per skill,
//! and one per set of copies of a skill.
//!
//! Large collections hold many copies of a skill: AgentWorkers/skills has
//! 2,260 of its 18,434 skills in sets that share a name and a description,
//! up to 60 of one. Listed one by one they fill the first results with one
//! answer. Skills that present themselves alike (the same *card*: name and
//! description, compared without case or spacing) are one result here, at
//! the rank of the best of them, with the others' locations listed; the
//! one shown is the oldest copy, the likeliest original
//! ([`agentfinder_skills_reader::copies::oldest`]).
//!
//! A query that is a skill's very name finds that skill first
//! ([`name_first`]): users who type `pdf` or `docx-fill` want the skill of
//! that name, not one that mentions it more often.

use std::collections::{HashMap, HashSet};

/// The rows of one skill among the results: its best row and score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Member {
    /// Digest of its skill key.
    pub skill: u64,
    /// Its best-ranked row.
    pub row: u32,
    /// That row's fused score.
    pub score: f64,
}

/// One result: the skills that share a card, best first.
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    /// The skills, in rank order.
    pub members: Vec<Member>,
}

impl Slot {
    /// The slot's score: its best member's.
    pub fn score(&self) -> f64 {
        self.members.first().map_or(0.0, |m| m.score)
    }
}

/// Groups `fused` (rows best first, with scores) into at most `limit`
/// results: each skill once (at its best row), and skills of one card in
/// one result. `skill_of` and `card_of` give a row's skill and card
/// digests; a row with no skill is skipped, and a row with no card is a
/// card of its own skill. Members of a result are looked for all down the
/// ranking, so a copy ranked far below the first still joins it.
pub fn group(
    fused: &[(u32, f64)],
    limit: usize,
    skill_of: impl Fn(u32) -> Option<u64>,
    card_of: impl Fn(u32) -> Option<u64>,
) -> Vec<Slot> {
    let mut slots: Vec<Slot> = Vec::new();
    let mut slot_of_card: HashMap<u64, usize> = HashMap::new();
    let mut seen_skills: HashSet<u64> = HashSet::new();
    for &(row, score) in fused {
        let Some(skill) = skill_of(row) else { continue };
        if !seen_skills.insert(skill) {
            continue;
        }
        let card = card_of(row).unwrap_or(skill);
        let member = Member { skill, row, score };
        match slot_of_card.get(&card) {
            Some(&at) => slots[at].members.push(member),
            None if slots.len() < limit => {
                slot_of_card.insert(card, slots.len());
                slots.push(Slot {
                    members: vec![member],
                });
            }
            None => {}
        }
    }
    slots
}

/// `fused` with the rows in `named` (the skill documents of skills whose
/// name is the query) moved first, in their order in `fused`, at the best
/// score of the ranking; rows in `named` that `fused` lacks follow them,
/// at that score too.
pub fn name_first(fused: Vec<(u32, f64)>, named: &[u32]) -> Vec<(u32, f64)> {
    if named.is_empty() {
        return fused;
    }
    let top = fused.first().map_or(1.0, |f| f.1);
    let position: HashMap<u32, usize> = fused
        .iter()
        .enumerate()
        .map(|(at, (row, _))| (*row, at))
        .collect();
    let mut named = named.to_vec();
    named.sort_by_key(|row| (position.get(row).copied().unwrap_or(usize::MAX), *row));
    named.dedup();
    let named_set: HashSet<u32> = named.iter().copied().collect();
    let mut ordered: Vec<(u32, f64)> = named.iter().map(|&row| (row, top)).collect();
    ordered.extend(
        fused
            .into_iter()
            .filter(|(row, _)| !named_set.contains(row)),
    );
    ordered
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_one_result_at_the_rank_of_the_best_of_them() {
        // Rows 0-5: skills 10, 11, 10 again, 12, 13, 14; 11 and 13 are
        // copies (card 7); 14 has no card.
        let fused = [(0, 0.9), (1, 0.8), (2, 0.7), (3, 0.6), (4, 0.5), (5, 0.4)];
        let skill = |row: u32| Some([10, 11, 10, 12, 13, 14][row as usize]);
        let card = |row: u32| [Some(1), Some(7), Some(1), Some(2), Some(7), None][row as usize];
        let slots = group(&fused, 10, skill, card);
        let skills: Vec<Vec<u64>> = slots
            .iter()
            .map(|s| s.members.iter().map(|m| m.skill).collect())
            .collect();
        assert_eq!(skills, [vec![10], vec![11, 13], vec![12], vec![14]]);
        assert_eq!(slots[1].score(), 0.8);
        assert_eq!(slots[1].members[1].row, 4);
        // A limit counts results, and a later copy still joins a result kept.
        let slots = group(&fused, 2, skill, card);
        assert_eq!(slots.len(), 2);
        assert_eq!(slots[1].members.len(), 2);
    }

    #[test]
    fn a_skill_named_as_the_query_goes_first() {
        let fused = vec![(5, 0.9), (3, 0.6), (8, 0.5)];
        assert_eq!(
            name_first(fused.clone(), &[2, 8]),
            [(8, 0.9), (2, 0.9), (5, 0.9), (3, 0.6)]
        );
        assert_eq!(name_first(fused.clone(), &[]), fused);
    }
}
