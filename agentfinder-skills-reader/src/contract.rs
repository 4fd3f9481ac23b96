//! The artifact contract: the files of a build, their names and their types.
//!
//! Everything here is read by other programs (the Space, Meilisearch, the
//! scheduler). A change that a reader would notice moves [`SCHEMA_VERSION`]
//! and is written down in `docs/artifact-contract.md`. Fields are only ever
//! added, never renamed or dropped, so that the artifact stays a drop-in
//! superset of the one the original Python builder wrote.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Version of the artifact contract written into every manifest and `_SUCCESS`.
///
/// 2 added `_vectors` to documents and `embedder` to the manifest (and its
/// Meilisearch settings). 3 added `skill_key` to documents (one per
/// SKILL.md, unique across repositories: what "one hit per skill" groups
/// on), `findings.ndjson` with every warning and skip (the manifest keeps
/// counts and examples), and `artifact_id` / `build_digest`, so a commit
/// rebuilt under another configuration gets an artifact of its own.
/// 4 added `source` (the id of the source the document was built from, so
/// one index can hold many) and `last_updated` (when the SKILL.md last
/// changed in its source) to documents; ids and `skill_key` now include the
/// source, so they stay unique across sources.
/// 5 stores `commits/<id>/` as shared parts ([`crate::parts`]: the
/// manifest's `layout` and `parts`; `latest/` stays complete files), and
/// pins each document to the commit that last changed its file: `commit`,
/// the links and `updated_at` are that commit's, so an unchanged file's
/// documents are byte-identical from one commit to the next.
/// 6 added `signals` to documents (what the skill's folder ships and
/// whether its SKILL.md follows the Agent Skills specification, with the
/// evidence) and `supporting_files` to `skill` documents. Readers accept
/// 1 to 6.
pub const SCHEMA_VERSION: u32 = 6;

/// Oldest contract version this reader still reads.
pub const MIN_SCHEMA_VERSION: u32 = 1;

/// File name of the NDJSON documents.
pub const DOCUMENTS_FILE: &str = "hf-skills.ndjson";
/// File name of the AI catalog.
pub const CATALOG_FILE: &str = "ai-catalog.json";
/// File name of the manifest.
pub const MANIFEST_FILE: &str = "manifest.json";
/// File name of every warning and skip of a build, one JSON object a line
/// (schema 3): `{"path", "line"?, "class", "message", "severity": "warning"|"skipped"}`.
pub const FINDINGS_FILE: &str = "findings.ndjson";
/// File name of the completion marker, always the last file written.
pub const SUCCESS_FILE: &str = "_SUCCESS";

/// The data files every artifact has, in the order they are written;
/// `_SUCCESS` follows them and vouches for each (and for
/// [`FINDINGS_FILE`], written before the manifest, from schema 3 on).
pub const DATA_FILES: [&str; 3] = [DOCUMENTS_FILE, CATALOG_FILE, MANIFEST_FILE];

/// Warnings and skips the manifest quotes per class; the rest are in
/// [`FINDINGS_FILE`] only, so the manifest stays small whatever the corpus.
pub const MANIFEST_EXAMPLES_PER_CLASS: usize = 5;

/// `kind` of the one document per skill.
pub const KIND_SKILL: &str = "skill";
/// `kind` of a document holding one chunk of a SKILL.md section.
pub const KIND_SECTION: &str = "skill_section";

/// Media type of a catalog entry and of a search result.
pub const SKILL_MEDIA_TYPE: &str = "application/ai-skill";

/// The sha256 and byte size of one file of an artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDigest {
    /// Lowercase hex sha256 of the file's bytes.
    pub sha256: String,
    /// Size of the file in bytes.
    pub size: u64,
}

