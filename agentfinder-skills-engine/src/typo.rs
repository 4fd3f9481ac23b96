//! One typo in a word, but not in its first letter: a tantivy query.
//!
//! tantivy's `FuzzyTermQuery` lets the typo fall anywhere, the first
//! letter included, so finding the terms walks every branch at the root
//! of the term dictionary. On a real collection whose titles hold
//! thousands of distinct first characters (AgentWorkers/skills, 313,903
//! documents, many languages) that walk was 60% of a keyword search.
//! Meilisearch counts a typo on the first letter as two, so with one typo
//! allowed it never takes one there: neither does this query, and its walk
//! follows the one branch of the word's first letter.

use std::sync::OnceLock;

use levenshtein_automata::{Distance, LevenshteinAutomatonBuilder, DFA, SINK_STATE};
use tantivy::query::{AutomatonWeight, EnableScoring, Query, Weight};
use tantivy::schema::Field;
use tantivy_fst::Automaton;

/// Terms of `field` that equal `word` but for at most one typo (a letter
/// added, dropped, replaced, or two neighbours swapped) after its first
/// letter.
#[derive(Debug, Clone)]
pub struct OneTypoAfterFirstLetter {
    field: Field,
    word: String,
}

impl OneTypoAfterFirstLetter {
    /// The query for `word` (lowercased as the index has it) in `field`.
    pub fn new(field: Field, word: &str) -> Self {
        Self {
            field,
            word: word.to_string(),
        }
    }
}

impl Query for OneTypoAfterFirstLetter {
    fn weight(&self, _scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(AutomatonWeight::<Anchored>::new(
            self.field,
            Anchored::new(&self.word),
        )))
    }
}

/// The automaton: the first character's bytes exactly, then the rest of
/// the word within one edit.
struct Anchored {
    first: Vec<u8>,
    rest: DFA,
}

/// Where [`Anchored`] is: bytes of the first character read, and the
/// state of the rest's automaton.
type State = (u8, u32);

/// A state nothing can follow into a match.
const DEAD: State = (u8::MAX, SINK_STATE);

impl Anchored {
    fn new(word: &str) -> Self {
        // Building the parametric automaton is the costly part (tables for
        // every edit); it depends only on the distance, so it is made once.
        static ONE_EDIT: OnceLock<LevenshteinAutomatonBuilder> = OnceLock::new();
        let builder = ONE_EDIT.get_or_init(|| LevenshteinAutomatonBuilder::new(1, true));
        let split = word.chars().next().map_or(0, char::len_utf8);
        Self {
            first: word.as_bytes()[..split].to_vec(),
            rest: builder.build_dfa(&word[split..]),
        }
    }
}

impl Automaton for Anchored {
    type State = State;

    fn start(&self) -> State {
        (0, self.rest.initial_state())
    }

    fn is_match(&self, state: &State) -> bool {
        usize::from(state.0) == self.first.len()
            && matches!(self.rest.distance(state.1), Distance::Exact(_))
    }

    fn can_match(&self, state: &State) -> bool {
        *state != DEAD && state.1 != SINK_STATE
    }

    fn accept(&self, state: &State, byte: u8) -> State {
        let (read, rest) = *state;
        if *state == DEAD {
            return DEAD;
        }
        match self.first.get(usize::from(read)) {
            Some(&expected) if expected == byte => (read + 1, rest),
            Some(_) => DEAD,
            None => (read, self.rest.transition(rest, byte)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(word: &str, term: &str) -> bool {
        let automaton = Anchored::new(word);
        let mut state = automaton.start();
        for byte in term.bytes() {
            state = automaton.accept(&state, byte);
            if !automaton.can_match(&state) {
                return false;
            }
        }
        automaton.is_match(&state)
    }

    #[test]
    fn one_typo_after_the_first_letter_matches() {
        for term in ["deploy", "delpoy", "deplpy", "deploys", "deply", "dploy"] {
            assert!(matches("deploy", term), "{term}");
        }
        // Two typos, or one on the first letter, do not.
        for term in [
            "dlepoy", "xeploy", "eploy", "adeploy", "deplyo s", "delpoys",
        ] {
            assert!(!matches("deploy", term), "{term}");
        }
        // A first character of several bytes is matched whole.
        assert!(matches("éclair", "éclaire"));
        assert!(!matches("éclair", "eclair"));
        assert!(matches("日本語です", "日本語でず"));
        assert!(!matches("日本語です", "本本語です"));
    }

    #[test]
    fn it_finds_terms_in_a_real_index() {
        use tantivy::collector::Count;
        use tantivy::schema::{Schema, TEXT};
        let mut schema = Schema::builder();
        let title = schema.add_text_field("title", TEXT);
        let index = tantivy::Index::create_in_ram(schema.build());
        let mut writer: tantivy::IndexWriter = index.writer(15_000_000).unwrap();
        for text in ["deploy a space", "redeploy it", "employ people", "delpoyed"] {
            writer.add_document(tantivy::doc!(title => text)).unwrap();
        }
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        let count = |word: &str| {
            searcher
                .search(&OneTypoAfterFirstLetter::new(title, word), &Count)
                .unwrap()
        };
        assert_eq!(count("deploy"), 1);
        assert_eq!(count("delpoy"), 1);
        assert_eq!(count("delpoyed"), 1);
        // A typo after the first letter ("employ" is "eploy" with a letter
        // added) but never on it (tantivy's fuzzy query would find "deploy").
        assert_eq!(count("eploy"), 1);
        assert_eq!(count("seploy"), 0);
    }
}
