//! The artifact contract: the files of a build, their names and their types.
//!
//! Everything here is read by other programs (the Space, Meilisearch, the
//! scheduler). A change that a reader would notice moves [`SCHEMA_VERSION`]
//! and is written down in `docs/artifact-contract.md`. Fields are only ever
//! added, never renamed or dropped, so that the artifact stays a drop-in
//! superset of the one the original Python builder wrote.
//!
//! - this module: the files' names, `_SUCCESS`, the manifest, locations;
//! - [`parts`]: the shared-parts layout of commit artifacts (schema 5; two
//!   levels from 8);
//! - `document` and `risk`: one line of the documents file, and the risk
//!   findings a skill carries.

mod document;
pub mod parts;
mod risk;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use document::{
    card_text, default_source_id, is_valid_document_id, is_valid_source_id, skill_card, skill_key,
    skill_key_of, Document, DocumentRules, DocumentViolation, Ships, SkillSignals, SpecConformance,
    SpecFinding, MAX_ID_BYTES, MAX_SOURCE_ID_CHARS, MAX_SUPPORTING_FILES,
};
pub use risk::{Risk, RiskFinding, Severity};

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
/// 5 stores `commits/<id>/` as shared parts ([`parts`]: the
/// manifest's `layout` and `parts`; `latest/` stays complete files), and
/// pins each document to the commit that last changed its file: `commit`,
/// the links and `updated_at` are that commit's, so an unchanged file's
/// documents are byte-identical from one commit to the next.
/// 6 added `signals` to documents (what the skill's folder ships and
/// whether its SKILL.md follows the Agent Skills specification, with the
/// evidence) and `supporting_files` to `skill` documents.
/// 7 added `signals.risk` (the static risk rules' findings over every file
/// the skill ships, and their highest severity), `content_key` (what a
/// skill is, whatever its name: its SKILL.md body and shipped files, by
/// which copies fold) and `trust` (the operator's word on the source,
/// `official`, where given) to documents.
/// 8 names a commit's buckets through lists ([`parts::PartsIndex::lists`],
/// `parts/lists/`) and spreads paths over 8,192 smaller buckets, so a
/// commit's new objects follow what it changed; documents are unchanged.
/// Readers accept 1 to 8.
pub const SCHEMA_VERSION: u32 = 8;

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
    /// but composed from shared parts ([`parts`], schema 5): a
    /// `commits/<id>/` of this builder. Absent for complete files, as in
    /// `latest/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// The parts the data files are made of (schema 5); `latest/` keeps
    /// its commit's, so the next build can reuse them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<parts::PartsIndex>,
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
