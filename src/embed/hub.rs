//! Where the model's files are on disk, and fetching them from the Hugging
//! Face Hub (with the `hf-hub` crate) into the Hub cache when they are not.
//!
//! The Hub cache is the one `huggingface_hub` and Meilisearch use:
//! `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`,
//! laid out as `models--<org>--<name>/snapshots/<revision>/`. The endpoint
//! is `$HF_ENDPOINT` (a mirror) or huggingface.co; `HF_HUB_OFFLINE=1` turns
//! downloads off, as it does for the Python tools; `HF_TOKEN` is sent when
//! set and never printed.

use std::path::{Path, PathBuf};

use hf_hub::api::sync::ApiBuilder;
use hf_hub::{Cache, Repo, RepoType};
use sha2::{Digest, Sha256};

use agentfinder_skills_reader::store::redact_text;

/// The files a sentence model needs.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// The public Hub.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// A download from the Hub failed.
#[derive(Debug, thiserror::Error)]
#[error("downloading {file} of {model}@{revision} from {endpoint}: {message}")]
pub struct HubError {
    /// Hub id.
    pub model: String,
    /// Revision.
    pub revision: String,
    /// The file being fetched.
    pub file: String,
    /// The endpoint, redacted.
    pub endpoint: String,
    /// Why, redacted.
    pub message: String,
}

/// The Hub cache folder, from the environment as `huggingface_hub` reads it.
pub fn hub_cache_dir() -> Option<PathBuf> {
    std::env::var_os("HF_HUB_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HF_HOME").map(|h| PathBuf::from(h).join("hub")))
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/huggingface/hub"))
        })
}

/// The snapshot folder of `model` at `revision` in the Hub cache `hub`.
pub fn snapshot_dir(hub: &Path, model: &str, revision: &str) -> PathBuf {
    hub.join(format!("models--{}", model.replace('/', "--")))
        .join("snapshots")
        .join(revision)
}

/// Whether `HF_HUB_OFFLINE` forbids downloads.
pub fn offline() -> bool {
    std::env::var("HF_HUB_OFFLINE")
        .is_ok_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
}

/// The endpoint downloads go to.
pub fn endpoint() -> String {
    std::env::var("HF_ENDPOINT")
        .ok()
        .filter(|e| !e.is_empty())
        .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string())
}

/// Downloads the model files of `model` at `revision` into the Hub cache
/// `hub` and returns the folder holding them. Files whose Hub etag is a
/// sha256 (large files) are checked against it; a mismatch deletes the
/// download so the next run fetches it again.
pub fn download(hub: &Path, model: &str, revision: &str) -> Result<PathBuf, HubError> {
    let endpoint = endpoint();
    let error = |file: &str, message: String| HubError {
        model: model.to_string(),
        revision: revision.to_string(),
        file: file.to_string(),
        endpoint: redact_text(&endpoint),
        message: redact_text(&message),
    };
    let token = std::env::var("HF_TOKEN").ok().filter(|t| !t.is_empty());
    let api = ApiBuilder::from_cache(Cache::new(hub.to_path_buf()))
        .with_endpoint(endpoint.clone())
        .with_progress(false)
        .with_retries(2)
        .with_token(token)
        .build()
        .map_err(|e| error("", e.to_string()))?;
    let repo = api.repo(Repo::with_revision(
        model.to_string(),
        RepoType::Model,
        revision.to_string(),
    ));
    let mut folder = None;
    for file in MODEL_FILES {
        // hf-hub panics on some malformed answers (a redirect without a
        // Location); a mirror's bad answer must be an error, not a crash.
        let fetched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| repo.get(file)))
            .map_err(|_| error(file, "hf-hub panicked on the Hub's answer".to_string()))?;
        let path = fetched.map_err(|e| error(file, e.to_string()))?;
        check_blob(&path).map_err(|message| error(file, message))?;
        folder = path.parent().map(Path::to_path_buf);
    }
    folder.ok_or_else(|| error("", "no files".to_string()))
}

/// Checks a downloaded file against the sha256 its blob is named by (the
/// Hub names large files' blobs by their sha256; small files by a git hash,
/// which is not checked here).
fn check_blob(path: &Path) -> Result<(), String> {
    let Ok(target) = std::fs::read_link(path) else {
        return Ok(()); // Copied, not linked: no blob name to check against.
    };
    let blob = path.parent().unwrap_or(Path::new(".")).join(&target);
    let name = blob
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    if name.len() != 64 || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(());
    }
    let mut hasher = Sha256::new();
    let mut file = std::fs::File::open(&blob).map_err(|e| format!("{}: {e}", blob.display()))?;
    std::io::copy(&mut file, &mut hasher).map_err(|e| format!("{}: {e}", blob.display()))?;
    let actual = hex::encode(hasher.finalize());
    if actual == name.to_ascii_lowercase() {
        return Ok(());
    }
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_file(&blob);
    Err(format!(
        "the file's sha256 is {actual}, the Hub says {name}; the download was deleted"
    ))
}
