//! Turning the parsed skills of one version into the artifact's files:
//! documents (validated), the catalog, and the manifest.

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::json;

use agentfinder_skills_reader::contract::{
    BuilderInfo, ChunkingInfo, Document, EmbedderInfo, Manifest, MeilisearchConfig, SkippedFile,
    CATALOG_FILE, DOCUMENTS_FILE, FINDINGS_FILE, KIND_SKILL, SCHEMA_VERSION,
};

use crate::catalog::{catalog_entry, catalog_head, CatalogHost};
use crate::config::Config;
use crate::diagnostics::Finding;
use crate::document::{skill_documents, BuildContext, SkillInput};
use crate::embed::{EmbedError, Embedder};
use crate::findings::{FindingsLog, FindingsSummary};
use crate::marketplace::Marketplace;
use crate::read_skills::Extracted;
use crate::validate::{check_skill, DocumentChecker, DocumentError};
use crate::variant::build_digest;
use crate::walk::skill_folder;

/// Everything known about the version being built.
#[derive(Debug, Clone)]
pub struct VersionInfo {
    /// Commit (or folder) id.
    pub commit: String,
    /// Commit time, RFC 3339.
    pub commit_time: String,
    /// Branch or ref.
    pub branch: String,
    /// When each skill file last changed in the source, Unix seconds, by
    /// path; a file missing from it gets no `last_updated`.
    pub file_times: std::collections::HashMap<String, i64>,
}

