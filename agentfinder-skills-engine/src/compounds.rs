//! Identifiers in a query, matched as written (pure over the index's
//! tokenizer).
//!
//! The index splits text at whatever is not a letter or a digit, so
//! `with_server.py` is the words `with`, `server` and `py`: common words
//! each, one of them a stop word. Searched word by word, the skill whose
//! body runs `python scripts/with_server.py` is one of thousands holding
//! them (among 18,434 distractors, "thumbnail.py" did not find the skill
//! that ships it in the first ten). A query's compounds, the runs of text
//! between spaces that the tokenizer splits into several words, are also
//! searched as phrases: the words next to each other, in order.

use tantivy::query::{BoostQuery, Occur, PhraseQuery, Query};
use tantivy::schema::Field;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::Term;

/// Most compounds of a query searched as phrases.
pub const MAX_COMPOUNDS: usize = 4;

/// Most words of a compound (a longer one is cut to its first words).
pub const MAX_COMPOUND_WORDS: usize = 8;

/// The compounds of `text`: each run between whitespace that `analyzer`
/// splits into two words or more, as those words, each compound once.
pub fn compounds(analyzer: &mut TextAnalyzer, text: &str) -> Vec<Vec<String>> {
    let mut found: Vec<Vec<String>> = Vec::new();
    for run in text.split_whitespace() {
        let mut words = Vec::new();
        let mut stream = analyzer.token_stream(run);
        while let Some(token) = stream.next() {
            words.push(token.text.clone());
        }
        words.truncate(MAX_COMPOUND_WORDS);
        if words.len() >= 2 && !found.contains(&words) {
            found.push(words);
        }
        if found.len() == MAX_COMPOUNDS {
            break;
        }
    }
    found
}

/// One phrase query per compound and field, boosted by the field's
/// weight: clauses of a union, scored by BM25 (a compound written in few
/// skills weighs much; counted as a name match instead, it measured worse:
/// judged keyword top-3 among 18,434 distractors 0.888 -> 0.876).
pub fn phrase_clauses(
    compounds: &[Vec<String>],
    fields: &[(Field, f32)],
) -> Vec<(Occur, Box<dyn Query>)> {
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for words in compounds {
        for &(field, weight) in fields {
            let terms = words
                .iter()
                .map(|word| Term::from_field_text(field, word))
                .collect();
            let phrase: Box<dyn Query> = Box::new(PhraseQuery::new(terms));
            clauses.push((Occur::Should, Box::new(BoostQuery::new(phrase, weight))));
        }
    }
    clauses
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::tokenizer::{LowerCaser, SimpleTokenizer};

    fn analyzer() -> TextAnalyzer {
        TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .build()
    }

    #[test]
    fn runs_split_into_several_words_are_compounds() {
        let found = compounds(
            &mut analyzer(),
            "start with_server.py, then shadcn/ui and Notion:notion-create-pages twice: with_server.py",
        );
        assert_eq!(
            found,
            vec![
                vec!["with", "server", "py"],
                vec!["shadcn", "ui"],
                vec!["notion", "notion", "create", "pages"],
            ]
        );
        assert!(compounds(&mut analyzer(), "merge two pdf files").is_empty());
    }

    #[test]
    fn a_query_of_many_compounds_is_bounded() {
        let long = (0..20).map(|i| format!("a{i}.b{i}")).collect::<Vec<_>>();
        let found = compounds(&mut analyzer(), &long.join(" "));
        assert_eq!(found.len(), MAX_COMPOUNDS);
        let one = (0..20)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join("_");
        assert_eq!(
            compounds(&mut analyzer(), &one)[0].len(),
            MAX_COMPOUND_WORDS
        );
    }
}
