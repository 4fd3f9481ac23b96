//! Where the model's files are: `[embed].model_dir`, this user's models
//! (where `scripts/fetch-model.sh` unpacks them), the Hugging Face Hub
//! cache, or a download into it.

use std::path::PathBuf;

use super::{hub, EmbedError, EmbedSettings};

/// Environment variable naming the folder of models for this user
/// (default: [`user_models_dir`]'s).
pub const MODELS_ENV: &str = "AGENTFINDER_MODELS";

/// Where `scripts/fetch-model.sh` puts models for this user, so that every
/// command finds them whatever folder it starts in: `$AGENTFINDER_MODELS`,
/// else `$XDG_DATA_HOME/agentfinder-skills/models`, else
/// `~/.local/share/agentfinder-skills/models`.
pub fn user_models_dir() -> Option<PathBuf> {
    let set = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    set(MODELS_ENV)
        .or_else(|| set("XDG_DATA_HOME").map(|d| d.join("agentfinder-skills/models")))
        .or_else(|| set("HOME").map(|h| h.join(".local/share/agentfinder-skills/models")))
}

/// The folder a tool outside the pipeline (a bench) reads `model` from:
/// `$AGENTFINDER_MODEL_DIR`, else this user's models.
pub fn tool_model_dir(model: &str) -> Option<PathBuf> {
    std::env::var_os("AGENTFINDER_MODEL_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| user_model_dir(model))
}

/// The folder of `model` (`owner/name`) among this user's models.
pub fn user_model_dir(model: &str) -> Option<PathBuf> {
    let name = model.rsplit('/').next().filter(|n| !n.is_empty())?;
    Some(user_models_dir()?.join(name))
}

/// Where the model's files are on disk, without downloading: `model_dir`,
/// else this user's models ([`user_model_dir`]), else the Hub cache's
/// snapshot of the pinned revision; `Err` lists where it looked.
fn local_model_dir(settings: &EmbedSettings) -> Result<PathBuf, Vec<String>> {
    let mut candidates = Vec::new();
    if let Some(dir) = &settings.model_dir {
        candidates.push(dir.clone());
    }
    if let Some(dir) = user_model_dir(&settings.model) {
        candidates.push(dir);
    }
    if let Some(hub_cache) = hub::hub_cache_dir() {
        candidates.push(hub::snapshot_dir(
            &hub_cache,
            &settings.model,
            &settings.revision,
        ));
    }
    let mut looked = Vec::new();
    for dir in candidates {
        if hub::MODEL_FILES.iter().all(|f| dir.join(f).is_file()) {
            return Ok(dir);
        }
        looked.push(dir.display().to_string());
    }
    Err(looked)
}

/// Whether the model's files are on disk (nothing is loaded or downloaded):
/// what a build expects before it decides an existing artifact will do.
pub fn model_on_disk(settings: &EmbedSettings) -> bool {
    local_model_dir(settings).is_ok()
}

/// `model_dir`, else this user's models, else the Hub cache's snapshot of
/// the pinned revision, else (when `download` is on and `HF_HUB_OFFLINE` is
/// not set) a download into the Hub cache.
pub(super) fn model_dir(settings: &EmbedSettings) -> Result<PathBuf, EmbedError> {
    let looked = match local_model_dir(settings) {
        Ok(dir) => return Ok(dir),
        Err(looked) => looked,
    };
    let hub_cache = hub::hub_cache_dir();
    let missing = |why: String| EmbedError::ModelMissing {
        model: settings.model.clone(),
        revision: settings.revision.clone(),
        looked: format!("{}; {why}", looked.join(", ")),
    };
    if !settings.download {
        return Err(missing("[embed].download is off".into()));
    }
    if hub::offline() {
        return Err(missing(
            "HF_HUB_OFFLINE is set, so nothing was downloaded".into(),
        ));
    }
    let Some(hub_cache) = hub_cache else {
        return Err(missing("no Hub cache folder (set HF_HOME)".into()));
    };
    crate::logging::global().info(
        "embed",
        format!(
            "downloading {}@{} from {} into {}",
            settings.model,
            settings.revision,
            agentfinder_skills_reader::store::redact_url(&hub::endpoint()),
            hub_cache.display()
        ),
    );
    hub::download(&hub_cache, &settings.model, &settings.revision)
        .map_err(|e| missing(e.to_string()))
}