/// Assembling failed.
#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    /// A document broke the contract (a bug, or an id collision).
    #[error(transparent)]
    Document(#[from] DocumentError),
    /// A sink could not be written.
    #[error("writing the artifact: {0}")]
    Io(#[from] std::io::Error),
    /// The embed stage failed.
    #[error(transparent)]
    Embed(#[from] EmbedError),
}

/// What the build found, besides the documents.
#[derive(Debug, Clone)]
pub struct Assembled {
    /// The manifest, without file digests yet.
    pub manifest: Manifest,
    /// Counts and examples of the warnings and skips (all are in the findings file).
    pub findings: FindingsSummary,
    /// Vectors computed by the model, and found in the cache.
    pub embedded: u64,
    /// Vectors found in the cache.
    pub cached: u64,
    /// Seconds the model spent computing `embedded` vectors.
    pub embed_seconds: f64,
}

/// The three files an assembler writes.
pub struct Sinks<W: Write> {
    /// `hf-skills.ndjson`.
    pub documents: W,
    /// `ai-catalog.json`.
    pub catalog: W,
    /// `findings.ndjson`.
    pub findings: W,
}

/// Streams skills, in path order, into NDJSON documents, catalog entries and
/// findings, keeping only counts, a few examples and one entry per skill
/// name in memory.
pub struct Assembler<'a, W: Write> {
    config: &'a Config,
    version: VersionInfo,
    ctx: BuildContext,
    host: CatalogHost,
    repo_name: String,
    marketplace: &'a Marketplace,
    documents: W,
    catalog: W,
    catalog_entries: u64,
    findings: FindingsLog<W>,
    checker: DocumentChecker,
    skill_count: u64,
    document_count: u64,
    embedder: Option<SharedEmbedder>,
    embedded_before: (u64, u64, f64),
}

/// An embedder shared by the commits of a run.
pub type SharedEmbedder = std::sync::Arc<std::sync::Mutex<Embedder>>;

impl<'a, W: Write> Assembler<'a, W> {
    /// Gives every document a vector from `embedder`.
    pub fn with_embedder(mut self, embedder: Option<SharedEmbedder>) -> Self {
        if let Some(shared) = &embedder {
            if let Ok(e) = shared.lock() {
                self.embedded_before = (e.embedded, e.cached, e.model_seconds);
            }
        }
        self.embedder = embedder;
        self
    }

    /// Starts an artifact; `sinks` receive the files' bytes.
    pub fn new(
        config: &'a Config,
        version: VersionInfo,
        marketplace: &'a Marketplace,
        marketplace_findings: Vec<(String, Finding)>,
        sinks: Sinks<W>,
    ) -> Result<Self, AssembleError> {
        let Sinks {
            documents,
            mut catalog,
            findings,
        } = sinks;
        let mut findings = FindingsLog::new(findings);
        for (path, finding) in &marketplace_findings {
            findings.warn(path, finding)?;
        }
        let ctx = BuildContext {
            source: config.source_id(),
            repo: config.repo().to_string(),
            branch: version.branch.clone(),
            commit: version.commit.clone(),
            updated_at: version.commit_time.clone(),
            version: marketplace.version.clone(),
            links: config.link_templates(),
        };
        let host = config.catalog_host();
        let head = catalog_head(&ctx, &host);
        catalog.write_all(head.as_bytes())?;
        Ok(Self {
            config,
            version,
            repo_name: config
                .repo()
                .rsplit('/')
                .next()
                .unwrap_or("skills")
                .to_string(),
            ctx,
            host,
            marketplace,
            documents,
            catalog,
            catalog_entries: 0,
            findings,
            checker: DocumentChecker::default(),
            skill_count: 0,
            document_count: 0,
            embedder: None,
            embedded_before: (0, 0, 0.0),
        })
    }

    /// Adds skill files, in order: their documents, catalog entries and
    /// findings; the documents of all of them are embedded together, so the
    /// model's batches fill all cores.
    pub fn add_all(&mut self, items: &[Extracted]) -> Result<(), AssembleError> {
        let mut per_item: Vec<Vec<Document>> = items
            .iter()
            .map(|item| self.prepare(item))
            .collect::<Result<_, _>>()?;
        if let Some(shared) = &self.embedder {
            let mut embedder = shared
                .lock()
                .map_err(|_| std::io::Error::other("embedder lock poisoned"))?;
            let mut all: Vec<Document> = per_item.iter_mut().flat_map(std::mem::take).collect();
            embedder.embed_documents(&mut all)?;
            let mut all = all.into_iter();
            for (item, docs) in items.iter().zip(per_item.iter_mut()) {
                let count = self.document_total(item);
                docs.extend(all.by_ref().take(count));
            }
        }
        for docs in per_item {
            self.write(docs)?;
        }
        Ok(())
    }

    /// Records an item's skip or findings and returns its documents.
    fn prepare(&mut self, item: &Extracted) -> Result<Vec<Document>, AssembleError> {
        let parsed = match item.result.as_ref() {
            Ok(parsed) => parsed,
            Err(unusable) => {
                self.findings.skip(SkippedFile {
                    path: item.path.clone(),
                    class: unusable.class().to_string(),
                    reason: unusable.to_string(),
                })?;
                return Ok(Vec::new());
            }
        };
        let folder = skill_folder(&item.path, &self.repo_name).to_string();
        let path = &item.path;
        for finding in &parsed.findings {
            self.findings.warn(path, finding)?;
        }
        let checks = check_skill(
            &folder,
            parsed.text_field("name"),
            parsed.text_field("description"),
        );
        for finding in &checks {
            self.findings.warn(path, finding)?;
        }
        self.findings
            .name(path, parsed.text_field("name").unwrap_or(&folder))?;
        let last_updated = self
            .version
            .file_times
            .get(path)
            .map(|&seconds| crate::source::rfc3339(seconds));
        let input = SkillInput {
            path,
            last_updated: last_updated.as_deref(),
            skill: &folder,
            parsed,
            marketplace_description: self
                .marketplace
                .descriptions
                .get(&folder)
                .map(String::as_str),
        };
        Ok(skill_documents(&self.ctx, input))
    }

    /// How many documents an item gives (a skill document and one per chunk).
    fn document_total(&self, item: &Extracted) -> usize {
        item.result
            .as_ref()
            .as_ref()
            .map_or(0, |parsed| parsed.chunks.len() + 1)
    }

    /// Checks and writes one skill's documents and its catalog entry.
    fn write(&mut self, docs: Vec<Document>) -> Result<(), AssembleError> {
        for doc in docs {
            self.checker.check(&doc)?;
            if doc.kind == KIND_SKILL {
                self.skill_count += 1;
                let entry = catalog_entry(&self.ctx, &self.host, &doc);
                let separator = if self.catalog_entries == 0 {
                    "\n    "
                } else {
                    ",\n    "
                };
                self.catalog.write_all(separator.as_bytes())?;
                serde_json::to_writer(&mut self.catalog, &entry).map_err(std::io::Error::other)?;
                self.catalog_entries += 1;
            }
            serde_json::to_writer(&mut self.documents, &doc).map_err(std::io::Error::other)?;
            self.documents.write_all(b"\n")?;
            self.document_count += 1;
        }
        Ok(())
    }

    /// Closes the files and returns the sinks with the manifest.
    pub fn finish(mut self, generated_at: &str) -> Result<(Assembled, Sinks<W>), AssembleError> {
        self.catalog.write_all(b"\n  ]\n}\n")?;
        let (findings, findings_sink) = self.findings.finish();
        let config = self.config;
        let (mut embedder_info, mut embedded, mut cached, mut embed_seconds) = (None, 0, 0, 0.0);
        if let Some(shared) = &self.embedder {
            let mut embedder = shared
                .lock()
                .map_err(|_| std::io::Error::other("embedder lock poisoned"))?;
            embedder.flush()?;
            embedder_info = Some(embedder.info());
            embedded = embedder.embedded - self.embedded_before.0;
            cached = embedder.cached - self.embedded_before.1;
            embed_seconds = embedder.model_seconds - self.embedded_before.2;
        }
        let manifest = Manifest {
            schema_version: SCHEMA_VERSION,
            source_repo: config.repo().to_string(),
            source_url: config.source_url(),
            source_branch: self.version.branch.clone(),
            source_commit: self.version.commit.clone(),
            generated_at: generated_at.to_string(),
            document_count: self.document_count,
            index: config.output.index.clone(),
            artifact: DOCUMENTS_FILE.to_string(),
            artifacts: BTreeMap::from([
                ("documents".to_string(), DOCUMENTS_FILE.to_string()),
                ("catalog".to_string(), CATALOG_FILE.to_string()),
                ("findings".to_string(), FINDINGS_FILE.to_string()),
            ]),
            skill_count: self.skill_count,
            source_commit_time: self.version.commit_time.clone(),
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
            build_digest: Some(build_digest(config, embedder_info.is_some())),
            artifact_id: None,
            meilisearch: meilisearch_config(&config.output.index, embedder_info.as_ref()),
            embedder: embedder_info,
            skipped: findings.skipped.clone(),
            warnings: findings.warnings.clone(),
            skipped_counts: findings.skipped_counts.clone(),
            warning_counts: findings.warning_counts.clone(),
        };
        let assembled = Assembled {
            manifest,
            findings,
            embedded,
            cached,
            embed_seconds,
        };
        let sinks = Sinks {
            documents: self.documents,
            catalog: self.catalog,
            findings: findings_sink,
        };
        Ok((assembled, sinks))
    }
}

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
