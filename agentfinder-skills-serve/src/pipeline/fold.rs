//! The last steps of the results pipeline (pure): hits of the sources the
//! operator trusts weighed more, skills named as the query first, and
//! copies of a skill folded into one result.
//!
//! A query that is a skill's very name finds that skill first: users who
//! type `pdf` or `docx-fill` want the skill of that name, not one that
//! mentions it more often.
//!
//! Large collections hold many copies of a skill: AgentWorkers/skills has
//! 2,260 of its 18,434 skills in sets that share a name and a description,
//! up to 60 of one. Listed one by one they fill the first results with one
//! answer (tomevault-io/skills-registry holds anthropics' pdf skill under
//! other names). Copies (the same content, or the same card) are one
//! result, at the rank of the best of them, with the others' locations
//! listed; the one shown is the original as far as the operator and the
//! pipeline can tell ([`shown`]), never the one a backdated git history
//! claims.

use std::collections::HashMap;

use serde_json::Value;

use agentfinder_skills_reader::results::Hit;
use agentfinder_skills_reader::rules::copies::{card_text, name_key};
use agentfinder_skills_reader::seen::location as place;

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

/// How far down the ranking a hit from a source the operator marked
/// official (`trust = "official"`) is moved first from. In a crawl,
/// near-namesakes and reworked copies of an official skill (not folded:
/// their content differs) often outrank it on a few more words. By rank,
/// not by score, so that both engines' scores (rank-fused, or
/// Meilisearch's ranking score) move it alike. Measured with keywords
/// over the official skills among tomevault-io's and AgentWorkers' 80k
/// (`fixtures/eval/crawl`, judged), first as a weight on the embedded
/// engine's rank-fused scores (1.05 to 1.6 tried on the tuning
/// questions; 1.35, top-3 0.79 -> 0.86, puts an official hit of about
/// the first 22 first), then as this rule.
pub const OFFICIAL_FIRST_WITHIN: usize = 20;

/// `hits` with those of official sources among the first
/// [`OFFICIAL_FIRST_WITHIN`] moved first, in their order, at the best
/// score of the ranking.
pub fn trusted_first(hits: Vec<Hit>) -> Vec<Hit> {
    let within = hits.len().min(OFFICIAL_FIRST_WITHIN);
    if !hits[..within].iter().any(official) {
        return hits;
    }
    let top = hits.first().map_or(1.0, |h| h.score);
    let mut hits = hits.into_iter();
    let (mut first, near): (Vec<Hit>, Vec<Hit>) = hits.by_ref().take(within).partition(official);
    for hit in &mut first {
        hit.score = top;
    }
    first.extend(near);
    first.extend(hits);
    first
}

/// Whether `hit` is of a source the operator marked official
/// (`trust = "official"`).
fn official(hit: &Hit) -> bool {
    hit.text("trust") == "official"
}

/// When the pipeline first met a skill at each place (by [`place`]:
/// source and path; RFC 3339 times), as the
/// store records it: what tells an original from a copy made after it,
/// where a git date, which anyone can set, cannot.
pub type FirstSeen = HashMap<String, String>;

