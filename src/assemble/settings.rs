//! The Meilisearch settings an artifact declares for its consumers.

use serde_json::json;

use agentfinder_skills_reader::contract::{EmbedderInfo, MeilisearchConfig};

/// The index settings a consumer applies before loading this schema: with
/// vectors, a `huggingFace` embedder of the same model and revision, so
/// Meilisearch embeds only queries (documents carry `regenerate: false`).
pub fn meilisearch_config(index: &str, embedder: Option<&EmbedderInfo>) -> MeilisearchConfig {
    let mut settings = json!({
        "searchableAttributes": [
            "skill_name", "title", "heading_path", "skill_description",
            "marketplace_description", "content", "text", "path"
        ],
        "displayedAttributes": ["*"],
        "filterableAttributes": ["source", "repo", "skill", "skill_key", "kind", "path", "version", "branch", "commit"],
        "sortableAttributes": ["ordinal", "part", "updated_at", "last_updated"],
        "distinctAttribute": null,
        "stopWords": agentfinder_skills_reader::rules::query::STOP_WORDS,
    });
    if let Some(embedder) = embedder {
        settings["embedders"] = json!({
            embedder.name.as_str(): {
                "source": "huggingFace",
                "model": embedder.model,
                "revision": embedder.revision,
                "documentTemplate": "{{doc.text}}",
            }
        });
    }
    MeilisearchConfig {
        index: index.to_string(),
        primary_key: "id".to_string(),
        settings,
    }
}
