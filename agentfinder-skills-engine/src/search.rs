//! Ranking an engine's documents for a query: BM25 over the searchable
//! fields and, given the query's vector, the artifact's own vectors, fused
//! by skill ([`crate::rank`]); the best skills are the [`Candidates`] the
//! serving side's results pipeline ranks, folds and presents.

use std::collections::HashMap;

use serde_json::Value;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocAddress, Term};

use agentfinder_skills_reader::contract::KIND_SECTION;
use agentfinder_skills_reader::results::{similarity_of_cosine, Candidates, Hit};
use agentfinder_skills_reader::rules::copies::name_key;
use agentfinder_skills_reader::rules::fields::{typo_allowed, NAME_FIELDS};
use agentfinder_skills_reader::rules::query::{is_stop_word, without_ruled_out, MAX_QUERY_WORDS};

use crate::engine::Engine;
use crate::error::EngineError;
use crate::index::WEIGHTED_FIELDS;
use crate::{compounds, coverage, nearest, rank, typo};

/// Candidates each ranking contributes before fusion.
pub const CANDIDATES: usize = 200;

/// Whether `field` is a name or a title (the first [`NAME_FIELDS`] of
/// [`WEIGHTED_FIELDS`]): a match there counts its weight, and a misspelt
/// word still names the skill. A typo is never on a word's first letter
/// ([`typo::OneTypoAfterFirstLetter`]), which Meilisearch counts as two.
fn is_name_field(field: Field, fields: &[Field; 8]) -> bool {
    fields[..NAME_FIELDS].contains(&field)
}

/// Rows whose vectors a search ranks by their codes, chosen by their sign
/// bits ([`nearest::Vectors::nearest_shortlisted`]): the exact scan of
/// every vector was 74% of a hybrid search over 124,792 documents (192 MB
/// of f32 a query).
pub const SHORTLIST: usize = 2_000;

/// Most skills a query that is a name puts first.
const NAMED: usize = 20;

/// How to search.
#[derive(Debug, Clone, Default)]
pub struct EngineQuery<'a> {
    /// The words.
    pub text: &'a str,
    /// The query's vector (same model as the artifact's), for hybrid ranking.
    pub vector: Option<&'a [f32]>,
    /// Only this source.
    pub source: Option<&'a str>,
    /// Most results (skills).
    pub limit: usize,
    /// Weight of the vector ranking against the keyword ranking's 1 - it.
    pub semantic_ratio: f32,
    /// Sections to name per skill found, best first (0: none), besides
    /// the skill's best document.
    pub sections: usize,
}

impl Engine {
    /// Ranks documents for `query`: the best `query.limit` skills, each
    /// at its best document, with the skills whose name is the query's
    /// among them wherever they rank (the results pipeline puts them
    /// first).
    pub fn search(&self, query: &EngineQuery<'_>) -> Result<Candidates, EngineError> {
        let wanted = query.limit.max(1);
        let keyword = self.keyword_rows(query)?;
        let nearest = match (query.vector, &self.inner.vectors) {
            (Some(v), Some(_)) if query.semantic_ratio > 0.0 => self.vector_rows(v, query.source),
            _ => Vec::new(),
        };
        let best_similarity = nearest
            .first()
            .map(|(_, cosine)| similarity_of_cosine(*cosine));
        let vector: Vec<u32> = nearest.into_iter().map(|(row, _)| row).collect();
        let ratio = if vector.is_empty() {
            0.0
        } else {
            f64::from(query.semantic_ratio.clamp(0.0, 1.0))
        };
        let fused = rank::fuse_by_skill(&[(&keyword, 1.0 - ratio), (&vector, ratio)], |row| {
            self.skill_of(row)
        });
        let mut chosen = best_per_skill(&fused, wanted, |row| self.skill_of(row));
        let top = fused.first().map_or(1.0, |f| f.1);
        for row in self.named_rows(query)? {
            match self.skill_of(row) {
                Some(skill) if !chosen.iter().any(|c| c.0 == skill) => {
                    chosen.push((skill, row, top));
                }
                _ => {}
            }
        }
        let mut hits = Vec::with_capacity(chosen.len());
        for (skill, row, score) in chosen {
            let Some(document) = self.document(row) else {
                continue;
            };
            let sections = if query.sections > 0 {
                fused
                    .iter()
                    .filter(|(row, _)| self.skill_of(*row) == Some(skill))
                    .take(query.sections)
                    .filter_map(|&(row, score)| Some((self.document(row)?, score)))
                    .filter(|(doc, _)| {
                        doc.get("kind").and_then(Value::as_str) == Some(KIND_SECTION)
                    })
                    .collect()
            } else {
                Vec::new()
            };
            hits.push(Hit {
                sections,
                ..Hit::new(document, score)
            });
        }
        let fallback = match (query.vector, &self.inner.vectors) {
            (None, Some(_)) if query.semantic_ratio > 0.0 => {
                Some("no query vector: keywords only".to_string())
            }
            (Some(_), None) => Some("the artifact has no vectors: keywords only".to_string()),
            _ => None,
        };
        Ok(Candidates {
            hits,
            similarity: best_similarity,
            fallback,
        })
    }

