//! The tables of `pipeline.toml` (`[source]`, `[walk]`, `[embed]`, ...),
//! one struct each, with their defaults.

use serde::{Deserialize, Serialize};

use crate::chunk::ChunkOptions;
use crate::embed::EmbedDevice;
use crate::parse::ParseOptions;

/// `[engine]`: the embedded search engine's local index cache.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    /// Local index versions kept (the one in use and the ones used last);
    /// older ones are removed after each new one is built.
    pub keep_versions: usize,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            keep_versions: agentfinder_skills_engine::index::cache::DEFAULT_KEEP,
        }
    }
}

/// `[embed]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedConfig {
    /// Compute a vector per document (`--no-embed` turns it off).
    pub enabled: bool,
    /// Fail when the model cannot be loaded; otherwise the build goes on
    /// without vectors and says so (the manifest's `embedder` is null).
    pub required: bool,
    /// Hugging Face Hub id of the model.
    pub model: String,
    /// Pinned revision (a commit of the model repository).
    pub revision: String,
    /// Local folder with the model files (relative to the configuration
    /// file's folder); else this user's models (where
    /// `scripts/fetch-model.sh` puts them), then the Hub cache, are searched.
    pub model_dir: Option<String>,
    /// Download the model into the Hugging Face Hub cache (hf-hub) when it
    /// is in neither place; `HF_HUB_OFFLINE=1` also forbids it.
    pub download: bool,
    /// Where vectors are cached by text digest.
    pub cache_dir: String,
    /// Also keep the cache in the artifact store (`cache/embeddings/`), so a
    /// job that starts on an empty disk reuses earlier builds' vectors.
    pub share_cache: bool,
    /// A long run (a backfill) shares its new vectors at least this often,
    /// in seconds, so a job killed midway keeps most of its work.
    pub share_every_seconds: u64,
    /// Longest input in tokens.
    pub max_tokens: usize,
    /// Texts per forward pass.
    pub batch_size: usize,
    /// Most sections of one skill that get a vector of their own, besides
    /// the skill's own (name and description): those with the most text.
    /// The others are found by their keywords and through their skill's
    /// vector. 0: every section. What makes a first embed of a large
    /// collection fit a scheduled job (docs/embeddings.md).
    pub sections_per_skill: usize,
    /// Where the model runs.
    pub device: EmbedDevice,
    /// `build --embed-shard I/N`: embed only this shard's texts into the
    /// vector cache (shared through the store) and write no artifact. Not
    /// a file setting.
    #[serde(skip)]
    pub shard: Option<crate::shard::Shard>,
}

impl Default for EmbedConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            required: false,
            model: "sentence-transformers/all-MiniLM-L6-v2".into(),
            revision: "c9745ed1d9f207416be6d2e6f8de32d1f16199bf".into(),
            model_dir: None,
            download: true,
            cache_dir: ".cache/embeddings".into(),
            share_cache: true,
            share_every_seconds: 600,
            max_tokens: 256,
            batch_size: 8,
            sections_per_skill: 0,
            device: EmbedDevice::Auto,
            shard: None,
        }
    }
}

/// `[source]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SourceConfig {
    /// Id of this source in documents, results and the store (default:
    /// derived from `repo`, see
    /// [`default_source_id`](agentfinder_skills_reader::contract::default_source_id)).
    pub id: Option<String>,
    /// Default `--source`: a folder, a git repository or a URL.
    pub location: Option<String>,
    /// `owner/name` used in documents and links (default: derived from the
    /// source's URL or `origin` remote; see [`crate::source::identity`]).
    pub repo: Option<String>,
    /// Public URL recorded in the manifest (default: the URL cloned, or
    /// derived from `repo`).
    pub url: Option<String>,
    /// Branch recorded when the ref does not name one.
    pub branch: String,
    /// Where remote sources are cloned.
    pub cache_dir: String,
    /// Seconds a clone or fetch waits for the server to accept a connection.
    pub connect_timeout_secs: u64,
    /// Seconds one source of a many-source build may take, clone to
    /// promotion; past it the source is `unavailable` and the run goes on.
    pub timeout_secs: u64,
    /// Sources built at once by a many-source build.
    pub concurrency: usize,
    /// How far the operator trusts this source: `official` (its publisher's
    /// own collection) is shown before its copies elsewhere; unset or
    /// `community` decides nothing.
    pub trust: Option<Trust>,
    /// Set when this is a `[[sources]]` entry's configuration (never read
    /// from a file): advice then names the entry, not `[source]`.
    #[serde(skip)]
    pub from_entry: bool,
}

