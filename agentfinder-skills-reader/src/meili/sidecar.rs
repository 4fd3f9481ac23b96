//! The loaded-state sidecar file: which artifact the live index holds.
//!
//! Written atomically (temp file + rename) after a successful swap. It
//! never holds a URL or a key.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// What was loaded into the live index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadedState {
    /// Contract version of the loaded artifact.
    pub schema_version: u32,
    /// Its source commit.
    pub source_commit: String,
    /// sha256 of its NDJSON.
    pub documents_sha256: String,
    /// Documents loaded.
    pub document_count: u64,
    /// sha256 of the index settings applied (empty in a state recorded
    /// before it was: such an index is loaded once more).
    #[serde(default)]
    pub settings_sha256: String,
    /// The live index.
    pub index: String,
    /// When, RFC 3339.
    pub loaded_at: String,
    /// For an index loaded from many sources, what each one gave (for a
    /// single artifact, empty: the fields above say it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<LoadedSource>,
}

/// What one source gave a union load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadedSource {
    /// The source id (`.` for the store's own `latest/`).
    pub source: String,
    /// The commit (or folder version) of its `latest/`.
    pub source_commit: String,
    /// sha256 of its NDJSON.
    pub documents_sha256: String,
    /// Its documents.
    pub document_count: u64,
}

impl LoadedState {
    /// Reads the sidecar; `None` when missing or unreadable (a reload follows).
    pub fn read(path: &Path) -> Option<Self> {
        let bytes = std::fs::read(path).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Writes the sidecar atomically.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(
            ".{}.tmp-{}",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("state"),
            std::process::id()
        ));
        let mut bytes = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, path)
    }
}

impl LoadedSource {
    /// Per source, what `set` holds, for the loaded-state file.
    pub fn of_set(set: &crate::sources::ArtifactSet) -> Vec<Self> {
        set.parts
            .iter()
            .map(|p| Self {
                source: p.source.clone().unwrap_or_else(|| ".".into()),
                source_commit: p.manifest.source_commit.clone(),
                documents_sha256: p.manifest.documents_digest(),
                document_count: p.manifest.document_count,
            })
            .collect()
    }
}
