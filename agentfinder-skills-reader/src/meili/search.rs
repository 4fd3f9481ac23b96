//! Searching the live index, returning Agent Finder `SearchResult`s.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::retry::call;
use super::{MeiliConfig, MeiliError};
use crate::contract::{skill_key_of, SKILL_MEDIA_TYPE};

/// What to search.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// The live index.
    pub index: String,
    /// Most results.
    pub limit: usize,
    /// A Meilisearch filter expression (`kind = skill`).
    pub filter: Option<String>,
    /// Every matching section, not only the best hit per skill.
    pub all_sections: bool,
    /// Hybrid search: (embedder, semantic ratio); `None` for keywords only.
    pub hybrid: Option<(String, f32)>,
}

/// Hits, and why hybrid search fell back to keywords if it did.
#[derive(Debug, Clone)]
pub struct SearchResponse {
    /// The results.
    pub results: Vec<SearchResult>,
    /// The documents behind `results`, in the same order, with their
    /// ranking scores (for other result shapes, such as TopGun's).
    pub documents: Vec<(Value, f64)>,
    /// Set when the index has no such embedder and keywords were used.
    pub fallback: Option<String>,
    /// How well the best hit matches, when vectors ranked the hits
    /// (`None` for a keyword search).
    pub strength: Option<crate::rank::MatchStrength>,
    /// When asked for, each hit's best-matching sections (best first, the
    /// hit itself included when it is one), in the order of `documents`;
    /// empty otherwise.
    pub sections: Vec<Vec<(Value, f64)>>,
}

impl SearchResponse {
    /// The response holding `documents` (best first, with their scores)
    /// and `fallback`, the reason a hybrid search used keywords only.
    pub fn from_documents(documents: Vec<(Value, f64)>, fallback: Option<String>) -> Self {
        Self {
            results: documents
                .iter()
                .map(|(doc, score)| to_result(doc, *score))
                .collect(),
            documents,
            fallback,
            strength: None,
            sections: Vec::new(),
        }
    }

    /// The same, saying how well its best hit matches.
    pub fn with_similarity(mut self, best_similarity: Option<f64>) -> Self {
        self.strength = best_similarity.map(crate::rank::MatchStrength::of);
        self
    }
}

/// One hit, in Agent Finder's `SearchResult` shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    /// `<repo with / as ->:<document id>`.
    pub identifier: String,
    /// The skill.
    pub display_name: String,
    /// The section title, or the skill description for a skill hit.
    pub description: String,
    /// `application/ai-skill`.
    pub media_type: String,
    /// Link to the file (and section), pinned to the commit.
    pub url: String,
    /// Meilisearch's `_rankingScore`.
    pub score: f64,
    /// Where it came from.
    pub metadata: SearchMetadata,
}

/// `SearchResult.metadata`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchMetadata {
    /// `owner/name`.
    pub source: String,
    /// `meilisearch`.
    pub source_type: String,
    /// The skill's folder name.
    pub skill: String,
    /// Path of the SKILL.md.
    pub path: String,
    /// The skill's key, unique across sources (`<source>:<repo>:<path>`).
    pub skill_key: String,
    /// The id of the source it was built from (empty before schema 4).
    #[serde(default)]
    pub source_id: String,
    /// Source commit.
    pub commit: String,
    /// Same as `score`.
    pub ranking_score: f64,
    /// `skill` or `skill_section`.
    pub kind: String,
    /// What the skill ships and whether it follows the Agent Skills
    /// specification (schema 6; absent before), as the artifact has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signals: Option<Value>,
    /// Where else the same skill is (copies with its name and
    /// description, which the embedded engine shows as one result):
    /// `{source_id, repo, path, url}` each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_at: Vec<Value>,
}

/// [`search_detailed`]'s results.
pub async fn search(
    config: &MeiliConfig,
    query: &str,
    options: &SearchOptions,
) -> Result<Vec<SearchResult>, MeiliError> {
    search_detailed(config, query, options)
        .await
        .map(|r| r.results)
}