impl SourceConfig {
    /// How a user names this source's repository.
    pub fn naming_advice(&self) -> String {
        match (&self.id, self.from_entry) {
            (Some(id), true) => {
                format!("repo = \"OWNER/NAME\" in its [[sources]] entry (id = \"{id}\")")
            }
            _ => "--repo OWNER/NAME or [source].repo".to_string(),
        }
    }
}

impl Default for SourceConfig {
    fn default() -> Self {
        Self {
            id: None,
            location: None,
            repo: None,
            url: None,
            branch: "main".into(),
            cache_dir: ".cache/sources".into(),
            connect_timeout_secs: 8,
            timeout_secs: 1800,
            concurrency: 2,
            trust: None,
            from_entry: false,
        }
    }
}

/// The operator's trust in a source, stamped on its documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Trust {
    /// The publisher's own collection: its skills are the originals.
    Official,
    /// Anyone's: trusted no more than its content shows.
    Community,
}

impl Trust {
    /// Its name in documents.
    pub fn as_str(self) -> &'static str {
        match self {
            Trust::Official => "official",
            Trust::Community => "community",
        }
    }
}

/// `[walk]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WalkConfig {
    /// Globs of skill files.
    pub include: Vec<String>,
    /// Folder names never entered.
    pub exclude_dirs: Vec<String>,
    /// Path of the marketplace file.
    pub marketplace: String,
    /// Build one version per plugin skill of a Codex plugin cache (set by
    /// the `codex-plugins` preset).
    pub one_version_per_plugin: bool,
    /// Commits of the first-parent history a build walks, at most, to date
    /// each skill file by its last change; the walk stops at an anchor
    /// commit past half of it, a function of the built commit alone (see
    /// `source::bound`), and a file it does not settle is dated "at or
    /// before" that commit (0: walk the whole history).
    pub history_depth: usize,
}

/// Default of `[walk] history_depth`.
pub const DEFAULT_HISTORY_DEPTH: usize = 5_000;

impl Default for WalkConfig {
    fn default() -> Self {
        Self {
            include: vec!["**/SKILL.md".into()],
            exclude_dirs: vec!["node_modules".into(), ".git".into()],
            marketplace: ".claude-plugin/marketplace.json".into(),
            one_version_per_plugin: false,
            history_depth: DEFAULT_HISTORY_DEPTH,
        }
    }
}

/// `[parse]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ParseConfig {
    /// Larger SKILL.md files are skipped.
    pub max_file_bytes: u64,
}

impl Default for ParseConfig {
    fn default() -> Self {
        Self {
            max_file_bytes: ParseOptions::default().max_file_bytes,
        }
    }
}

/// `[chunk]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChunkConfig {
    /// Longest chunk in characters.
    pub max_chars: usize,
    /// Trailing context repeated at the start of the next part.
    pub overlap_chars: usize,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        let d = ChunkOptions::default();
        Self {
            max_chars: d.max_chars,
            overlap_chars: d.overlap_chars,
        }
    }
}

/// `[links]`: URL templates; unset ones follow the repository's host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct LinksConfig {
    /// Web page of a file.
    pub blob: Option<String>,
    /// Raw bytes of a file.
    pub raw: Option<String>,
    /// Web page of a folder.
    pub tree: Option<String>,
}

/// `[output]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OutputConfig {
    /// Artifact store: a folder or an object_store URL.
    pub store: String,
    /// Meilisearch index named in the manifest.
    pub index: String,
}

impl Default for OutputConfig {
    fn default() -> Self {
        Self {
            store: "./artifacts".into(),
            index: "hf_skills".into(),
        }
    }
}

/// `[promote]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PromoteConfig {
    /// Refuse to promote a build with fewer documents than `latest/` by more than this ratio.
    pub max_shrink_ratio: f64,
}

impl Default for PromoteConfig {
    fn default() -> Self {
        Self {
            max_shrink_ratio: 0.5,
        }
    }
}

/// `[catalog]`: host fields of `ai-catalog.json`; unset ones follow the
/// repository (its name, home page, host icon, owner).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct CatalogConfig {
    /// `host.displayName` (default: the repository's `owner/name`).
    pub display_name: Option<String>,
    /// `host.documentationUrl` (default: the repository's home page).
    pub documentation_url: Option<String>,
    /// `host.logoUrl` (default: the host's icon).
    pub logo_url: Option<String>,
    /// Tags on every entry (default: the owner and `skill`).
    pub tags: Option<Vec<String>>,
}