/// Content of `_SUCCESS`: written last, it vouches for every other file.
///
/// A reader trusts a directory only when this file is present and every file
/// it reads matches the digest named here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuccessMarker {
    /// Schema version of the artifact.
    pub schema_version: u32,
    /// The source commit (or folder digest) the artifact was built from.
    pub commit: String,
    /// When the build finished, RFC 3339 UTC.
    pub generated_at: String,
    /// Digest and size of each data file, by file name.
    pub files: BTreeMap<String, FileDigest>,
    /// The artifact's id: the folder name under `commits/` (schema 3): the
    /// commit, or `<commit>.<build digest>` for a rebuild of a commit under
    /// another configuration. Absent before schema 3, where it is the commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
}

impl SuccessMarker {
    /// The folder name under `commits/` this marker belongs in.
    pub fn artifact_id(&self) -> &str {
        self.artifact_id.as_deref().unwrap_or(&self.commit)
    }
}

/// Builder that wrote an artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuilderInfo {
    /// Program name.
    pub name: String,
    /// Program version.
    pub version: String,
}

/// The chunking parameters a build used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkingInfo {
    /// Longest chunk, in characters, except where one line alone is longer.
    pub max_chars: usize,
    /// Characters of trailing context repeated at the start of the next part.
    pub overlap_chars: usize,
}

/// A SKILL.md that was left out of the artifact, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedFile {
    /// Path of the file in the source.
    pub path: String,
    /// Machine-readable reason class (`not-utf8`, `empty`, `too-large`, ...).
    pub class: String,
    /// Human-readable reason.
    pub reason: String,
}

/// Something worth an operator's attention that did not keep a file out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildWarning {
    /// Path of the file in the source.
    pub path: String,
    /// 1-based line in that file, where one applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// Machine-readable warning class (`frontmatter-recovered`, `name-invalid`, ...).
    pub class: String,
    /// Human-readable message.
    pub message: String,
}

/// Meilisearch index configuration a consumer applies before loading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeilisearchConfig {
    /// Name of the live index.
    pub index: String,
    /// Primary key of the documents.
    pub primary_key: String,
    /// Index settings in Meilisearch's own JSON shape (`searchableAttributes`, ...).
    pub settings: Value,
}

/// `manifest.json`: what was built, from what, and how.
///
/// The first block of fields is the Python builder's manifest, kept with the
/// same names and meaning; the rest is added by this builder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Version of this contract.
    pub schema_version: u32,
    /// `owner/name` of the source repository.
    pub source_repo: String,
    /// Where the source was read from, with any credential removed.
    pub source_url: String,
    /// Branch (or ref) the build was asked for.
    pub source_branch: String,
    /// Full commit id, or `folder-<digest>` for a plain folder.
    pub source_commit: String,
    /// When the build finished, RFC 3339 UTC.
    pub generated_at: String,
    /// Number of lines of the NDJSON file.
    pub document_count: u64,
    /// Name of the Meilisearch index the consumer loads into.
    pub index: String,
    /// File name of the NDJSON documents (kept for older consumers).
    pub artifact: String,
    /// File names of the artifact, by role (`documents`, `catalog`).
    pub artifacts: BTreeMap<String, String>,

    /// Number of `skill` documents.
    pub skill_count: u64,
    /// Commit time of the source commit, RFC 3339 UTC.
    pub source_commit_time: String,
    /// Digest and size of each data file other than the manifest itself.
    pub files: BTreeMap<String, FileDigest>,
    /// Who built it.
    pub builder: BuilderInfo,
    /// Chunking parameters.
    pub chunking: ChunkingInfo,
    /// sha256 of the effective configuration that shaped the documents.
    pub config_digest: String,
    /// Meilisearch settings to apply before loading.
    pub meilisearch: MeilisearchConfig,
    /// Files left out, with reasons: from schema 3 the first
    /// [`MANIFEST_EXAMPLES_PER_CLASS`] of each class (every one is in
    /// [`FINDINGS_FILE`]; `skipped_counts` counts them all).
    pub skipped: Vec<SkippedFile>,
    /// Warnings, per file: from schema 3 the first
    /// [`MANIFEST_EXAMPLES_PER_CLASS`] of each class (as `skipped`).
    pub warnings: Vec<BuildWarning>,
    /// Skipped files per class (schema 3).
    #[serde(default)]
    pub skipped_counts: BTreeMap<String, u64>,
    /// Warnings per class (schema 3).
    #[serde(default)]
    pub warning_counts: BTreeMap<String, u64>,
    /// The artifact's id, as in `_SUCCESS` (schema 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
    /// sha256 of what shaped the documents: the configuration digest, the
    /// schema version and whether vectors were computed (schema 3). Two
    /// builds of a commit with one digest are the same artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_digest: Option<String>,
    /// The embedder whose vectors the documents carry; `null` when the build
    /// ran without embeddings (schema 2).
    #[serde(default)]
    pub embedder: Option<EmbedderInfo>,
    /// `"parts"` when the data files are not stored in the artifact's folder
    /// but composed from shared parts ([`crate::parts`], schema 5): a
    /// `commits/<id>/` of this builder. Absent for complete files, as in
    /// `latest/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// The parts the data files are made of (schema 5); `latest/` keeps
    /// its commit's, so the next build can reuse them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<crate::parts::PartsIndex>,
}

