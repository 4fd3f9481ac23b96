//! `ai-catalog.json`: one entry per skill, as the original builder wrote it,
//! with URLs pinned to the commit.

use serde_json::{json, Value};

use agentfinder_skills_reader::contract::{Document, SKILL_MEDIA_TYPE};

use super::document::BuildContext;

/// How the catalog describes its host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogHost {
    /// `host.displayName`.
    pub display_name: String,
    /// `host.documentationUrl`.
    pub documentation_url: String,
    /// `host.logoUrl`.
    pub logo_url: String,
    /// Tags every entry carries.
    pub tags: Vec<String>,
}

/// One catalog entry for a `skill` document.
pub fn catalog_entry(ctx: &BuildContext, host: &CatalogHost, skill: &Document) -> Value {
    let mut tags = host.tags.clone();
    let mut entry = json!({
        "identifier": match ctx.link(&ctx.links.tree, &skill.path) {
            link if link.is_empty() => format!("{}/{}", ctx.repo, skill.path),
            link => link,
        },
        "displayName": skill.skill_name,
        "mediaType": SKILL_MEDIA_TYPE,
        "url": skill.url,
        "description": skill.marketplace_description,
        "updatedAt": skill.updated_at,
        "metadata": {
            "source": ctx.repo,
            "path": skill.path,
            "rawUrl": skill.raw_url,
            "commit": ctx.commit,
            "skill": skill.skill,
        },
    });
    if let Some(version) = &ctx.version {
        entry["version"] = json!(version);
        tags.push(format!("version:{version}"));
    }
    entry["tags"] = json!(tags);
    entry
}

/// The catalog's opening, up to the `entries` array, whose items follow one
/// per line and which `\n  ]\n}\n` closes.
pub fn catalog_head(ctx: &BuildContext, host: &CatalogHost) -> String {
    let host = json!({
        "displayName": host.display_name,
        "identifier": match host.documentation_url.as_str() {
            "" => ctx.repo.clone(),
            url => url.to_string(),
        },
        "documentationUrl": host.documentation_url,
        "logoUrl": host.logo_url,
    });
    format!("{{\n  \"specVersion\": \"1.0\",\n  \"host\": {host},\n  \"entries\": [")
}

/// The catalog's host fields of `config`.
pub(super) fn catalog_host(config: &crate::config::Config) -> CatalogHost {
    let catalog = &config.catalog;
    CatalogHost {
        display_name: catalog.display_name.clone().unwrap_or_default(),
        documentation_url: catalog.documentation_url.clone().unwrap_or_default(),
        logo_url: catalog.logo_url.clone().unwrap_or_default(),
        tags: catalog.tags.clone().unwrap_or_default(),
    }
}
