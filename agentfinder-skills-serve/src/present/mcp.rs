//! The MCP tools' answers (`search_skills`, `get_skill`): where and how
//! good outside TopGun's untrusted-content envelope, what the skill's
//! author wrote inside it.

use serde_json::{json, Map, Value};

use agentfinder_skills_reader::contract::{KIND_SECTION, KIND_SKILL};
use agentfinder_skills_reader::results::Hit;

use crate::pipeline::fold::Folded;

use super::topgun::untrusted;
use super::{heading_path, text, Answer, Presented};

/// `search_skills`' answer for `query`.
pub fn search_answer(query: &str, answer: &Answer) -> Value {
    let strength = answer.strength;
    let results: Vec<Value> = answer.results.iter().map(search_result).collect();
    json!({
        "query": query,
        "engine": answer.engine,
        "notice": answer.notice,
        "no_good_match": strength.map(|s| !s.good),
        "best_similarity": strength.map(|s| s.best_similarity),
        "results": results,
    })
}

/// One `search_skills` result: where and how good outside the envelope,
/// what the skill's author wrote inside it (with its best-matching
/// sections, else the hit itself when it is a section).
pub fn search_result(result: &Presented) -> Value {
    let mut data = Map::new();
    data.insert("name".into(), json!(result.name));
    data.insert("description".into(), json!(result.description));
    let sections: Vec<Value> = result
        .sections
        .iter()
        .map(|s| json!({"heading_path": s.heading_path, "url": s.url}))
        .collect();
    data.insert("sections".into(), json!(sections));
    if let Some(signals) = &result.signals {
        data.insert("signals".into(), signals.clone());
    }
    json!({
        "id": result.id,
        "source": result.source_id,
        "repo": result.repo,
        "path": result.path,
        "url": result.page_url,
        "score": result.score,
        "last_updated": result.last_updated,
        "last_updated_at_or_before": result.at_or_before,
        "commit": result.commit,
        "also_at": result.also_at,
        "skill": untrusted(data),
    })
}

/// `get_skill`'s answer from the skill's documents (`documents` holds at
/// least one), presented as a search result of it is.
pub fn skill_answer(key: &str, documents: &[Value]) -> Value {
    let first = documents
        .iter()
        .find(|doc| doc.get("kind").and_then(Value::as_str) == Some(KIND_SKILL))
        .unwrap_or(&documents[0]);
    let skill = super::presented(&Folded {
        hit: Hit::new(first.clone(), 0.0),
        also_at: Vec::new(),
    });
    let sections: Vec<Value> = sections_in_order(documents)
        .into_iter()
        .filter(|doc| doc.get("part").and_then(Value::as_u64).unwrap_or(0) == 0)
        .map(|doc| json!({"heading_path": heading_path(doc), "url": doc.get("url")}))
        .collect();
    let mut data = Map::new();
    data.insert("name".into(), json!(skill.name));
    data.insert("description".into(), json!(skill.description));
    data.insert("frontmatter".into(), Value::Object(skill.meta.clone()));
    data.insert("skill_md".into(), json!(reassemble(&skill, documents)));
    data.insert("sections".into(), json!(sections));
    if let Some(signals) = &skill.signals {
        data.insert("signals".into(), signals.clone());
    }
    let files = first.get("supporting_files").cloned().unwrap_or(json!([]));
    data.insert("supporting_files".into(), text::clean_value(files));
    json!({
        "id": key,
        "source": skill.source_id,
        "repo": skill.repo,
        "path": skill.path,
        "commit": skill.commit,
        "url": skill.page_url,
        "raw_url": first.get("raw_url").and_then(Value::as_str).unwrap_or_default(),
        "last_updated": skill.last_updated,
        "last_updated_at_or_before": skill.at_or_before,
        "skill": untrusted(data),
    })
}

/// The section documents, by section and part.
fn sections_in_order(documents: &[Value]) -> Vec<&Value> {
    let number = |doc: &Value, key: &str| doc.get(key).and_then(Value::as_u64).unwrap_or(0);
    let mut sections: Vec<&Value> = documents
        .iter()
        .filter(|d| d.get("kind").and_then(Value::as_str) == Some(KIND_SECTION))
        .collect();
    sections.sort_by_key(|d| (number(d, "ordinal"), number(d, "part")));
    sections
}

