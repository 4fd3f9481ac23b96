//! Judged pools: a query set's labels name the skills written for it, but a
//! store that also holds a large collection has other right answers to
//! many queries (a `pitch-deck` skill for "build a pitch deck"). Pooling,
//! as in TREC, judges what the rankings put first: each result in a
//! query's first three that its labels do not name is judged a right or a
//! wrong answer, once, by a reader, with the reason. An evaluation then
//! counts a judged-right result as an answer, and reports what is still
//! unjudged, so a reader knows how far the judgments reach.
//!
//! A result is named by its key, `<source id>:<path of its SKILL.md>`,
//! which stays the same for a given commit of its source.

use serde::{Deserialize, Serialize};

use super::EvalQuery;

/// A file of judgments (`eval --judgments FILE`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgmentFile {
    /// The store they were made on: sources and their commits.
    pub corpus: String,
    /// Who judged, and how.
    #[serde(default)]
    pub judge: String,
    /// One per query and result.
    pub judgments: Vec<Judgment>,
}

/// Whether one result answers one query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgment {
    /// The query, as the query set has it.
    pub query: String,
    /// The result: `<source id>:<path of its SKILL.md>`.
    pub key: String,
    /// Whether it is a right answer.
    pub relevant: bool,
    /// Why (what the skill does, against what the query asks).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
}

/// A judgment that names no query of the set (a typo or a stale file).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("judgment {index}: no query of the set is {query:?}")]
pub struct UnknownQuery {
    /// Its place in the file, from 0.
    pub index: usize,
    /// The query it names.
    pub query: String,
}

impl JudgmentFile {
    /// Gives each query its judgments (key → right answer or not). A later
    /// judgment of the same result wins.
    pub fn apply(&self, queries: &mut [EvalQuery]) -> Result<(), UnknownQuery> {
        let unknown = self
            .judgments
            .iter()
            .position(|j| !queries.iter().any(|q| q.query == j.query));
        if let Some(index) = unknown {
            return Err(UnknownQuery {
                index,
                query: self.judgments[index].query.clone(),
            });
        }
        for judgment in &self.judgments {
            for query in queries.iter_mut().filter(|q| q.query == judgment.query) {
                query.judged.insert(judgment.key.clone(), judgment.relevant);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn query(text: &str) -> EvalQuery {
        EvalQuery {
            query: text.into(),
            expect: vec!["pdf".into()],
            kind: "plain".into(),
            sources: Vec::new(),
            judged: BTreeMap::new(),
        }
    }

    fn judgment(query: &str, key: &str, relevant: bool) -> Judgment {
        Judgment {
            query: query.into(),
            key: key.into(),
            relevant,
            why: String::new(),
        }
    }

    #[test]
    fn each_query_gets_its_own_judgments_and_the_last_one_wins() {
        let file = JudgmentFile {
            corpus: "c".into(),
            judge: String::new(),
            judgments: vec![
                judgment("merge pdfs", "aw:skills/pdf-merge/SKILL.md", true),
                judgment("merge pdfs", "aw:skills/gif/SKILL.md", true),
                judgment("merge pdfs", "aw:skills/gif/SKILL.md", false),
                judgment("fill a form", "aw:skills/forms/SKILL.md", true),
            ],
        };
        let mut queries = vec![query("merge pdfs"), query("fill a form"), query("other")];
        file.apply(&mut queries).unwrap();
        assert_eq!(
            queries[0].judged,
            BTreeMap::from([
                ("aw:skills/gif/SKILL.md".to_string(), false),
                ("aw:skills/pdf-merge/SKILL.md".to_string(), true),
            ])
        );
        assert_eq!(queries[1].judged.len(), 1);
        assert!(queries[2].judged.is_empty());
    }

    #[test]
    fn a_judgment_of_a_query_not_in_the_set_is_refused() {
        let file = JudgmentFile {
            corpus: "c".into(),
            judge: String::new(),
            judgments: vec![
                judgment("merge pdfs", "k", true),
                judgment("merge pdf", "k", true),
            ],
        };
        let err = file.apply(&mut [query("merge pdfs")]).unwrap_err();
        assert_eq!(
            err,
            UnknownQuery {
                index: 1,
                query: "merge pdf".into()
            }
        );
    }
}
