//! Turning the parsed skills of one version into the artifact's files:
//! documents (validated), the catalog, and the manifest.

use std::collections::BTreeMap;

use bytes::Bytes;
use serde_json::json;

use agentfinder_skills_reader::contract::{
    BuildWarning, BuilderInfo, ChunkingInfo, Manifest, MeilisearchConfig, SkippedFile,
    CATALOG_FILE, DOCUMENTS_FILE, KIND_SKILL, SCHEMA_VERSION,
};

use crate::catalog::{catalog, catalog_entry};
use crate::config::Config;
use crate::diagnostics::Finding;
use crate::document::{skill_documents, BuildContext, SkillInput};
use crate::extract::Extracted;
use crate::marketplace::Marketplace;
use crate::validate::{check_skill, duplicate_names, DocumentChecker, DocumentError};
use crate::walk::skill_folder;
use crate::write::ArtifactFiles;

/// Everything known about the version being built.
#[derive(Debug, Clone)]
pub struct VersionInfo {
    /// Commit (or folder) id.
    pub commit: String,
    /// Commit time, RFC 3339.
    pub commit_time: String,
    /// Branch or ref.
    pub branch: String,
}

/// The artifact's files and what the build found on the way.
#[derive(Debug, Clone)]
pub struct Assembled {
    /// Files ready to seal and write.
    pub files: ArtifactFiles,
    /// Findings per file, in path order.
    pub warnings: Vec<(String, Finding)>,
    /// Skipped files with reasons.
    pub skipped: Vec<SkippedFile>,
}

/// Builds documents, catalog and manifest from `extracted` (in path order).
pub fn assemble(
    config: &Config,
    version: &VersionInfo,
    marketplace: &Marketplace,
    marketplace_findings: Vec<(String, Finding)>,
    extracted: &[Extracted],
    generated_at: &str,
) -> Result<Assembled, DocumentError> {
    let ctx = BuildContext {
        repo: config.source.repo.clone(),
        branch: version.branch.clone(),
        commit: version.commit.clone(),
        updated_at: version.commit_time.clone(),
        version: marketplace.version.clone(),
        links: config.link_templates(),
    };
    let repo_name = config.source.repo.rsplit('/').next().unwrap_or("skills");
    let host = config.catalog_host();

    let mut warnings = marketplace_findings;
    let mut skipped = Vec::new();
    let mut documents = Vec::new();
    let mut entries = Vec::new();
    let mut names = Vec::new();
    let mut checker = DocumentChecker::default();
    let mut skill_count = 0u64;
    let mut document_count = 0u64;

    for item in extracted {
        let parsed = match &item.result {
            Ok(parsed) => parsed,
            Err(unusable) => {
                skipped.push(SkippedFile {
                    path: item.path.clone(),
                    class: unusable.class().to_string(),
                    reason: unusable.to_string(),
                });
                continue;
            }
        };
        let folder = skill_folder(&item.path, repo_name);
        warnings.extend(
            parsed
                .findings
                .iter()
                .map(|f| (item.path.clone(), f.clone())),
        );
        let checks = check_skill(
            folder,
            parsed.text_field("name"),
            parsed.text_field("description"),
        );
        warnings.extend(checks.into_iter().map(|f| (item.path.clone(), f)));
        names.push((
            item.path.as_str(),
            parsed.text_field("name").unwrap_or(folder),
        ));

        let docs = skill_documents(
            &ctx,
            SkillInput {
                path: &item.path,
                skill: folder,
                parsed,
                marketplace_description: marketplace.descriptions.get(folder).map(String::as_str),
            },
        );
        for doc in &docs {
            checker.check(doc)?;
            if doc.kind == KIND_SKILL {
                skill_count += 1;
                entries.push(catalog_entry(&ctx, &host, doc));
            }
            serde_json::to_writer(&mut documents, doc).map_err(|e| DocumentError {
                id: doc.id.clone(),
                path: doc.path.clone(),
                problem: e.to_string(),
            })?;
            documents.push(b'\n');
            document_count += 1;
        }
    }
    warnings.extend(duplicate_names(names));
    warnings.sort_by(|a, b| (&a.0, a.1.line).cmp(&(&b.0, b.1.line)));

    let mut catalog_bytes =
        serde_json::to_vec_pretty(&catalog(&ctx, &host, entries)).unwrap_or_default();
    catalog_bytes.push(b'\n');
    let manifest = Manifest {
        schema_version: SCHEMA_VERSION,
        source_repo: config.source.repo.clone(),
        source_url: config.source_url(),
        source_branch: version.branch.clone(),
        source_commit: version.commit.clone(),
        generated_at: generated_at.to_string(),
        document_count,
        index: config.output.index.clone(),
        artifact: DOCUMENTS_FILE.to_string(),
        artifacts: BTreeMap::from([
            ("documents".to_string(), DOCUMENTS_FILE.to_string()),
            ("catalog".to_string(), CATALOG_FILE.to_string()),
        ]),
        skill_count,
        source_commit_time: version.commit_time.clone(),
        files: BTreeMap::new(),
        builder: BuilderInfo {
            name: env!("CARGO_PKG_NAME").to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        },
        chunking: ChunkingInfo {
            max_chars: config.chunk.max_chars,
            overlap_chars: config.chunk.overlap_chars,
        },
        config_digest: config.digest(),
        meilisearch: meilisearch_config(&config.output.index),
        skipped: skipped.clone(),
        warnings: warnings
            .iter()
            .map(|(path, f)| BuildWarning {
                path: path.clone(),
                line: f.line,
                class: f.class.as_str().to_string(),
                message: f.message.clone(),
            })
            .collect(),
    };
    Ok(Assembled {
        files: ArtifactFiles {
            documents: Bytes::from(documents),
            catalog: Bytes::from(catalog_bytes),
            manifest,
        },
        warnings,
        skipped,
    })
}

/// The index settings a consumer applies before loading this schema.
pub fn meilisearch_config(index: &str) -> MeilisearchConfig {
    MeilisearchConfig {
        index: index.to_string(),
        primary_key: "id".to_string(),
        settings: json!({
            "searchableAttributes": [
                "skill_name", "title", "heading_path", "skill_description",
                "marketplace_description", "content", "text", "path"
            ],
            "displayedAttributes": ["*"],
            "filterableAttributes": ["repo", "skill", "kind", "path", "version", "branch", "commit"],
            "sortableAttributes": ["ordinal", "part", "updated_at"],
            "distinctAttribute": null,
        }),
    }
}