impl Manifest {
    /// A digest of the artifact's documents, for telling two artifacts
    /// apart: the parts' root when there are parts (a commit and the
    /// `latest/` promoted from it then agree), else the documents file's sha256.
    pub fn documents_digest(&self) -> String {
        match &self.parts {
            Some(parts) => parts.root(),
            None => self
                .files
                .get(DOCUMENTS_FILE)
                .map(|d| d.sha256.clone())
                .unwrap_or_default(),
        }
    }
}

/// How document vectors were computed (schema 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedderInfo {
    /// Key in `_vectors` and in Meilisearch's `embedders`.
    pub name: String,
    /// Hugging Face Hub model id.
    pub model: String,
    /// Pinned model revision.
    pub revision: String,
    /// Width of a vector.
    pub dimensions: usize,
    /// Pooling over token vectors (`mean`, over the attention mask).
    pub pooling: String,
    /// Normalisation of the pooled vector (`l2`).
    pub normalization: String,
    /// Longest input in tokens; longer text is truncated.
    pub max_tokens: usize,
    /// Text template embedded per document kind.
    pub templates: BTreeMap<String, String>,
    /// When set, at most this many sections of a skill have a vector (those
    /// with the most text); every other section's `_vectors` names the
    /// embedder with `null` (Meilisearch's opt-out). Absent: every document
    /// has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections_per_skill: Option<usize>,
}