/// Searches with `showRankingScore` (and hybrid search when asked), one best
/// hit per skill (Meilisearch's search-time `distinct` on `skill`) unless
/// `all_sections`. Falls back, saying why, to keyword search when the index
/// has no such embedder, and to grouping the hits here on a server that
/// predates search-time `distinct` (before v1.14).
pub async fn search_detailed(
    config: &MeiliConfig,
    query: &str,
    options: &SearchOptions,
) -> Result<SearchResponse, MeiliError> {
    match keyword_or_hybrid(config, query, options).await {
        Err(MeiliError::Rejected { message, .. })
            if options.hybrid.is_some() && message.contains("mbedder") =>
        {
            let keywords = SearchOptions {
                hybrid: None,
                ..options.clone()
            };
            let (documents, _) = keyword_or_hybrid(config, query, &keywords).await?;
            let why = format!("hybrid search unavailable ({message}); used keyword search");
            Ok(SearchResponse::from_documents(documents, Some(why)))
        }
        other => other.map(|(documents, similarity)| {
            SearchResponse::from_documents(documents, None).with_similarity(similarity)
        }),
    }
}

/// The hits, and (for a hybrid search) the highest vector similarity among
/// them, from Meilisearch's ranking score details.
async fn keyword_or_hybrid(
    config: &MeiliConfig,
    query: &str,
    options: &SearchOptions,
) -> Result<(Vec<(Value, f64)>, Option<f64>), MeiliError> {
    let client = config.client()?;
    let index = client.index(&options.index);
    // Meilisearch embeds `q` for the vector half too: neither half sees
    // what the query rules out.
    let query: &str = &crate::rank::without_ruled_out(query);
    let run = |distinct: bool, limit: usize| {
        let index = &index;
        async move {
            call(config, "search", || async move {
                let mut q = index.search();
                q.with_query(query)
                    .with_limit(limit)
                    .with_show_ranking_score(true);
                if let Some(filter) = &options.filter {
                    q.with_filter(filter);
                }
                if distinct {
                    q.with_distinct(SKILL_KEY_FIELD);
                }
                if let Some((embedder, ratio)) = &options.hybrid {
                    q.with_hybrid(embedder, *ratio)
                        .with_show_ranking_score_details(true);
                }
                q.execute::<Value>().await
            })
            .await
        }
    };
    let grouped_here = !options.all_sections;
    // Copies of a skill are one result: enough hits that a page of
    // results survives their grouping.
    let wanted = if options.all_sections {
        options.limit
    } else {
        options
            .limit
            .saturating_mul(COPIES_FETCHED)
            .min(options.limit.max(MAX_FETCHED))
    };
    let results = match run(!options.all_sections, wanted).await {
        Err(MeiliError::Rejected { message, .. })
            if grouped_here && message.contains("distinct") =>
        {
            run(false, wanted.saturating_mul(10)).await?
        }
        other => other?,
    };
    let similarity = results
        .hits
        .iter()
        .filter_map(|hit| {
            hit.ranking_score_details
                .as_ref()?
                .get("vectorSort")?
                .get("similarity")?
                .as_f64()
        })
        .reduce(f64::max);
    let hits = results
        .hits
        .into_iter()
        .map(|hit| (hit.result, hit.ranking_score.unwrap_or(0.0)));
    let hits = best_per_skill(hits, options.all_sections, wanted);
    let hits = if options.all_sections {
        hits
    } else {
        crate::copies::collapse_hits(hits, options.limit)
    };
    Ok((hits, similarity))
}

/// Hits asked of Meilisearch per result wanted, for copies to fold into
/// (AgentWorkers/skills holds up to 60 copies of one skill; a few per
/// result is what a page of its results held).
pub const COPIES_FETCHED: usize = 4;

/// Most hits asked for one page of results (past it, a page may come
/// back short of copies folded in further down).
pub const MAX_FETCHED: usize = 200;

/// The document field one hit per skill is grouped on (schema 3).
pub const SKILL_KEY_FIELD: &str = "skill_key";

/// Keeps the first (best) of ranked hits of each skill unless
/// `all_sections`: the client-side half of "one hit per skill", for servers
/// without search-time `distinct` and indexes loaded before `skill_key`
/// existed (grouped on `<repo>:<path>`).
pub fn best_per_skill(
    hits: impl IntoIterator<Item = (Value, f64)>,
    all_sections: bool,
    limit: usize,
) -> Vec<(Value, f64)> {
    let mut seen = std::collections::HashSet::new();
    hits.into_iter()
        .filter(|(doc, _)| all_sections || seen.insert(skill_key_of(doc)))
        .take(limit)
        .collect()
}

