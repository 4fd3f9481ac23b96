//! Meilisearch's candidates. One result per skill: the candidates of one
//! multi-search ranked here by their words and fused with the nearest
//! vectors, as the embedded engine ranks its own ([`wide`]). Every
//! matching section (`--all-sections`), or a query with no word to
//! search: one search, in Meilisearch's own order, with
//! `showRankingScore` (and hybrid search when asked), one hit per skill
//! through its search-time `distinct` on `skill_key`.

use serde_json::Value;

use agentfinder_skills_reader::contract::skill_key_of;
use agentfinder_skills_reader::meili::{call, MeiliConfig, MeiliError};
use agentfinder_skills_reader::results::{Candidates, Hit};
use agentfinder_skills_reader::rules::query::without_ruled_out;

pub mod counts;
pub mod keywords;
pub mod wide;

/// What to ask Meilisearch.
#[derive(Debug, Clone)]
pub struct MeiliQuery<'a> {
    /// The index.
    pub index: &'a str,
    /// The words.
    pub text: &'a str,
    /// Hits wanted (one per skill unless `all_sections`).
    pub limit: usize,
    /// A filter expression (`kind = skill`, `source = "x"`).
    pub filter: Option<String>,
    /// Every matching section, not one hit per skill.
    pub all_sections: bool,
    /// Hybrid search: (embedder, semantic ratio); `None` for keywords only.
    pub hybrid: Option<(&'a str, f32)>,
    /// Weigh the keyword ranking by the share of the query's words each
    /// candidate holds (the shared rule; `eval --rules` turns it off).
    pub share_of_words: bool,
}

/// The document field one hit per skill is grouped on (schema 3).
pub const SKILL_KEY_FIELD: &str = "skill_key";

/// Searches; falls back, saying why, to keyword search when the index has
/// no such embedder, and to grouping the hits here on a server that
/// predates search-time `distinct` (before v1.14).
pub async fn candidates(
    config: &MeiliConfig,
    query: &MeiliQuery<'_>,
) -> Result<Candidates, MeiliError> {
    match find(config, query).await {
        Err(MeiliError::Rejected { message, .. })
            if query.hybrid.is_some() && message.contains("mbedder") =>
        {
            let keywords = MeiliQuery {
                hybrid: None,
                ..query.clone()
            };
            let mut found = find(config, &keywords).await?;
            found.fallback = Some(format!(
                "hybrid search unavailable ({message}); used keyword search"
            ));
            Ok(found)
        }
        other => other,
    }
}

/// One result per skill ranked here ([`wide`]), or Meilisearch's own page.
async fn find(config: &MeiliConfig, query: &MeiliQuery<'_>) -> Result<Candidates, MeiliError> {
    if !query.all_sections {
        if let Some(found) = wide::ranked(config, query, query.share_of_words).await? {
            return Ok(found);
        }
    }
    search(config, query).await
}

/// Meilisearch's own page: the hits, and (for a hybrid search) how well
/// the best matches, from its ranking score details.
async fn search(config: &MeiliConfig, query: &MeiliQuery<'_>) -> Result<Candidates, MeiliError> {
    let client = config.client()?;
    let index = client.index(query.index);
    // Meilisearch embeds `q` for the vector half too: neither half sees
    // what the query rules out.
    let text: &str = &without_ruled_out(query.text);
    let run = |distinct: bool, limit: usize| {
        let index = &index;
        async move {
            call(config, "search", || async move {
                let mut q = index.search();
                q.with_query(text)
                    .with_limit(limit)
                    .with_show_ranking_score(true);
                if let Some(filter) = &query.filter {
                    q.with_filter(filter);
                }
                if distinct {
                    q.with_distinct(SKILL_KEY_FIELD);
                }
                if let Some((embedder, ratio)) = query.hybrid {
                    q.with_hybrid(embedder, ratio)
                        .with_show_ranking_score_details(true);
                }
                q.execute::<Value>().await
            })
            .await
        }
    };
    let grouped = !query.all_sections;
    let results = match run(grouped, query.limit).await {
        Err(MeiliError::Rejected { message, .. }) if grouped && message.contains("distinct") => {
            run(false, query.limit.saturating_mul(10)).await?
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
    Ok(Candidates {
        hits: best_per_skill(hits, query.all_sections, query.limit),
        similarity,
        fallback: None,
    })
}

/// Keeps the first (best) of ranked hits of each skill unless
/// `all_sections`: the client-side half of "one hit per skill", for servers
/// without search-time `distinct` and indexes loaded before `skill_key`
/// existed (grouped on `<repo>:<path>`).
pub fn best_per_skill(
    hits: impl IntoIterator<Item = (Value, f64)>,
    all_sections: bool,
    limit: usize,
) -> Vec<Hit> {
    let mut seen = std::collections::HashSet::new();
    hits.into_iter()
        .filter(|(doc, _)| all_sections || seen.insert(skill_key_of(doc)))
        .take(limit)
        .map(|(doc, score)| Hit::new(doc, score))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
            .iter()
            .map(|hit| hit.text("id").to_string())
            .collect();
        assert_eq!(ids, ["1", "2", "4"]);
        assert_eq!(best_per_skill(hits.clone(), true, 10).len(), 5);
        assert_eq!(best_per_skill(hits, false, 2).len(), 2);
    }
}