/// Ranked hits, one per skill, as at most `limit` results: hits of one
/// content (the same SKILL.md body and shipped files, `content_key`,
/// renamed or not; or the same three longest paragraphs, `body_key`,
/// whatever its card, header, footer
/// and files) or of one card ([`card_text`]) are one result at the
/// rank and score of the best of them, shown by the copy [`shown`] picks,
/// with the others in `also_at`. A copy ranked far below the first still
/// joins its result; a copy of another risk level than its result's is
/// never folded into it (it stays a result of its own, with its findings).
pub fn fold(hits: Vec<Hit>, limit: usize, first_seen: &FirstSeen) -> Vec<Folded> {
    let mut groups: Vec<(f64, Vec<Hit>)> = Vec::new();
    let mut group_of: HashMap<String, usize> = HashMap::new();
    for hit in hits {
        let keys = fold_keys(&hit);
        match keys.iter().find_map(|k| group_of.get(k)) {
            Some(&at) => {
                for key in keys {
                    group_of.entry(key).or_insert(at);
                }
                groups[at].1.push(hit);
            }
            None if groups.len() < limit => {
                for key in keys {
                    group_of.insert(key, groups.len());
                }
                groups.push((hit.score, vec![hit]));
            }
            None => {}
        }
    }
    groups
        .into_iter()
        .map(|(score, mut copies)| {
            let at = shown(&copies, first_seen);
            let mut hit = copies.remove(at);
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

/// The keys copies of `hit` share, each with its risk level (a copy of
/// another level is never folded in).
fn fold_keys(hit: &Hit) -> Vec<String> {
    let level = hit
        .document
        .pointer("/signals/risk/level")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut keys = Vec::new();
    for kind in ["content_key", "body_key"] {
        let key = hit.text(kind);
        if !key.is_empty() {
            keys.push(format!("{level}\n{kind}\n{key}"));
        }
    }
    if let Some(card) = card_text(hit.text("skill_name"), hit.text("skill_description")) {
        keys.push(format!("{level}\ncard\n{card}"));
    }
    keys
}

/// Which of `copies` (best ranked first) stands for them: one from a
/// source the operator marked official (`trust`), then the one whose
/// content the pipeline saw first (`first_seen`), then the best ranked.
/// A git date, which any copy can set, decides nothing.
pub fn shown(copies: &[Hit], first_seen: &FirstSeen) -> usize {
    let seen = |hit: &Hit| {
        let path = hit.text("path");
        first_seen
            .get(&place(hit.text("source"), path))
            .or_else(|| first_seen.get(&place("", path)))
            .map(String::as_str)
    };
    (0..copies.len())
        .min_by(|&a, &b| {
            let (x, y) = (&copies[a], &copies[b]);
            official(y)
                .cmp(&official(x))
                .then_with(|| match (seen(x), seen(y)) {
                    (Some(p), Some(q)) => p.cmp(q),
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                })
                .then(a.cmp(&b))
        })
        .unwrap_or(0)
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

    fn with(mut hit: Hit, key: &str, value: serde_json::Value) -> Hit {
        hit.document[key] = value;
        hit
    }

    fn paths(results: &[Folded]) -> Vec<&str> {
        results.iter().map(|r| r.hit.text("path")).collect()
    }

    #[test]
    fn an_official_sources_hit_near_the_top_comes_first_and_one_far_down_does_not() {
        let official = |h: Hit| with(h, "trust", json!("official"));
        let mut hits = vec![
            hit("crawl/pdf-pro", "pdf-pro", "PDF tools", "", 0.9),
            hit("crawl/docx", "docx", "Word files", "", 0.8),
            official(hit("skills/pdf", "pdf", "Read PDF files", "", 0.7)),
        ];
        for n in 0..OFFICIAL_FIRST_WITHIN {
            hits.push(hit(&format!("crawl/{n}"), &format!("c{n}"), "", "", 0.5));
        }
        hits.push(official(hit("skills/gif", "gif", "GIFs", "", 0.1)));
        let names = |hits: &[Hit]| -> Vec<String> {
            hits.iter()
                .map(|h| h.text("skill_name").to_string())
                .collect()
        };
        let moved = trusted_first(hits.clone());
        assert_eq!(names(&moved[..3]), ["pdf", "pdf-pro", "docx"]);
        assert_eq!(moved[0].score, 0.9, "at the best score of the ranking");
        assert_eq!(names(&moved).last().map(String::as_str), Some("gif"));
        // With no official source near the top, nothing moves.
        let plain: Vec<Hit> = hits
            .into_iter()
            .map(|mut h| {
                h.document["trust"] = json!(null);
                h
            })
            .collect();
        assert_eq!(names(&trusted_first(plain.clone())), names(&plain));
    }

    #[test]
    fn copies_of_a_card_are_one_result_at_the_best_rank() {
        let hits = vec![
            hit("a/pdf", "pdf", "Read PDF files", "", 0.9),
            hit("b/docx", "docx", "Word files", "", 0.8),
            hit("c/pdf", "PDF", "read  pdf files", "", 0.7),
            hit("d/x", "x", "", "", 0.6),
            hit("e/x", "x", "", "", 0.5),
            hit("f/pdf", "pdf", "Read PDF files", "", 0.4),
        ];
        let results = fold(hits.clone(), 10, &FirstSeen::new());
        // No description: no card, each its own result. Nothing tells the
        // copies apart: the best ranked is shown.
        assert_eq!(paths(&results), ["a/pdf", "b/docx", "d/x", "e/x"]);
        assert_eq!(results[0].hit.score, 0.9);
        let also: Vec<&str> = results[0]
            .also_at
            .iter()
            .map(|at| at["path"].as_str().unwrap())
            .collect();
        assert_eq!(also, ["c/pdf", "f/pdf"], "the others, in rank order");
        assert!(results[1].also_at.is_empty());
        // The limit counts results; a later copy still joins a kept one.
        let two = fold(hits, 2, &FirstSeen::new());
        assert_eq!(two.len(), 2);
        assert_eq!(two[0].also_at.len(), 2);
    }

    #[test]
    fn a_renamed_copy_of_the_same_content_is_folded_and_the_original_shown() {
        let content = |hit: Hit| with(hit, "content_key", json!("c1"));
        let hits = vec![
            // A renamed copy, backdated by its author: ranked first.
            content(hit(
                "copies/pdf-official",
                "pdf-official",
                "The best PDF skill",
                "2020-01-01T00:00:00Z",
                0.9,
            )),
            content(hit(
                "skills/pdf",
                "pdf",
                "Read PDF files",
                "2026-02-04T00:00:00Z",
                0.7,
            )),
            hit("skills/docx", "docx", "Word files", "", 0.6),
        ];
        // Nothing tells them apart but rank: the copy, git dates or not.
        let results = fold(hits.clone(), 10, &FirstSeen::new());
        assert_eq!(paths(&results), ["copies/pdf-official", "skills/docx"]);
        // The operator's trust in a source decides first...
        let official = {
            let mut hits = hits.clone();
            hits[1] = with(hits[1].clone(), "trust", json!("official"));
            hits
        };
        let results = fold(official, 10, &FirstSeen::new());
        assert_eq!(paths(&results), ["skills/pdf", "skills/docx"]);
        assert_eq!(results[0].hit.score, 0.9, "at the best rank");
        assert_eq!(results[0].also_at[0]["path"], "copies/pdf-official");
        // ... then when the pipeline first met each copy where it is
        // (copies share a content key: their places tell them apart).
        let first_seen: FirstSeen = [
            ("skills/pdf", "2026-03-01T00:00:00Z"),
            ("copies/pdf-official", "2026-03-02T00:00:00Z"),
        ]
        .map(|(path, time)| (place("s", path), time.to_string()))
        .into();
        let results = fold(hits.clone(), 10, &first_seen);
        assert_eq!(
            paths(&results)[0],
            "skills/pdf",
            "seen first, though ranked second"
        );
        // A single-source store's own record names no source.
        let own: FirstSeen = [
            ("skills/pdf", "2026-03-01T00:00:00Z"),
            ("copies/pdf-official", "2026-03-03T00:00:00Z"),
        ]
        .map(|(path, time)| (place("", path), time.to_string()))
        .into();
        assert_eq!(paths(&fold(hits, 10, &own))[0], "skills/pdf");
    }

    #[test]
    fn copies_of_one_body_fold_whatever_their_card_and_files() {
        let body = |hit: Hit, content: &str| {
            with(
                with(hit, "body_key", json!("b1")),
                "content_key",
                json!(content),
            )
        };
        let hits = vec![
            body(
                hit("copies/pdf-official", "pdf-official", "A guide", "", 0.9),
                "c2",
            ),
            hit("skills/docx", "docx", "Word files", "", 0.8),
            body(hit("skills/pdf", "pdf", "Read PDF files", "", 0.7), "c1"),
        ];
        let results = fold(hits, 10, &FirstSeen::new());
        assert_eq!(paths(&results), ["copies/pdf-official", "skills/docx"]);
        assert_eq!(results[0].also_at[0]["path"], "skills/pdf");
    }

    #[test]
    fn a_copy_with_other_risk_findings_is_never_folded_away() {
        let risky = with(
            with(
                hit("evil/pdf", "pdf", "Read PDF files", "", 0.9),
                "content_key",
                json!("c2"),
            ),
            "signals",
            json!({"risk": {"level": "critical", "findings": [{"class": "download-execute"}]}}),
        );
        let clean = with(
            with(
                hit("skills/pdf", "pdf", "Read PDF files", "", 0.8),
                "trust",
                json!("official"),
            ),
            "signals",
            json!({"risk": {"level": "none"}}),
        );
        let results = fold(vec![risky, clean], 10, &FirstSeen::new());
        assert_eq!(paths(&results), ["evil/pdf", "skills/pdf"], "two results");
        assert!(results.iter().all(|r| r.also_at.is_empty()));
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
