//! Artifacts written straight to a local folder, as the builder would:
//! for the tests of this crate, of the engine, and of a consumer that
//! wants a store to read without running a build. Not for production
//! artifacts (no parts, no vectors, fixed dates).

use std::collections::BTreeMap;

use crate::contract::{SuccessMarker, CATALOG_FILE, DOCUMENTS_FILE, MANIFEST_FILE, SUCCESS_FILE};
use crate::read::digest_of;
use serde_json::json;

/// A document line in the contract's shape.
pub fn document(
    commit: &str,
    skill: &str,
    kind: &str,
    ordinal: u32,
    content: &str,
) -> serde_json::Value {
    json!({
        "id": format!("o-r-{skill}-{kind}-{ordinal:03}"), "repo": "o/r", "skill": skill, "skill_name": skill,
        "skill_description": format!("{skill} description"), "marketplace_description": format!("{skill} description"),
        "skill_meta": {}, "path": format!("skills/{skill}/SKILL.md"),
        "url": format!("https://github.com/o/r/blob/{commit}/skills/{skill}/SKILL.md"),
        "raw_url": format!("https://raw.githubusercontent.com/o/r/{commit}/skills/{skill}/SKILL.md"),
        "kind": kind, "title": skill, "heading_path": [], "content": content, "text": content,
        "ordinal": ordinal, "part": 0, "parts": 1, "updated_at": "2026-01-01T00:00:00Z", "branch": "main",
        "commit": commit, "content_sha": "00", "line_start": 1, "line_end": 2
    })
}

/// Writes a complete artifact of `docs` for `commit` under `dir/<prefix>/`.
pub fn write_artifact(
    dir: &std::path::Path,
    prefix: &str,
    commit: &str,
    index: &str,
    docs: &[serde_json::Value],
) -> std::io::Result<()> {
    let root = dir.join(prefix);
    std::fs::create_dir_all(&root)?;
    let ndjson: String = docs.iter().map(|d| format!("{d}\n")).collect();
    let catalog = json!({"entries": []}).to_string();
    let mut files = BTreeMap::new();
    files.insert(DOCUMENTS_FILE.to_string(), digest_of(ndjson.as_bytes()));
    files.insert(CATALOG_FILE.to_string(), digest_of(catalog.as_bytes()));
    let skills = docs.iter().filter(|d| d["kind"] == "skill").count();
    let manifest = json!({
        "schema_version": 1, "source_repo": "o/r", "source_url": "https://github.com/o/r.git",
        "source_branch": "main", "source_commit": commit, "generated_at": "2026-01-01T00:00:00Z",
        "document_count": docs.len(), "index": index, "artifact": DOCUMENTS_FILE,
        "artifacts": {"documents": DOCUMENTS_FILE, "catalog": CATALOG_FILE}, "skill_count": skills,
        "source_commit_time": "2026-01-01T00:00:00Z", "files": files,
        "builder": {"name": "test", "version": "0"}, "chunking": {"max_chars": 12000, "overlap_chars": 800},
        "config_digest": "", "skipped": [], "warnings": [],
        "meilisearch": {"index": index, "primary_key": "id", "settings": {
            "searchableAttributes": ["skill_name", "title", "content", "text"],
            "filterableAttributes": ["repo", "skill", "kind", "path", "version", "branch", "commit"],
            "sortableAttributes": ["ordinal"],
            "embedders": {"default": {"source": "huggingFace", "model": "sentence-transformers/all-MiniLM-L6-v2",
                                      "revision": "c9745ed1d9f207416be6d2e6f8de32d1f16199bf", "documentTemplate": "{{doc.text}}"}}
        }}
    })
    .to_string();
    let mut all = files.clone();
    all.insert(MANIFEST_FILE.to_string(), digest_of(manifest.as_bytes()));
    std::fs::write(root.join(DOCUMENTS_FILE), &ndjson)?;
    std::fs::write(root.join(CATALOG_FILE), &catalog)?;
    std::fs::write(root.join(MANIFEST_FILE), &manifest)?;
    let marker = SuccessMarker {
        schema_version: 1,
        commit: commit.into(),
        generated_at: "2026-01-01T00:00:00Z".into(),
        files: all,
        artifact_id: None,
    };
    std::fs::write(root.join(SUCCESS_FILE), serde_json::to_vec(&marker)?)
}

/// A small artifact: two skills, each with a section.
pub fn sample_docs(commit: &str) -> Vec<serde_json::Value> {
    vec![
        document(commit, "pdf", "skill", 0, "Read PDF files"),
        document(
            commit,
            "pdf",
            "skill_section",
            0,
            "Merge PDF files with merge.py",
        ),
        document(
            commit,
            "gif",
            "skill",
            0,
            "Make looping GIFs for chat reactions",
        ),
        document(
            commit,
            "gif",
            "skill_section",
            0,
            "Draw eight frames and loop them",
        ),
    ]
}