/// The SKILL.md as built: its frontmatter (name, description and every
/// other field, as YAML) and its body, the sections' Markdown in order,
/// a long section's parts joined without the text they repeat.
pub fn reassemble(skill: &Presented, documents: &[Value]) -> String {
    if documents.is_empty() {
        return String::new();
    }
    let mut out = String::from("---\n");
    let mut field = |key: &str, value: &Value| {
        // JSON is YAML: every value stays what it was, quotes and all.
        out.push_str(&format!("{key}: {value}\n"));
    };
    // Values cleaned before they are quoted: quoting would turn a line
    // break into `\n`, which no longer reads as one to the cleaning.
    field("name", &json!(skill.name));
    if !skill.description.is_empty() {
        field("description", &json!(skill.description));
    }
    for (key, value) in &skill.meta {
        field(key, value);
    }
    out.push_str("---\n");
    let mut previous: Option<&str> = None;
    for doc in sections_in_order(documents) {
        let content = doc
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let part = doc.get("part").and_then(Value::as_u64).unwrap_or(0);
        match (part, previous) {
            (0, _) | (_, None) => {
                // A blank line between sections.
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push('\n');
                out.push_str(content);
            }
            (_, Some(before)) => {
                let repeated = overlap(before, content);
                out.push_str(&content[repeated..]);
            }
        }
        previous = Some(content);
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    text::clean_body(&out)
}

/// Bytes at the start of `next` that repeat the end of `before` (a long
/// section's later part starts with the end of the one before it).
fn overlap(before: &str, next: &str) -> usize {
    let longest = before.len().min(next.len());
    (1..=longest)
        .rev()
        .filter(|&n| next.is_char_boundary(n) && before.is_char_boundary(before.len() - n))
        .find(|&n| before.ends_with(&next[..n]))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(ordinal: u64, part: u64, content: &str) -> Value {
        json!({"kind": "skill_section", "ordinal": ordinal, "part": part, "content": content,
               "heading_path": [], "skill_name": "pdf", "skill_description": "Reads PDFs",
               "skill_meta": {"license": "MIT"}})
    }

    #[test]
    fn a_skill_md_is_reassembled_in_order_without_repeated_overlap() {
        let docs = vec![
            json!({"kind": "skill", "skill_name": "pdf", "skill_description": "Reads PDFs",
                   "skill_meta": {"license": "MIT"}}),
            section(1, 1, "two and three. Part two."),
            section(0, 0, "Intro."),
            section(1, 0, "# Merge\n\nPart one, two and three."),
        ];
        let skill = super::super::presented(&Folded {
            hit: Hit::new(docs[0].clone(), 0.0),
            also_at: Vec::new(),
        });
        assert_eq!(
            reassemble(&skill, &docs),
            "---\nname: \"pdf\"\ndescription: \"Reads PDFs\"\nlicense: \"MIT\"\n---\n\nIntro.\n\n# Merge\n\nPart one, two and three. Part two.\n"
        );
    }

    #[test]
    fn overlap_finds_the_repeated_text_on_character_boundaries() {
        assert_eq!(overlap("abc déf", "déf ghi"), "déf".len());
        assert_eq!(overlap("abc", "xyz"), 0);
        assert_eq!(overlap("", "xyz"), 0);
    }

    #[test]
    fn a_search_result_keeps_the_authors_text_inside_the_envelope() {
        let doc = json!({"kind": "skill_section", "skill_name": "pdf\u{7}", "skill_description": "Reads PDFs",
                         "heading_path": ["Merge"], "url": "https://h/pdf/SKILL.md#merge",
                         "source": "a", "repo": "o/r", "path": "pdf/SKILL.md", "skill_key": "a:o/r:pdf/SKILL.md"});
        let result = search_result(&super::super::presented(&Folded {
            hit: Hit::new(doc, 0.5),
            also_at: Vec::new(),
        }));
        assert_eq!(result["id"], "a:o/r:pdf/SKILL.md");
        assert_eq!(result["url"], "https://h/pdf/SKILL.md");
        assert_eq!(
            result["skill"]["envelope"],
            super::super::topgun::UNTRUSTED_OPEN
        );
        assert_eq!(result["skill"]["data"]["name"], "pdf");
        assert_eq!(
            result["skill"]["data"]["sections"][0]["heading_path"],
            json!(["Merge"])
        );
    }
}
