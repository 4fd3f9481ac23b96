//! Meilisearch's candidates ranked by their words as the embedded engine
//! ranks its own (pure).
//!
//! Meilisearch ranks by how many of the query's words a document holds,
//! dropping words from the end of the query until enough match
//! (`matchingStrategy: last`): the last words of a paraphrase are the first
//! it forgets, and a rare word counts no more than a common one. Over the
//! project's evaluation set its keyword top-3 was 0.820 against the
//! embedded engine's 0.966. So the pipeline asks Meilisearch only for
//! candidates (each word's best documents, the whole query's, the nearest
//! vectors) and how many documents hold each word in each field, and ranks
//! them here the embedded engine's way:
//!
//! - BM25 (tantivy's: `k1` 1.2, `b` 0.75) over the body fields, each word's
//!   weight its inverse document frequency in that field across the whole
//!   index, times the field's weight ([`WEIGHTED_FIELDS`]);
//! - a word in a name or a title counts that field's weight whatever its
//!   length, one typo away too for a long word ([`typo_allowed`],
//!   [`one_typo_apart`]);
//! - the sum weighed by the share of the query's words the document holds
//!   as written ([`weighed_by_share`]).
//!
//! One thing differs: a field's average length is the candidates', not the
//! whole index's, which Meilisearch does not report.

use serde_json::Value;

use agentfinder_skills_reader::rules::fields::{
    field_words, one_typo_apart, typo_allowed, NAME_FIELDS, WEIGHTED_FIELDS,
};
use agentfinder_skills_reader::rules::query::weighed_by_share;

/// BM25's term-frequency saturation (tantivy's).
const K1: f64 = 1.2;
/// BM25's length normalisation (tantivy's).
const B: f64 = 0.75;

/// How common each word is, across the whole index.
#[derive(Debug, Clone, PartialEq)]
pub struct WordStats {
    /// Documents in the index.
    pub documents: u64,
    /// Which of [`WEIGHTED_FIELDS`] the index searches (a field it does
    /// not search scores nothing).
    pub searched: [bool; WEIGHTED_FIELDS.len()],
    /// For each word, in the query's order: how many documents hold it
    /// in each of [`WEIGHTED_FIELDS`] (names and titles are not counted).
    pub holding: Vec<[u64; WEIGHTED_FIELDS.len()]>,
}

impl WordStats {
    /// BM25's inverse document frequency of word `word` in field `field`:
    /// a count above the index's size (a size read before a sync) is taken
    /// as the size, so the word weighs next to nothing, never below it.
    fn idf(&self, word: usize, field: usize) -> Option<f64> {
        let total = self.documents as f64;
        let n = (*self.holding.get(word)?.get(field)? as f64).min(total);
        Some((1.0 + (total - n + 0.5) / (n + 0.5)).ln())
    }
}