    /// Rows by keywords, best first.
    ///
    /// Two searches, so the larger can prune: BM25 over the body fields
    /// as a flat union of boosted term queries, which tantivy ranks with
    /// block-max WAND (a union holding any other query is scored in full:
    /// measured 36 ms for a query of common words over 124,792 documents);
    /// then names and titles, where a match counts the field's weight
    /// whatever the field's length, and a long word may be one typo away
    /// ([`typo_allowed`]: Meilisearch's default length), but not on its
    /// first letter. A row's score is the sum of
    /// the two, times the square of the share of the query's words it
    /// holds ([`coverage`]). A compound such as `with_server.py` also
    /// counts as a phrase ([`compounds`]). What the query rules out is not searched
    /// ([`without_ruled_out`]).
    fn keyword_rows(&self, query: &EngineQuery<'_>) -> Result<Vec<u32>, EngineError> {
        let inner = &self.inner;
        let wanted = without_ruled_out(query.text);
        let words = self.query_words(&wanted);
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let fields = &inner.fields.text;
        let mut body: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let mut names: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (word, typo) in words.iter().zip(typo_allowed(&words)) {
            for ((_, weight), field) in WEIGHTED_FIELDS.iter().zip(fields) {
                let term = Term::from_field_text(*field, word);
                if !is_name_field(*field, fields) {
                    let matched = TermQuery::new(term, IndexRecordOption::WithFreqs);
                    body.push((
                        Occur::Should,
                        Box::new(BoostQuery::new(Box::new(matched), *weight)),
                    ));
                    continue;
                }
                let matched: Box<dyn Query> = if typo {
                    Box::new(typo::OneTypoAfterFirstLetter::new(*field, word))
                } else {
                    Box::new(TermQuery::new(term, IndexRecordOption::Basic))
                };
                names.push((
                    Occur::Should,
                    Box::new(ConstScoreQuery::new(matched, *weight)),
                ));
            }
        }
        let phrases = match inner.index.tokenizer_for_field(fields[0]) {
            Ok(mut analyzer) => {
                let weighted: Vec<(Field, f32)> = WEIGHTED_FIELDS
                    .iter()
                    .zip(fields)
                    .map(|((_, weight), field)| (*field, *weight))
                    .collect();
                compounds::phrase_clauses(&compounds::compounds(&mut analyzer, &wanted), &weighted)
            }
            Err(_) => Vec::new(),
        };
        let searcher = inner.reader.searcher();
        let mut scores: HashMap<DocAddress, f32> = HashMap::new();
        for clauses in [body, names, phrases] {
            if clauses.is_empty() {
                continue;
            }
            let query = self.within_source(Box::new(BooleanQuery::new(clauses)), query.source);
            let hits = searcher
                .search(&query, &TopDocs::with_limit(CANDIDATES).order_by_score())
                .map_err(EngineError::index)?;
            for (score, address) in hits {
                *scores.entry(address).or_default() += score;
            }
        }
        let mut ranked: Vec<(DocAddress, f32)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if words.len() > 1 {
            // Weighed by the share of the query's words each holds, so a
            // one-word title cannot outrank a skill holding most of them.
            let addresses: Vec<DocAddress> = ranked.iter().map(|r| r.0).collect();
            let held = coverage::words_held(&searcher, fields, &words, &addresses)
                .map_err(EngineError::index)?;
            ranked = coverage::rank(&ranked, &held, words.len());
        }
        ranked.truncate(CANDIDATES);
        // Each segment's `row` column, opened once (opening it for every
        // hit was a quarter of a keyword search).
        let columns = searcher
            .segment_readers()
            .iter()
            .map(|segment| segment.fast_fields().u64("row"))
            .collect::<Result<Vec<_>, _>>()
            .map_err(EngineError::index)?;
        Ok(ranked
            .into_iter()
            .filter_map(|(address, _)| {
                let column = columns.get(address.segment_ord as usize)?;
                column.first(address.doc_id).map(|row| row as u32)
            })
            .collect())
    }

