//! One line of `hf-skills.ndjson` (a skill, or one chunk of a section),
//! the signals a skill carries, and the rules every document follows
//! (ids, keys, non-empty content).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
    /// What the skill is, whatever it is named (schema 7): sha256 of its
    /// SKILL.md body (whitespace normalised), its frontmatter fields but
    /// `name` and `description`, and its shipped files (path in the folder
    /// and bytes). Exact copies share it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub content_key: String,
    /// sha256 of its SKILL.md body's three longest paragraphs (schema 7;
    /// white space folded, each of 200 characters or more; empty when the
    /// body has fewer): copies that added a header or footer, or changed
    /// the card, the frontmatter or the files, share it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body_key: String,
    /// The operator's trust in the source (schema 7): `official` where
    /// `trust = "official"` is set on it; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<String>,
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
    /// What the static risk rules found in the skill's files (schema 7;
    /// level `none` and no findings before).
    #[serde(default)]
    pub risk: super::Risk,
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

/// The text a `skill` document's vector is of (the manifest's
/// `templates.skill`, `"{skill_name}: {skill_description}"`): its card.
pub fn skill_card(name: &str, description: &str) -> String {
    format!("{name}: {description}")
}

/// The card of a document as the engines hold it, a section's included
/// (its skill's name and description).
pub fn card_text(document: &Value) -> String {
    let field = |key: &str| {
        document
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    skill_card(field("skill_name"), field("skill_description"))
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
}