/// One line of `hf-skills.ndjson`: a skill, or one chunk of a section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// Meilisearch-safe id, unique within the artifact, stable across commits.
    pub id: String,
    /// `owner/name` of the source repository.
    pub repo: String,
    /// Id of the source it was built from (schema 4): `[[sources]].id`, or
    /// for the single `[source]`, [`default_source_id`] of its repository.
    #[serde(default)]
    pub source: String,
    /// Folder name of the skill.
    pub skill: String,
    /// One key per SKILL.md, unique across sources: `<source>:<repo>:<path>`
    /// (schema 4; `<repo>:<path>` in schema 3). Search groups hits on it;
    /// see [`skill_key_of`].
    #[serde(default)]
    pub skill_key: String,
    /// Frontmatter `name`, else the folder name.
    pub skill_name: String,
    /// Frontmatter `description`, or empty.
    pub skill_description: String,
    /// Description from `.claude-plugin/marketplace.json`, else the skill's own.
    pub marketplace_description: String,
    /// Every other frontmatter field.
    pub skill_meta: Map<String, Value>,
    /// Path of the SKILL.md in the repository.
    pub path: String,
    /// Web page of the file (with the heading anchor for a section), pinned to the commit.
    pub url: String,
    /// Raw bytes of the file, pinned to the commit.
    pub raw_url: String,
    /// [`KIND_SKILL`] or [`KIND_SECTION`].
    pub kind: String,
    /// The section's heading, or the skill name.
    pub title: String,
    /// Heading titles from the outermost to this section's own.
    pub heading_path: Vec<String>,
    /// Markdown source of the chunk (the description for a skill document).
    pub content: String,
    /// Name, path, heading path, title and content joined, for search.
    pub text: String,
    /// Section number in the file, from 0.
    pub ordinal: u32,
    /// Chunk number within the section, from 0.
    pub part: u32,
    /// Number of chunks of the section.
    pub parts: u32,
    /// Version from the marketplace file, where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Commit time of `commit`, RFC 3339 UTC.
    pub updated_at: String,
    /// When this SKILL.md last changed in its source, RFC 3339 UTC
    /// (schema 4): the newest commit of the first-parent history that
    /// touched it, or a plain folder's file time. `None` when the history
    /// does not reach that far (a shallow clone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<String>,
    /// The history walk stopped at its depth (`[walk] history_depth`)
    /// before reaching the change: the SKILL.md last changed at or before
    /// `last_updated` (schema 6; absent when it is exact).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub last_updated_at_or_before: bool,
    /// Branch (or ref) the build was asked for.
    pub branch: String,
    /// The commit the document is pinned to: the built commit up to
    /// schema 4; from schema 5 the newest commit at or before it that
    /// changed the file (the same bytes, so the links are permalinks).
    pub commit: String,
    /// sha256 of the whole SKILL.md file.
    pub content_sha: String,
    /// First line of the chunk in the SKILL.md, 1-based.
    pub line_start: u32,
    /// Last line of the chunk in the SKILL.md, 1-based, inclusive.
    pub line_end: u32,
    /// Facts an agent can weigh about the skill (schema 6), the same on
    /// every document of a skill: what its folder ships, and whether its
    /// SKILL.md follows the specification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signals: Option<SkillSignals>,
    /// The files of the skill's folder besides its SKILL.md, relative to
    /// the folder, in path order (schema 6; `skill` documents only, at most
    /// [`MAX_SUPPORTING_FILES`], `signals.ships.total` counts them all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supporting_files: Vec<String>,
    /// Meilisearch user-provided vectors (schema 2):
    /// `{"default": {"embeddings": [...], "regenerate": false}}`.
    #[serde(rename = "_vectors", default, skip_serializing_if = "Option::is_none")]
    pub vectors: Option<Value>,
}

/// Most paths a `skill` document lists in `supporting_files`.
pub const MAX_SUPPORTING_FILES: usize = 200;

/// Facts about a skill read from its source (schema 6): no score, each with
/// what it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillSignals {
    /// What the skill's folder holds besides its SKILL.md.
    pub ships: Ships,
    /// Whether the SKILL.md follows the Agent Skills specification.
    pub spec: SpecConformance,
}

/// The files of a skill's folder besides its SKILL.md (files of a skill
/// folder nested inside it belong to that skill), counted by the folders
/// the Agent Skills specification names and by file extension.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ships {
    /// Every file.
    pub total: u32,
    /// Files under `scripts/`.
    pub scripts: u32,
    /// Files under `references/`.
    pub references: u32,
    /// Files under `assets/`.
    pub assets: u32,
    /// The rest.
    pub other: u32,
    /// Files by lowercase extension (`""` for none).
    pub kinds: BTreeMap<String, u32>,
}

/// Whether a SKILL.md follows the specification, and the findings that say
/// it does not (each with its line of the file).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecConformance {
    /// No rule of the specification is broken.
    pub conforms: bool,
    /// The broken rules: finding class and line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<SpecFinding>,
}

/// One broken rule of the specification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecFinding {
    /// The warning class (as in `findings.ndjson`).
    pub class: String,
    /// 1-based line of the SKILL.md, where one applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// How much a risk finding matters, lowest first; `none` is the level of