fn to_result(doc: &Value, score: f64) -> SearchResult {
    let text = |key: &str| {
        doc.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let kind = text("kind");
    // What an agent reads is cleaned and bounded; the artifact keeps it whole.
    let description = crate::agent_text::description(&if kind == crate::contract::KIND_SKILL
        || text("title").is_empty()
    {
        text("skill_description")
    } else {
        text("title")
    });
    let skill = crate::agent_text::clean(&text("skill"), crate::agent_text::MAX_FIELD_CHARS);
    let repo = text("repo");
    SearchResult {
        identifier: format!("{}:{}", repo.replace('/', "-"), text("id")),
        display_name: skill.clone(),
        description,
        media_type: SKILL_MEDIA_TYPE.to_string(),
        url: text("url"),
        score,
        metadata: SearchMetadata {
            source: repo,
            source_type: "meilisearch".to_string(),
            skill,
            path: text("path"),
            skill_key: skill_key_of(doc),
            source_id: text("source"),
            commit: text("commit"),
            ranking_score: score,
            kind,
            signals: doc
                .get("signals")
                .cloned()
                .map(crate::agent_text::clean_value),
            also_at: doc
                .get("also_at")
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .cloned()
                        .map(crate::agent_text::clean_value)
                        .collect()
                })
                .unwrap_or_default(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hits_become_agent_finder_results() {
        let doc = json!({"id": "x-1", "repo": "huggingface/skills", "skill": "pdf", "kind": "skill_section",
                         "title": "Merging", "skill_description": "Reads PDFs", "url": "https://u#merging",
                         "path": "skills/pdf/SKILL.md", "commit": "abc"});
        let r = to_result(&doc, 0.9679);
        let value = serde_json::to_value(&r).unwrap();
        assert_eq!(value["identifier"], "huggingface-skills:x-1");
        assert_eq!(value["displayName"], "pdf");
        assert_eq!(value["description"], "Merging");
        assert_eq!(value["mediaType"], "application/ai-skill");
        assert_eq!(value["score"], 0.9679);
        assert_eq!(value["metadata"]["sourceType"], "meilisearch");
        assert_eq!(value["metadata"]["rankingScore"], 0.9679);
        assert_eq!(value["metadata"]["commit"], "abc");
        let skill = to_result(
            &json!({"kind": "skill", "title": "pdf", "skill_description": "Reads PDFs"}),
            1.0,
        );
        assert_eq!(skill.description, "Reads PDFs");
    }

    #[test]
    fn one_hit_per_skill_means_one_per_skill_md_not_per_folder_name() {
        let hit = |repo: &str, path: &str, id: &str, key: Option<&str>| {
            let mut doc = json!({"id": id, "repo": repo, "path": path, "skill": "pdf-tools", "kind": "skill_section"});
            if let Some(key) = key {
                doc["skill_key"] = json!(key);
            }
            doc
        };
        let hits = vec![
            (
                hit(
                    "o/a",
                    "skills/pdf-tools/SKILL.md",
                    "1",
                    Some("o/a:skills/pdf-tools/SKILL.md"),
                ),
                0.9,
            ),
            (
                hit(
                    "o/a",
                    "plugin-a/skills/pdf-tools/SKILL.md",
                    "2",
                    Some("o/a:plugin-a/skills/pdf-tools/SKILL.md"),
                ),
                0.8,
            ),
            (
                hit(
                    "o/a",
                    "skills/pdf-tools/SKILL.md",
                    "3",
                    Some("o/a:skills/pdf-tools/SKILL.md"),
                ),
                0.7,
            ),
            // Indexed before schema 3: no skill_key, grouped on repo and path.
            (hit("o/b", "skills/pdf-tools/SKILL.md", "4", None), 0.6),
            (hit("o/b", "skills/pdf-tools/SKILL.md", "5", None), 0.5),
        ];
        let ids: Vec<String> = best_per_skill(hits.clone(), false, 10)
            .into_iter()
            .map(|(doc, score)| to_result(&doc, score).identifier)
            .collect();
        assert_eq!(ids, ["o-a:1", "o-a:2", "o-b:4"]);
        assert_eq!(best_per_skill(hits.clone(), true, 10).len(), 5);
        assert_eq!(best_per_skill(hits, false, 2).len(), 2);
    }
}
