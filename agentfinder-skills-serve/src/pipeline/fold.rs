//! The last two steps of the results pipeline (pure): skills named as the
//! query first, and copies of a skill folded into one result.
//!
//! A query that is a skill's very name finds that skill first: users who
//! type `pdf` or `docx-fill` want the skill of that name, not one that
//! mentions it more often.
//!
//! Large collections hold many copies of a skill: AgentWorkers/skills has
//! 2,260 of its 18,434 skills in sets that share a name and a description,
//! up to 60 of one. Listed one by one they fill the first results with one
//! answer. Skills that present themselves alike (the same card,
//! [`card_text`]) are one result, at the rank of the best of them, with the
//! others' locations listed; the one shown is the oldest copy, the
//! likeliest original ([`oldest`]).

use std::collections::HashMap;

use serde_json::Value;

use agentfinder_skills_reader::results::Hit;
use agentfinder_skills_reader::rules::copies::{card_text, name_key};

/// Other locations of a result's copies listed in its `also_at`.
pub const ALSO_AT: usize = 20;

/// One result: the hit shown, and where its copies are.
#[derive(Debug, Clone, PartialEq)]
pub struct Folded {
    /// The copy shown, at the rank and score of the best of them.
    pub hit: Hit,
    /// The others' locations (`{source_id, repo, path, url}`), in rank
    /// order, at most [`ALSO_AT`].
    pub also_at: Vec<Value>,
}

/// `hits` with those whose name is the query's ([`name_key`]) moved
/// first, in their order, at the best score of the ranking.
pub fn name_first(query: &str, hits: Vec<Hit>) -> Vec<Hit> {
    let key = name_key(query);
    if key.is_empty() {
        return hits;
    }
    let top = hits.first().map_or(1.0, |h| h.score);
    let (mut named, rest): (Vec<Hit>, Vec<Hit>) = hits
        .into_iter()
        .partition(|hit| name_key(hit.text("skill_name")) == key);
    for hit in &mut named {
        hit.score = top;
    }
    named.extend(rest);
    named
}

/// Ranked hits, one per skill, as at most `limit` results: hits of one
/// card are one result at the rank and score of the best of them, shown
/// by the [`oldest`], with the others in `also_at`. A copy ranked far
/// below the first still joins its result.
pub fn fold(hits: Vec<Hit>, limit: usize) -> Vec<Folded> {
    let mut groups: Vec<(f64, Vec<Hit>)> = Vec::new();
    let mut group_of_card: HashMap<String, usize> = HashMap::new();
    for hit in hits {
        let card = card_text(hit.text("skill_name"), hit.text("skill_description"));
        match card.as_ref().and_then(|c| group_of_card.get(c)) {
            Some(&at) => groups[at].1.push(hit),
            None if groups.len() < limit => {
                if let Some(card) = card {
                    group_of_card.insert(card, groups.len());
                }
                groups.push((hit.score, vec![hit]));
            }
            None => {}
        }
    }
    groups
        .into_iter()
        .map(|(score, mut copies)| {
            let shown = oldest(copies.iter().map(|h| &h.document));
            let mut hit = copies.remove(shown);
            hit.score = score;
            let also_at = copies
                .iter()
                .take(ALSO_AT)
                .map(|h| location(&h.document))
                .collect();
            Folded { hit, also_at }
        })
        .collect()
}

/// Which of `docs` (copies, best ranked first) stands for them: the one
/// whose SKILL.md reached its content earliest (`last_updated`, RFC 3339 in
/// UTC, so its text orders as its time), an original before the copies
/// made of it; ties, and documents with no date, go to the better ranked.
pub fn oldest<'a>(docs: impl IntoIterator<Item = &'a Value>) -> usize {
    let mut best: Option<(usize, &str)> = None;
    for (at, doc) in docs.into_iter().enumerate() {
        let Some(date) = doc
            .get("last_updated")
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty())
        else {
            continue;
        };
        if best.is_none_or(|(_, earliest)| date < earliest) {
            best = Some((at, date));
        }
    }
    best.map_or(0, |(at, _)| at)
}

/// Where a document's skill is, as an entry of another result's `also_at`.
fn location(doc: &Value) -> Value {
    let field = |key: &str| doc.get(key).cloned().unwrap_or(Value::Null);
    serde_json::json!({
        "source_id": field("source"),
        "repo": field("repo"),
        "path": field("path"),
        "url": field("url"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hit(path: &str, name: &str, description: &str, date: &str, score: f64) -> Hit {
        Hit::new(
            json!({"source": "s", "repo": "o/r", "path": path, "url": format!("https://x/{path}"),
                   "skill_name": name, "skill_description": description, "last_updated": date}),
            score,
        )
    }

    #[test]
    fn copies_are_one_result_shown_by_the_oldest_at_the_best_rank() {
        let hits = vec![
            hit(
                "a/pdf",
                "pdf",
                "Read PDF files",
                "2026-05-01T00:00:00Z",
                0.9,
            ),
            hit("b/docx", "docx", "Word files", "2026-01-01T00:00:00Z", 0.8),
            hit(
                "c/pdf",
                "PDF",
                "read  pdf files",
                "2026-02-04T02:09:36Z",
                0.7,
            ),
            hit("d/x", "x", "", "2025-01-01T00:00:00Z", 0.6),
            hit("e/x", "x", "", "2025-01-01T00:00:00Z", 0.5),
            hit("f/pdf", "pdf", "Read PDF files", "", 0.4),
        ];
        let results = fold(hits.clone(), 10);
        let paths: Vec<&str> = results.iter().map(|r| r.hit.text("path")).collect();
        // No description: no card, each its own result.
        assert_eq!(paths, ["c/pdf", "b/docx", "d/x", "e/x"]);
        assert_eq!(results[0].hit.score, 0.9);
        let also: Vec<&str> = results[0]
            .also_at
            .iter()
            .map(|at| at["path"].as_str().unwrap())
            .collect();
        assert_eq!(also, ["a/pdf", "f/pdf"], "the others, in rank order");
        // Same date or none: the better ranked.
        let same = json!({"last_updated": "2026-01-01T00:00:00Z"});
        assert_eq!(oldest([&json!({}), &same, &same]), 1);
        assert_eq!(oldest([&json!({}), &json!({})]), 0);
        assert!(results[1].also_at.is_empty());
        // The limit counts results; a later copy still joins a kept one.
        let two = fold(hits, 2);
        assert_eq!(two.len(), 2);
        assert_eq!(two[0].also_at.len(), 2);
    }

    #[test]
    fn a_skill_named_as_the_query_goes_first() {
        let hits = vec![
            hit("a", "pdf-tools", "Merge PDFs", "", 0.9),
            hit("b", "Docx Fill", "Fill forms", "", 0.6),
            hit("c", "x", "y", "", 0.5),
        ];
        let order = |query: &str| -> Vec<(String, f64)> {
            name_first(query, hits.clone())
                .iter()
                .map(|h| (h.text("path").to_string(), h.score))
                .collect()
        };
        assert_eq!(
            order("docx_fill"),
            [("b".into(), 0.9), ("a".into(), 0.9), ("c".into(), 0.5)]
        );
        assert_eq!(
            order("pdf"),
            [("a".into(), 0.9), ("b".into(), 0.6), ("c".into(), 0.5)]
        );
        assert_eq!(order("  "), order("pdf"));
    }
}
