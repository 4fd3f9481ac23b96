//! How many of a query's words a document holds: the first thing a
//! keyword ranking of a large collection should weigh.
//!
//! BM25 sums what each word scores, and a name or a title counts its
//! weight whatever its length, so over a collection of 18,000 skills a
//! section titled "Static.app" (one word of "a static visual artwork saved
//! as pdf") outranked the skill that holds five of them. Meilisearch ranks
//! by words matched before anything else; here the candidates the BM25
//! searches found are weighed by the share of the query's words they hold
//! ([`rank`]), which measured as well on a large collection and better on
//! a small one.
//!
//! The count reads the words' postings at the candidates only: one term
//! query per word and field, advanced (`seek`) through each segment's
//! candidates in document order. Words are counted as written: a name
//! found through a typo holds its word only in the BM25 score, not in
//! the share (a query of one word is not weighed at all).

use std::collections::BTreeMap;

use tantivy::query::{BooleanQuery, EnableScoring, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocAddress, DocSet, Searcher, Term, TERMINATED};

use agentfinder_skills_reader::rules::query::SHARE_POWER;

/// For each candidate, which of `words` (at most 64: bit `i` for word
/// `i`) it holds in any of `fields`.
pub fn words_held(
    searcher: &Searcher,
    fields: &[Field],
    words: &[String],
    candidates: &[DocAddress],
) -> tantivy::Result<Vec<u64>> {
    let mut held = vec![0u64; candidates.len()];
    // Candidates by segment, in document order, with their places.
    let mut by_segment: BTreeMap<u32, Vec<(u32, usize)>> = BTreeMap::new();
    for (at, address) in candidates.iter().enumerate() {
        by_segment
            .entry(address.segment_ord)
            .or_default()
            .push((address.doc_id, at));
    }
    for docs in by_segment.values_mut() {
        docs.sort_unstable();
    }
    for (bit, word) in words.iter().take(64).enumerate() {
        let any_field = BooleanQuery::new(
            fields
                .iter()
                .map(|field| {
                    let term = Term::from_field_text(*field, word);
                    let query: Box<dyn Query> =
                        Box::new(TermQuery::new(term, IndexRecordOption::Basic));
                    (Occur::Should, query)
                })
                .collect(),
        );
        let weight = any_field.weight(EnableScoring::disabled_from_searcher(searcher))?;
        for (segment, docs) in &by_segment {
            let reader = searcher.segment_reader(*segment);
            let mut postings = weight.scorer(reader, 1.0)?;
            for &(doc, at) in docs {
                let current = postings.doc();
                if current == TERMINATED {
                    break;
                }
                let found = if current >= doc {
                    current
                } else {
                    postings.seek(doc)
                };
                if found == doc {
                    held[at] |= 1 << bit;
                }
            }
        }
    }
    Ok(held)
}

/// Ranks `(candidate, score)` by score times the share of the query's
/// `words` each holds (`held`, as [`words_held`] gives it) to the power
/// [`SHARE_POWER`] (which both engines share), best first; ties keep
/// their order.
pub fn rank<T: Copy>(scored: &[(T, f32)], held: &[u64], words: usize) -> Vec<(T, f32)> {
    let words = words.clamp(1, 64) as f32;
    let mut weighed: Vec<(usize, (T, f32))> = scored
        .iter()
        .enumerate()
        .map(|(at, &(candidate, score))| {
            let share = held.get(at).map_or(0, |h| h.count_ones()) as f32 / words;
            (at, (candidate, score * share.powi(SHARE_POWER)))
        })
        .collect();
    weighed.sort_by(|a, b| b.1 .1.total_cmp(&a.1 .1).then(a.0.cmp(&b.0)));
    weighed.into_iter().map(|(_, weighed)| weighed).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::schema::{Schema, TEXT};
    use tantivy::{doc, Index};

    #[test]
    fn a_document_holding_more_of_the_words_outranks_a_one_word_title() {
        // Four words: a title holding one of them scores 9 by BM25, a body
        // holding three 3; weighed, 9/16 against 27/16.
        let scored = [("title", 9.0), ("body", 3.0), ("other", 2.0), ("all", 1.0)];
        let held = [0b0001, 0b0111, 0b0001, 0b1111];
        let order: Vec<&str> = rank(&scored, &held, 4).iter().map(|s| s.0).collect();
        assert_eq!(order, ["body", "all", "title", "other"]);
        let ranked = rank(&scored, &held, 4);
        assert!((ranked[0].1 - 3.0 * 0.75f32.powi(2)).abs() < 1e-6);
        // Equal scores keep their order.
        let tied = rank(&[("a", 1.0), ("b", 1.0)], &[1, 1], 1);
        assert_eq!(tied.iter().map(|s| s.0).collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn counts_each_word_once_in_any_field_at_the_candidates_only() {
        let mut builder = Schema::builder();
        let title = builder.add_text_field("title", TEXT);
        let body = builder.add_text_field("body", TEXT);
        let index = Index::create_in_ram(builder.build());
        let mut writer = index.writer(15_000_000).unwrap();
        let docs = [
            ("Static.app", "deploy a site"),
            (
                "Canvas design",
                "a static visual artwork as pdf, museum quality",
            ),
            ("pdf", "pdf pdf pdf"),
            ("nothing", "here"),
        ];
        for (t, b) in docs {
            writer.add_document(doc!(title => t, body => b)).unwrap();
        }
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        let words: Vec<String> = ["static", "visual", "pdf", "museum"]
            .map(String::from)
            .to_vec();
        // Candidates out of document order, and one document left out.
        let candidates = [
            DocAddress::new(0, 2),
            DocAddress::new(0, 0),
            DocAddress::new(0, 1),
        ];
        let held = words_held(&searcher, &[title, body], &words, &candidates).unwrap();
        // pdf; static; static, visual, pdf and museum.
        assert_eq!(held, [0b0100, 0b0001, 0b1111]);
    }
}