/// a skill with no finding (a finding is never `none`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// No finding.
    #[default]
    None,
    /// Worth knowing; no harm expected.
    Info,
    /// Unusual, harmless in most skills.
    Low,
    /// Does something an agent should look at before running it (an
    /// installer piped to a shell from its publisher's own domain).
    Medium,
    /// Looks like an attack or hides what it does.
    High,
    /// What known attacks do: credentials sent away, a payload fetched or
    /// decoded and run.
    Critical,
}

impl Severity {
    /// Every level, lowest first.
    pub const ALL: [Severity; 6] = [
        Severity::None,
        Severity::Info,
        Severity::Low,
        Severity::Medium,
        Severity::High,
        Severity::Critical,
    ];

    /// Its name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Info => "info",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Critical => "critical",
        }
    }

    /// The level named `text` (any case).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|level| level.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing a static rule found in a skill's files, with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RiskFinding {
    /// The rule's class (`credential-exfiltration`, `download-execute`, ...).
    pub class: String,
    /// How much it matters.
    pub severity: Severity,
    /// The file, relative to the skill's folder (`SKILL.md`, `scripts/setup.sh`).
    pub file: String,
    /// 1-based line of the file, where one applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// What was found, as written (cut short).
    pub excerpt: String,
    /// Why it matters.
    pub why: String,
}

/// The risk findings of a skill, and its level: the highest severity
/// among them (`none` without any). Evidence, not a score.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Risk {
    /// The highest severity found.
    pub level: Severity,
    /// What was found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<RiskFinding>,
}

impl Risk {
    /// The risk of `findings`: their highest severity, and them.
    pub fn of(findings: Vec<RiskFinding>) -> Self {
        Self {
            level: findings
                .iter()
                .map(|f| f.severity)
                .max()
                .unwrap_or_default(),
            findings,
        }
    }
}

/// The key of the skill a document (as JSON) belongs to: its `skill_key`,
/// or for documents before schema 3, `<repo>:<path>`.
pub fn skill_key_of(document: &Value) -> String {
    match document.get("skill_key").and_then(Value::as_str) {
        Some(key) if !key.is_empty() => key.to_string(),
        _ => {
            let text = |k: &str| document.get(k).and_then(Value::as_str).unwrap_or_default();
            format!("{}:{}", text("repo"), text("path"))
        }
    }
}

/// The `skill_key` of the SKILL.md at `path` in `repo`, built from `source`.
pub fn skill_key(source: &str, repo: &str, path: &str) -> String {
    format!("{source}:{repo}:{path}")
}

/// The source id a single `[source]` gets when none is given: its
/// repository's `owner/name` in lowercase with every run of other
/// characters than `[a-z0-9]` as one `-` (`huggingface/skills` ->
/// `huggingface-skills`).
pub fn default_source_id(repo: &str) -> String {
    let mut id = String::with_capacity(repo.len());
    for c in repo.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            id.push(c);
        } else if !id.is_empty() && !id.ends_with('-') {
            id.push('-');
        }
    }
    let id = id.trim_end_matches('-');
    if id.is_empty() {
        "default".to_string()
    } else {
        id.chars().take(MAX_SOURCE_ID_CHARS).collect()
    }
}

/// Longest source id: it is part of paths (`sources/<id>/`), document ids
/// and results.
pub const MAX_SOURCE_ID_CHARS: usize = 64;

/// Whether `id` can name a source: 1 to [`MAX_SOURCE_ID_CHARS`] of
/// `[a-z0-9_-]`, starting with a letter or digit.
pub fn is_valid_source_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_SOURCE_ID_CHARS
        && id.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// Longest id Meilisearch accepts, in bytes.
pub const MAX_ID_BYTES: usize = 511;

/// Whether `id` is a valid Meilisearch document id: 1 to 511 bytes of
/// `[A-Za-z0-9_-]`.
pub fn is_valid_document_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_BYTES
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A document that breaks the per-document rules of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DocumentViolation {
    /// The id is not 1 to 511 bytes of `[A-Za-z0-9_-]`.
    #[error("id is not Meilisearch-safe")]
    InvalidId,
    /// Another document of the artifact has the same id.
    #[error("id is not unique")]
    DuplicateId,
    /// `content` is empty or blank.
    #[error("content is empty")]
    EmptyContent,
}

