//! Copies of a skill, as both engines show them (pure): one result for
//! the skills that present themselves alike, shown by the oldest, with
//! the others' locations listed.
//!
//! Large collections hold many copies of a skill: AgentWorkers/skills has
//! 2,260 of its 18,434 skills in sets that share a name and a description,
//! up to 60 of one. Listed one by one they fill the first results with one
//! answer. The embedded engine groups its ranking by [`card_text`];
//! Meilisearch's hits (one per skill) are grouped here by
//! [`collapse_hits`].

use serde_json::Value;

/// Other locations of a result's copies listed in its `also_at`.
pub const ALSO_AT: usize = 20;

/// A skill's name as a query typed to find it is compared: lowercase, and
/// every run of characters that are not letters or digits one hyphen, at
/// neither end (`PDF Tools`, `pdf_tools` and `pdf-tools` are one name).
pub fn name_key(text: &str) -> String {
    let mut key = String::with_capacity(text.len());
    let mut gap = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if gap && !key.is_empty() {
                key.push('-');
            }
            gap = false;
            key.extend(c.to_lowercase());
        } else {
            gap = true;
        }
    }
    key
}

/// A skill's card, what copies of it share: its name and description,
/// compared without case or spacing. `None` without a description (two
/// skills of one name and no description may be anything).
pub fn card_text(name: &str, description: &str) -> Option<String> {
    let words = |text: &str| -> String {
        text.split_whitespace()
            .map(str::to_lowercase)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let description = words(description);
    (!description.is_empty()).then(|| format!("{}\n{description}", name_key(name)))
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

/// Which of `docs` (copies, best ranked first) stands for them: the one
/// whose SKILL.md reached its content earliest (`last_updated`, RFC 3339 in
/// UTC, so its text orders as its time), an original before the copies
/// made of it; ties, and documents with no date, go to the better ranked.
pub fn oldest<'a>(docs: impl IntoIterator<Item = Option<&'a Value>>) -> usize {
    let mut best: Option<(usize, &str)> = None;
    for (at, doc) in docs.into_iter().enumerate() {
        let Some(date) = doc
            .and_then(|d| d.get("last_updated"))
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

/// Lists `others` (the other copies of `doc`'s skill, in rank order) in
/// `doc`'s `also_at`, at most [`ALSO_AT`] of them; nothing without any.
pub fn list_others<'a>(doc: &mut Value, others: impl IntoIterator<Item = &'a Value>) {
    let also_at: Vec<Value> = others.into_iter().take(ALSO_AT).map(location).collect();
    if let (false, Some(object)) = (also_at.is_empty(), doc.as_object_mut()) {
        object.insert("also_at".to_string(), Value::Array(also_at));
    }
}

/// Ranked hits, one per skill, as at most `limit` results: hits of one
/// card (`skill_name` and `skill_description`, [`card_text`]) are one
/// result at the rank and score of the best of them, shown by the
/// [`oldest`], with the others in `also_at`. A copy ranked far below the
/// first still joins its result.
pub fn collapse_hits(hits: Vec<(Value, f64)>, limit: usize) -> Vec<(Value, f64)> {
    let text = |doc: &Value, key: &str| {
        doc.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut groups: Vec<(f64, Vec<Value>)> = Vec::new();
    let mut group_of_card: std::collections::HashMap<String, usize> = Default::default();
    for (doc, score) in hits {
        let card = card_text(&text(&doc, "skill_name"), &text(&doc, "skill_description"));
        match card.as_ref().and_then(|c| group_of_card.get(c)) {
            Some(&at) => groups[at].1.push(doc),
            None if groups.len() < limit => {
                if let Some(card) = card {
                    group_of_card.insert(card, groups.len());
                }
                groups.push((score, vec![doc]));
            }
            None => {}
        }
    }
    groups
        .into_iter()
        .map(|(score, mut docs)| {
            let shown = oldest(docs.iter().map(Some));
            let mut doc = docs.remove(shown);
            list_others(&mut doc, &docs);
            (doc, score)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_compare_without_case_or_separators() {
        assert_eq!(name_key("PDF Tools"), "pdf-tools");
        assert_eq!(name_key("  pdf__tools!"), "pdf-tools");
        assert_eq!(name_key("docx"), "docx");
        assert_eq!(name_key("--"), "");
        assert_eq!(
            card_text("PDF", "Read  PDF\nfiles"),
            Some("pdf\nread pdf files".into())
        );
        assert_eq!(card_text("pdf", "  "), None);
    }

    fn hit(path: &str, name: &str, description: &str, date: &str) -> Value {
        json!({"source": "s", "repo": "o/r", "path": path, "url": format!("https://x/{path}"),
               "skill_name": name, "skill_description": description, "last_updated": date})
    }

    #[test]
    fn copies_are_one_result_shown_by_the_oldest_at_the_best_rank() {
        let hits = vec![
            (
                hit("a/pdf", "pdf", "Read PDF files", "2026-05-01T00:00:00Z"),
                0.9,
            ),
            (
                hit("b/docx", "docx", "Word files", "2026-01-01T00:00:00Z"),
                0.8,
            ),
            (
                hit("c/pdf", "PDF", "read  pdf files", "2026-02-04T02:09:36Z"),
                0.7,
            ),
            (hit("d/x", "x", "", "2025-01-01T00:00:00Z"), 0.6),
            (hit("e/x", "x", "", "2025-01-01T00:00:00Z"), 0.5),
            (hit("f/pdf", "pdf", "Read PDF files", ""), 0.4),
        ];
        let results = collapse_hits(hits.clone(), 10);
        let paths: Vec<&str> = results
            .iter()
            .map(|(doc, _)| doc["path"].as_str().unwrap())
            .collect();
        // No description: no card, each its own result.
        assert_eq!(paths, ["c/pdf", "b/docx", "d/x", "e/x"]);
        assert_eq!(results[0].1, 0.9);
        let also: Vec<&str> = results[0].0["also_at"]
            .as_array()
            .unwrap()
            .iter()
            .map(|at| at["path"].as_str().unwrap())
            .collect();
        assert_eq!(also, ["a/pdf", "f/pdf"], "the others, in rank order");
        // Same date or none: the better ranked.
        let same = hit("g", "g", "g", "2026-01-01T00:00:00Z");
        assert_eq!(oldest([None, Some(&same), Some(&same)]), 1);
        assert_eq!(oldest([None, None]), 0);
        assert!(results[1].0.get("also_at").is_none());
        // The limit counts results; a later copy still joins a kept one.
        let two = collapse_hits(hits, 2);
        assert_eq!(two.len(), 2);
        assert_eq!(two[0].0["also_at"].as_array().unwrap().len(), 2);
    }
}