/// `documents` ranked for `words` (the query's searched words, in order):
/// `(index in documents, score)`, best first, ties in the documents'
/// order; a document holding none of the words is left out. `share`
/// weighs each by the share of the words it holds (a query of one word is
/// not weighed).
pub fn rank(
    words: &[String],
    documents: &[Value],
    stats: &WordStats,
    share: bool,
) -> Vec<(usize, f64)> {
    if words.is_empty() {
        return Vec::new();
    }
    let tokens: Vec<Vec<Vec<String>>> = documents
        .iter()
        .map(|doc| {
            WEIGHTED_FIELDS
                .iter()
                .map(|(field, _)| field_words(doc, field))
                .collect()
        })
        .collect();
    let average: Vec<f64> = (0..WEIGHTED_FIELDS.len())
        .map(|field| {
            let total: usize = tokens.iter().map(|doc| doc[field].len()).sum();
            (total as f64 / documents.len().max(1) as f64).max(1.0)
        })
        .collect();
    let typo = typo_allowed(words);
    let mut ranked: Vec<(usize, f64)> = tokens
        .iter()
        .enumerate()
        .filter_map(|(at, fields)| {
            let mut score = 0.0;
            let mut held = 0;
            for (w, word) in words.iter().enumerate() {
                let mut holds = false;
                for (field, field_tokens) in fields.iter().enumerate() {
                    if !stats.searched[field] {
                        continue;
                    }
                    let weight = f64::from(WEIGHTED_FIELDS[field].1);
                    let count = field_tokens.iter().filter(|t| *t == word).count();
                    holds |= count > 0;
                    if field < NAME_FIELDS {
                        let named = count > 0
                            || (typo[w] && field_tokens.iter().any(|t| one_typo_apart(word, t)));
                        if named {
                            score += weight;
                        }
                    } else if count > 0 {
                        let Some(idf) = stats.idf(w, field) else {
                            continue;
                        };
                        let tf = count as f64;
                        let length = field_tokens.len() as f64 / average[field];
                        score +=
                            idf * weight * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length));
                    }
                }
                held += usize::from(holds);
            }
            if score <= 0.0 {
                return None;
            }
            if share && words.len() > 1 {
                score = weighed_by_share(score, held, words.len());
            }
            Some((at, score))
        })
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_string).collect()
    }

    /// Stats where every field is searched and each word is held by
    /// `holding[i]` documents in each field, of 1,000.
    fn stats(holding: &[u64]) -> WordStats {
        WordStats {
            documents: 1_000,
            searched: [true; 8],
            holding: holding.iter().map(|&n| [n; 8]).collect(),
        }
    }

    fn order(ranked: &[(usize, f64)]) -> Vec<usize> {
        ranked.iter().map(|r| r.0).collect()
    }

    #[test]
    fn a_rare_word_counts_more_than_a_common_one() {
        let docs = [
            json!({"content": "make a chart of the numbers"}),
            json!({"content": "pivot the numbers"}),
        ];
        // "pivot" is rare, "chart" common.
        let ranked = rank(&words("pivot chart"), &docs, &stats(&[3, 400]), true);
        assert_eq!(order(&ranked), [1, 0]);
        // With the two as common, the tie goes by length: the shorter.
        let ranked = rank(&words("pivot chart"), &docs, &stats(&[400, 400]), true);
        assert_eq!(order(&ranked), [1, 0]);
        let ranked = rank(&words("chart"), &docs, &stats(&[3]), true);
        assert_eq!(
            order(&ranked),
            [0],
            "a document without the word is left out"
        );
    }

    #[test]
    fn the_last_words_of_a_query_count_as_much_as_the_first() {
        // Meilisearch's `last` strategy drops "theme" first; here it is a
        // word like the others.
        let docs = [
            json!({"skill_name": "frontend-design", "content": "style a landing page"}),
            json!({"skill_name": "theme-factory", "content": "a ready made theme for a landing page"}),
        ];
        let query = words("style landing page ready made theme");
        let ranked = rank(&query, &docs, &stats(&[50, 20, 80, 30, 40, 10]), true);
        assert_eq!(order(&ranked), [1, 0], "{ranked:?}");
    }

    #[test]
    fn a_name_counts_its_weight_and_a_typo_in_it_too() {
        let docs = [
            json!({"skill_name": "spreadsheet", "content": "tables"}),
            json!({"skill_name": "notes", "content": "a spreadsheet once, in a long body of text about notes and other things"}),
        ];
        let ranked = rank(&words("spreadshet"), &docs, &stats(&[10]), true);
        assert_eq!(
            order(&ranked),
            [0],
            "one typo names the skill; the body needs the word"
        );
        let ranked = rank(&words("spreadsheet"), &docs, &stats(&[10]), true);
        assert_eq!(order(&ranked), [0, 1]);
        // Short words take no typo.
        assert!(rank(&words("nots"), &docs, &stats(&[10]), true).is_empty());
    }

    #[test]
    fn the_share_of_the_words_held_outweighs_one_strong_match() {
        let docs = [
            json!({"title": "Static", "content": "nothing else"}),
            json!({"content": "a visual artwork saved as pdf"}),
        ];
        let query = words("static visual artwork pdf");
        // The title's one word counts its weight, 3; the three common words
        // of the body together a little less.
        let held = stats(&[5, 400, 400, 400]);
        assert_eq!(order(&rank(&query, &docs, &held, true)), [1, 0]);
        assert_eq!(order(&rank(&query, &docs, &held, false)), [0, 1]);
    }

    #[test]
    fn a_word_counted_in_more_documents_than_the_index_holds_weighs_little_not_less() {
        let docs = [json!({"content": "merge pdf"}), json!({"content": "merge"})];
        // "merge" counted in 5,000 of 1,000 documents (a size read before a
        // sync): both documents still rank, the one holding "pdf" first.
        let ranked = rank(&words("merge pdf"), &docs, &stats(&[5_000, 10]), false);
        assert_eq!(order(&ranked), [0, 1]);
        assert!(ranked.iter().all(|(_, score)| *score > 0.0), "{ranked:?}");
    }

    #[test]
    fn a_word_weighs_by_how_rare_it_is_in_the_field_that_holds_it() {
        let docs = [
            json!({"skill_description": "alpha tools"}),
            json!({"content": "alpha tools"}),
        ];
        let held = |description: u64, content: u64| {
            let mut counts = [500; 8];
            counts[3] = description;
            counts[5] = content;
            WordStats {
                documents: 1_000,
                searched: [true; 8],
                holding: vec![counts],
            }
        };
        // Rare in descriptions, common in contents: the description wins;
        // the other way round, the content does, for all its lower weight.
        assert_eq!(
            order(&rank(&words("alpha"), &docs, &held(1, 900), true)),
            [0, 1]
        );
        assert_eq!(
            order(&rank(&words("alpha"), &docs, &held(900, 1), true)),
            [1, 0]
        );
    }

    #[test]
    fn a_field_the_index_does_not_search_scores_nothing() {
        let docs = [json!({"path": "skills/pdf/SKILL.md"})];
        let mut held = stats(&[10]);
        held.searched[7] = false;
        assert!(rank(&words("pdf"), &docs, &held, true).is_empty());
        assert_eq!(rank(&words("pdf"), &docs, &stats(&[10]), true).len(), 1);
    }
}