    /// The query's words as the index has them (tantivy's tokenizer:
    /// lowercased, split at what is not a letter or digit), each once, in
    /// order; without stop words unless the query has nothing else; at
    /// most [`MAX_QUERY_WORDS`].
    pub fn query_words(&self, text: &str) -> Vec<String> {
        let mut words: Vec<String> = Vec::new();
        if let Ok(mut analyzer) = self
            .inner
            .index
            .tokenizer_for_field(self.inner.fields.text[0])
        {
            let mut stream = analyzer.token_stream(text);
            while let Some(token) = stream.next() {
                if !words.contains(&token.text) {
                    words.push(token.text.clone());
                }
            }
        }
        let meaningful: Vec<String> = words.iter().filter(|w| !is_stop_word(w)).cloned().collect();
        let mut kept = if meaningful.is_empty() {
            words
        } else {
            meaningful
        };
        kept.truncate(MAX_QUERY_WORDS);
        kept
    }

    /// `query`, restricted to `source` when one is given.
    fn within_source(&self, query: Box<dyn Query>, source: Option<&str>) -> Box<dyn Query> {
        match source {
            Some(source) => Box::new(BooleanQuery::new(vec![
                (Occur::Must, query),
                (
                    Occur::Must,
                    Box::new(TermQuery::new(
                        Term::from_field_text(self.inner.fields.source, source),
                        IndexRecordOption::Basic,
                    )),
                ),
            ])),
            None => query,
        }
    }

    /// Rows by vector similarity, best first, with their cosines.
    fn vector_rows(&self, query: &[f32], source: Option<&str>) -> Vec<(u32, f32)> {
        let inner = &self.inner;
        let Some(files) = &inner.vectors else {
            return Vec::new();
        };
        let (Ok(exact), Ok(scales), Ok(signs)) = (
            bytemuck::try_cast_slice::<u8, f32>(&files.exact),
            bytemuck::try_cast_slice::<u8, f32>(&files.scales),
            bytemuck::try_cast_slice::<u8, u64>(&files.signs),
        ) else {
            return Vec::new();
        };
        let vectors = nearest::Vectors {
            dimensions: inner.meta.dimensions,
            exact,
            codes: bytemuck::cast_slice::<u8, i8>(&files.codes),
            scales,
            signs,
        };
        let Some(source) = source else {
            return vectors.nearest_shortlisted(query, CANDIDATES, SHORTLIST, None);
        };
        let Some(wanted) = inner.meta.sources.iter().position(|s| s == source) else {
            return Vec::new();
        };
        let keep = |row: u32| self.source_of(row) == Some(wanted);
        vectors.nearest_shortlisted(query, CANDIDATES, SHORTLIST, Some(&keep))
    }

    /// The skill documents of the skills whose name is the query's
    /// ([`name_key`]), within the query's source.
    fn named_rows(&self, query: &EngineQuery<'_>) -> Result<Vec<u32>, EngineError> {
        let key = name_key(query.text);
        if key.is_empty() {
            return Ok(Vec::new());
        }
        let term = Term::from_field_text(self.inner.fields.name, &key);
        let matched = self.within_source(
            Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
            query.source,
        );
        let searcher = self.inner.reader.searcher();
        let hits = searcher
            .search(&matched, &TopDocs::with_limit(NAMED).order_by_score())
            .map_err(EngineError::index)?;
        let mut rows = Vec::with_capacity(hits.len());
        for (_, address) in hits {
            let column = searcher
                .segment_reader(address.segment_ord)
                .fast_fields()
                .u64("row")
                .map_err(EngineError::index)?;
            if let Some(row) = column.first(address.doc_id) {
                rows.push(row as u32);
            }
        }
        rows.sort_unstable();
        Ok(rows)
    }
}

/// The first row of each skill in `fused` (best first), for at most
/// `wanted` skills: `(skill, row, score)`. Rows of no skill are skipped.
fn best_per_skill(
    fused: &[(u32, f64)],
    wanted: usize,
    skill_of: impl Fn(u32) -> Option<u64>,
) -> Vec<(u64, u32, f64)> {
    let mut seen = std::collections::HashSet::new();
    fused
        .iter()
        .filter_map(|&(row, score)| Some((skill_of(row)?, row, score)))
        .filter(|(skill, _, _)| seen.insert(*skill))
        .take(wanted)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_skill_counts_once_at_its_best_row() {
        // Rows 0-4: skills 10, 11, 10 again, none, 12.
        let fused = [(0, 0.9), (1, 0.8), (2, 0.7), (3, 0.6), (4, 0.5)];
        let skill = |row: u32| [Some(10), Some(11), Some(10), None, Some(12)][row as usize];
        assert_eq!(
            best_per_skill(&fused, 10, skill),
            [(10, 0, 0.9), (11, 1, 0.8), (12, 4, 0.5)]
        );
        assert_eq!(best_per_skill(&fused, 2, skill).len(), 2);
    }
}