/// The per-document rules of the contract, over a stream of documents:
/// a valid id, never seen before in the artifact, and non-empty content.
/// The builder checks every document it writes with it, readers every
/// document they read. Ids are remembered as 64-bit hashes (8 bytes each).
#[derive(Debug, Default)]
pub struct DocumentRules {
    ids: std::collections::HashSet<u64>,
}

impl DocumentRules {
    /// Checks the next document.
    pub fn check(&mut self, doc: &Document) -> Result<(), DocumentViolation> {
        use std::hash::{Hash, Hasher};
        if !is_valid_document_id(&doc.id) {
            return Err(DocumentViolation::InvalidId);
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        doc.id.hash(&mut hasher);
        if !self.ids.insert(hasher.finish()) {
            return Err(DocumentViolation::DuplicateId);
        }
        if doc.content.trim().is_empty() {
            return Err(DocumentViolation::EmptyContent);
        }
        Ok(())
    }
}

/// Location of one artifact directory in a store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtifactLocation {
    /// `commits/<commit>/`, immutable once complete.
    Commit(String),
    /// `latest/`, moved by promotion.
    Latest,
}

impl ArtifactLocation {
    /// Parses `latest` or a commit id, as a `--commit` flag takes it.
    pub fn parse(text: &str) -> Self {
        if text == "latest" {
            Self::Latest
        } else {
            Self::Commit(text.to_string())
        }
    }

    /// The artifact id of a `commits/<id>/` location; `None` for `latest/`.
    pub fn commit_id(&self) -> Option<&str> {
        match self {
            Self::Commit(id) => Some(id),
            Self::Latest => None,
        }
    }

    /// The directory's prefix in the store, without a trailing slash.
    pub fn prefix(&self) -> String {
        match self {
            Self::Commit(commit) => format!("commits/{commit}"),
            Self::Latest => "latest".to_string(),
        }
    }

    /// Path of `file` inside this directory.
    pub fn file(&self, file: &str) -> object_store::path::Path {
        object_store::path::Path::from(format!("{}/{file}", self.prefix()))
    }
}

impl std::fmt::Display for ArtifactLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/", self.prefix())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_ids_are_derived_and_checked() {
        assert_eq!(
            default_source_id("huggingface/skills"),
            "huggingface-skills"
        );
        assert_eq!(
            default_source_id("Org.Name/My_Skills--x"),
            "org-name-my-skills-x"
        );
        assert_eq!(default_source_id("///"), "default");
        assert!(is_valid_source_id(&default_source_id("huggingface/skills")));
        assert!(is_valid_source_id("codex_plugins-2"));
        for bad in ["", "-a", "A", "a b", "a/b", &"a".repeat(65)] {
            assert!(!is_valid_source_id(bad), "{bad}");
        }
    }

    #[test]
    fn ids_follow_meilisearch_rules() {
        assert!(is_valid_document_id("huggingface-skills_a-0001"));
        assert!(!is_valid_document_id(""));
        assert!(!is_valid_document_id("a.b"));
        assert!(!is_valid_document_id("a/b"));
        assert!(!is_valid_document_id("é"));
        assert!(is_valid_document_id(&"a".repeat(511)));
        assert!(!is_valid_document_id(&"a".repeat(512)));
    }

    #[test]
    fn locations_map_to_contract_paths() {
        assert_eq!(
            ArtifactLocation::parse("abc").file(SUCCESS_FILE).as_ref(),
            "commits/abc/_SUCCESS"
        );
        assert_eq!(
            ArtifactLocation::parse("latest")
                .file(MANIFEST_FILE)
                .as_ref(),
            "latest/manifest.json"
        );
    }
}
