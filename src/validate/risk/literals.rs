//! Which patterns of a set can match a text, found by the literals every
//! match of a pattern must contain: one Aho-Corasick pass over the text
//! names the candidates, and only they are run.
//!
//! A set of patterns compiled into one lazy DFA builds its states for all
//! of them at once. On the risk rules' sets those states fill a 32 MB cache
//! per thread per set (most of a build's heap at 61,000 skills), and a
//! smaller cache is cleared so often that the set runs slower. A pattern
//! run alone builds only its own few states.
//!
//! The literals are the prefixes (or suffixes, when they are longer) that
//! `regex-syntax` extracts: every match of a pattern starts (or ends) with
//! one of them. Look-around assertions such as `\b` count as matching
//! anywhere, so a literal's presence is necessary, never sufficient. A
//! pattern whose literals are short or unbounded (`^\s*…`, a class) is a
//! candidate on every text.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex_syntax::hir::literal::{ExtractKind, Extractor, Seq};
use regex_syntax::ParserBuilder;

/// Literals shorter than this are too common in text to rule anything out.
const SHORTEST_USEFUL: usize = 3;

/// The candidates among a set's patterns for any text.
#[derive(Debug, Clone)]
pub struct Prefilter {
    /// Lowercased literals, matched ASCII-case-insensitively.
    literals: AhoCorasick,
    /// Per literal: the patterns that contain it.
    owners: Vec<Vec<usize>>,
    /// Patterns with no useful literal: always candidates.
    always: Vec<usize>,
    /// How many patterns the set has.
    patterns: usize,
}

/// The literals one of which every match of `pattern` contains, lowercased;
/// `None` when there is no such short list (or the pattern does not parse
/// here, which then only costs speed).
fn required_literals(pattern: &str, syntax: Syntax) -> Option<Vec<Vec<u8>>> {
    let hir = ParserBuilder::new()
        .multi_line(syntax.multi_line)
        .unicode(syntax.unicode)
        .utf8(syntax.unicode)
        .build()
        .parse(pattern)
        .ok()?;
    let best = [ExtractKind::Prefix, ExtractKind::Suffix]
        .into_iter()
        .map(|kind| Extractor::new().kind(kind).extract(&hir))
        .filter(|seq| seq.min_literal_len().is_some_and(|n| n >= SHORTEST_USEFUL))
        .max_by_key(|seq: &Seq| seq.min_literal_len())?;
    let mut literals: Vec<Vec<u8>> = best
        .literals()?
        .iter()
        .map(|literal| literal.as_bytes().to_ascii_lowercase())
        .collect();
    literals.sort_unstable();
    literals.dedup();
    Some(literals)
}

/// How `regex` is told to read the patterns.
#[derive(Debug, Clone, Copy)]
pub struct Syntax {
    /// `^` and `$` match at line ends.
    pub multi_line: bool,
    /// Unicode mode (off for `regex::bytes` patterns that read bytes).
    pub unicode: bool,
}

impl Prefilter {
    /// The prefilter of `patterns`, as `regex` would compile them.
    pub fn new<S: AsRef<str>>(patterns: &[S], syntax: Syntax) -> Self {
        let mut literals: Vec<Vec<u8>> = Vec::new();
        let mut owners: Vec<Vec<usize>> = Vec::new();
        let mut at: HashMap<Vec<u8>, usize> = HashMap::new();
        let mut always = Vec::new();
        for (i, pattern) in patterns.iter().enumerate() {
            let Some(own) = required_literals(pattern.as_ref(), syntax) else {
                always.push(i);
                continue;
            };
            for literal in own {
                let slot = *at.entry(literal.clone()).or_insert_with(|| {
                    literals.push(literal);
                    owners.push(Vec::new());
                    owners.len() - 1
                });
                owners[slot].push(i);
            }
        }
        let literals = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            // A dense automaton: every byte one transition, no failure
            // links followed at search time (the literals are a few
            // hundred: a few MB).
            .kind(Some(AhoCorasickKind::DFA))
            .build(&literals)
            .unwrap_or_else(|e| panic!("literals of a pattern set: {e}"));
        Self {
            literals,
            owners,
            always,
            patterns: patterns.len(),
        }
    }

    /// The patterns with no useful literal, in order.
    pub fn always(&self) -> &[usize] {
        &self.always
    }

    /// The patterns with literals whose literals `text` holds, in order
    /// (the others are [`Prefilter::always`]).
    pub fn candidates(&self, text: &[u8]) -> Vec<usize> {
        // Most lines hold no literal at all: nothing is allocated then;
        // else one flag per pattern, however many the hits.
        let mut seen: Vec<bool> = Vec::new();
        for m in self.literals.find_overlapping_iter(text) {
            if seen.is_empty() {
                seen = vec![false; self.patterns];
            }
            for &i in &self.owners[m.pattern().as_usize()] {
                seen[i] = true;
            }
        }
        (0..seen.len()).filter(|&i| seen[i]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: Syntax = Syntax {
        multi_line: true,
        unicode: true,
    };

    #[test]
    fn literals_are_what_every_match_must_contain() {
        let lits = |p: &str| required_literals(p, TEXT);
        assert_eq!(lits(r"\bcurl\b"), Some(vec![b"curl".to_vec()]));
        // Case variants fold into one lowercased literal.
        assert_eq!(lits(r"(?i:Wget)"), Some(vec![b"wget".to_vec()]));
        // The longer of prefixes and suffixes.
        assert_eq!(lits(r"\w+\.onion\b"), Some(vec![b".onion".to_vec()]));
        // No useful literal: a class, a line start with spaces, short words.
        assert_eq!(lits(r"[A-Za-z0-9+/]{40,}"), None);
        assert_eq!(lits(r"^\s*(?:#|//)"), None);
        assert_eq!(lits(r"\bid\b"), None);
        assert_eq!(lits(r"a|bcd"), None);
    }

    #[test]
    fn candidates_include_every_pattern_that_matches() {
        let patterns = [r"\bcurl\b", r"(?i:\bsecret\w*)", r"^\s*#", r"\.onion\b"];
        let prefilter = Prefilter::new(&patterns, TEXT);
        assert_eq!(prefilter.always(), [2]);
        assert_eq!(prefilter.candidates(b"nothing here"), Vec::<usize>::new());
        assert_eq!(prefilter.candidates(b"CURL x.onion"), vec![0, 3]);
        assert_eq!(prefilter.candidates(b"SeCrEtS"), vec![1]);
    }
}
