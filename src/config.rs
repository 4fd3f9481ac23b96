//! `pipeline.toml`: every setting of a build, with defaults; command-line
//! flags override it.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::chunk::ChunkOptions;
use crate::embed::EmbedDevice;
use crate::parse::ParseOptions;
use crate::source::identity::RepoIdentity;
use agentfinder_skills_reader::contract::{default_source_id, is_valid_source_id};
use agentfinder_skills_reader::store::StoreOptions;

/// The configuration file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// It could not be read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// It is not valid TOML for this schema.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// What is wrong, with line and column.
        message: String,
    },
    /// A value is out of range.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Where the skills come from (one source), and how any source is reached.
    pub source: SourceConfig,
    /// Many sources, each built into `sources/<id>/` of the store.
    pub sources: Vec<SourceEntry>,
    /// Which files are skills.
    pub walk: WalkConfig,
    /// Limits of the parse stage.
    pub parse: ParseConfig,
    /// How bodies are cut.
    pub chunk: ChunkConfig,
    /// URL templates.
    pub links: LinksConfig,
    /// Where artifacts go.
    pub output: OutputConfig,
    /// Promotion safety.
    pub promote: PromoteConfig,
    /// `ai-catalog.json` host fields.
    pub catalog: CatalogConfig,
    /// How a remote artifact store is reached.
    pub store: StoreOptions,
    /// The embed stage.
    pub embed: EmbedConfig,
    /// The embedded search engine's local indexes.
    pub engine: EngineConfig,
}

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
            keep_versions: agentfinder_skills_engine::cache::DEFAULT_KEEP,
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
    /// Local folder with the model files; else the Hub cache is searched.
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
            model_dir: Some(".cache/models/all-MiniLM-L6-v2".into()),
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
    /// derived from `repo`, see [`default_source_id`]).
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
        }
    }
}

/// One `[[sources]]` entry: a source of a many-source build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SourceEntry {
    /// Short unique id: the store folder `sources/<id>/`, and the source
    /// of every document and result.
    pub id: String,
    /// An https URL, a local git repository or a plain folder; `~` and
    /// `$HOME` expand. A preset gives a default.
    pub location: Option<String>,
    /// Branch, tag or commit (default: the remote's default branch / HEAD).
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    /// `owner/name` (default: derived as for `[source].repo`).
    pub repo: Option<String>,
    /// Public URL for the manifest.
    pub url: Option<String>,
    /// Globs of skill files (default: `[walk].include`, or the preset's).
    pub include: Option<Vec<String>>,
    /// URL templates (default: the repository host's).
    pub links: LinksConfig,
    /// Built by `build`; a disabled source is left alone.
    pub enabled: bool,
    /// A known layout of skills installed on this machine.
    pub preset: Option<Preset>,
    /// This source's `[source].timeout_secs` (a large repository may need more).
    pub timeout_secs: Option<u64>,
}

impl Default for SourceEntry {
    fn default() -> Self {
        Self {
            id: String::new(),
            location: None,
            reference: None,
            repo: None,
            url: None,
            include: None,
            links: LinksConfig::default(),
            enabled: true,
            preset: None,
            timeout_secs: None,
        }
    }
}

/// Layouts of skills installed by agents, as `[[sources]].preset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Codex's own skills: `~/.codex/skills/*/SKILL.md`.
    CodexSkills,
    /// Codex's plugin cache:
    /// `~/.codex/plugins/cache/<publisher>/<plugin>/<version>/skills/<skill>/SKILL.md`,
    /// where `current` and `local` name a version: one skill is built once,
    /// from the version they name (see [`crate::walk::one_version_per_plugin`]).
    CodexPlugins,
}

impl Preset {
    /// Where the layout is on this machine (before `~` expands).
    pub fn location(self) -> &'static str {
        match self {
            Self::CodexSkills => "~/.codex/skills",
            Self::CodexPlugins => "~/.codex/plugins/cache",
        }
    }

    /// The globs of its skill files.
    pub fn include(self) -> Vec<String> {
        match self {
            Self::CodexSkills => vec!["*/SKILL.md".into()],
            Self::CodexPlugins => vec!["*/*/*/skills/*/SKILL.md".into()],
        }
    }

    /// The repository name its documents carry.
    pub fn repo(self) -> &'static str {
        match self {
            Self::CodexSkills => "local/codex-skills",
            Self::CodexPlugins => "local/codex-plugins",
        }
    }
}

/// `text` with a leading `~` and every `$HOME` / `${HOME}` replaced by
/// `home` (unchanged without one).
pub fn expand_home(text: &str, home: Option<&str>) -> String {
    let Some(home) = home.filter(|h| !h.is_empty()) else {
        return text.to_string();
    };
    let home = home.trim_end_matches('/');
    let text = text.replace("${HOME}", home).replace("$HOME", home);
    match text.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{home}{rest}"),
        _ => text,
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
    /// Commits of the first-parent history a cold build walks, at most, to
    /// date each skill file by its last change; a file the walk does not
    /// settle is dated "at or before" the oldest commit walked (0: walk
    /// the whole history).
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

impl Config {
    /// Parses TOML text; `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Self, ConfigError> {
        let config: Self = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: origin.to_string(),
            message: e.to_string(),
        })?;
        config.check(origin)?;
        Ok(config)
    }

    /// Reads a configuration file.
    pub fn load(path: &std::path::Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
            path: path.display().to_string(),
            error,
        })?;
        Self::from_toml(&text, &path.display().to_string())
    }

    /// Checks ranges.
    pub fn check(&self, origin: &str) -> Result<(), ConfigError> {
        let invalid = |message: String| {
            Err(ConfigError::Invalid {
                path: origin.to_string(),
                message,
            })
        };
        if self.chunk.max_chars < 100 {
            return invalid(format!(
                "chunk.max_chars = {} is below 100",
                self.chunk.max_chars
            ));
        }
        if self.chunk.overlap_chars * 2 > self.chunk.max_chars {
            return invalid(format!(
                "chunk.overlap_chars = {} is more than half of chunk.max_chars = {}",
                self.chunk.overlap_chars, self.chunk.max_chars
            ));
        }
        if !(0.0..=1.0).contains(&self.promote.max_shrink_ratio) {
            return invalid("promote.max_shrink_ratio must be between 0 and 1".into());
        }
        if self.walk.include.is_empty() {
            return invalid("walk.include is empty: no file would be a skill".into());
        }
        if self.source.concurrency == 0 {
            return invalid("source.concurrency must be at least 1".into());
        }
        if !self.sources.is_empty() && self.source.location.is_some() {
            return invalid(
                "[source].location and [[sources]] are both set: list the first as one of the [[sources]] (or drop it)".into(),
            );
        }
        let mut seen = std::collections::HashSet::new();
        for (n, entry) in self.sources.iter().enumerate() {
            if !is_valid_source_id(&entry.id) {
                return invalid(format!(
                    "sources[{n}].id = {:?}: use 1 to 64 of a-z, 0-9, - and _, starting with a letter or digit",
                    entry.id
                ));
            }
            if !seen.insert(entry.id.as_str()) {
                return invalid(format!("sources[{n}].id = {:?} is used twice", entry.id));
            }
            if entry.location.is_none() && entry.preset.is_none() {
                return invalid(format!(
                    "sources[{n}] ({}) has neither a location nor a preset",
                    entry.id
                ));
            }
            if entry.include.as_ref().is_some_and(Vec::is_empty) {
                return invalid(format!("sources[{n}] ({}): include is empty", entry.id));
            }
        }
        Ok(())
    }

    /// The configuration of one `[[sources]]` entry's build: this one with
    /// the entry's id, location (`~` and `$HOME` expanded with `home`),
    /// repository, globs and links, and its preset's defaults.
    pub fn for_entry(&self, entry: &SourceEntry, home: Option<&str>) -> (Config, String) {
        let mut config = self.clone();
        config.sources = Vec::new();
        let preset = entry.preset;
        let location = entry
            .location
            .clone()
            .or_else(|| preset.map(|p| p.location().to_string()))
            .unwrap_or_default();
        let location = expand_home(&location, home);
        config.source.id = Some(entry.id.clone());
        config.source.location = Some(location.clone());
        config.source.repo = entry
            .repo
            .clone()
            .or_else(|| preset.map(|p| p.repo().to_string()));
        config.source.url = entry.url.clone();
        if let Some(include) = entry
            .include
            .clone()
            .or_else(|| preset.map(Preset::include))
        {
            config.walk.include = include;
        }
        config.walk.one_version_per_plugin |= preset == Some(Preset::CodexPlugins);
        config.links = entry.links.clone();
        if let Some(timeout) = entry.timeout_secs {
            config.source.timeout_secs = timeout;
        }
        (config, location)
    }

    /// Options of the parse stage.
    pub fn parse_options(&self) -> ParseOptions {
        ParseOptions {
            max_file_bytes: self.parse.max_file_bytes,
            chunking: ChunkOptions {
                max_chars: self.chunk.max_chars,
                overlap_chars: self.chunk.overlap_chars,
            },
        }
    }

    /// This configuration with everything the repository decides filled
    /// in: `[source].repo` and `url`, the `[links]` templates of its host
    /// (none without a known host, or for a plain folder, whose version
    /// pins no commit a link could name), and the catalog's host fields.
    /// Explicit settings are kept.
    pub fn for_source(&self, identity: &RepoIdentity, pins_commit: bool) -> Config {
        let mut config = self.clone();
        config.source.repo = Some(identity.repo.clone());
        config.source.url = Some(identity.source_url.clone());
        let host = identity
            .web
            .as_ref()
            .map(|web| web.host.templates(&web.web, &web.repo));
        let links = &mut config.links;
        if pins_commit {
            links.blob = links.blob.take().or(host.as_ref().map(|t| t.blob.clone()));
            links.raw = links.raw.take().or(host.as_ref().map(|t| t.raw.clone()));
            links.tree = links.tree.take().or(host.as_ref().map(|t| t.tree.clone()));
        } else {
            *links = LinksConfig::default();
        }
        let catalog = &mut config.catalog;
        catalog
            .display_name
            .get_or_insert_with(|| identity.repo.clone());
        catalog.documentation_url.get_or_insert_with(|| {
            identity
                .web
                .as_ref()
                .map(|w| w.web.clone())
                .unwrap_or_default()
        });
        catalog.logo_url.get_or_insert_with(|| {
            identity
                .web
                .as_ref()
                .map(|w| w.host.logo_url().to_string())
                .unwrap_or_default()
        });
        catalog.tags.get_or_insert_with(|| {
            let owner = identity.repo.split('/').next().unwrap_or_default();
            let mut tags = vec![owner.to_string(), "skill".to_string()];
            tags.dedup();
            tags
        });
        config
    }

    /// The id of the source documents carry: `[source].id` (a `[[sources]]`
    /// entry's id), else derived from the repository.
    pub fn source_id(&self) -> String {
        self.source
            .id
            .clone()
            .unwrap_or_else(|| default_source_id(self.repo()))
    }

    /// The `owner/name` documents carry (set by [`Config::for_source`]).
    pub fn repo(&self) -> &str {
        self.source.repo.as_deref().unwrap_or("local/source")
    }

    /// Settings of the embed stage, or `None` when it is off.
    pub fn embed_settings(&self) -> Option<crate::embed::EmbedSettings> {
        self.embed.enabled.then(|| crate::embed::EmbedSettings {
            model: self.embed.model.clone(),
            revision: self.embed.revision.clone(),
            model_dir: self.embed.model_dir.as_ref().map(std::path::PathBuf::from),
            cache_dir: std::path::PathBuf::from(&self.embed.cache_dir),
            download: self.embed.download,
            device: self.embed.device,
            max_tokens: self.embed.max_tokens,
            batch_size: self.embed.batch_size,
            sections_per_skill: self.embed.sections_per_skill,
            shard: self.embed.shard,
        })
    }

    /// How remote sources are fetched.
    pub fn fetching(&self) -> crate::source::Fetching {
        crate::source::Fetching {
            cache_dir: std::path::PathBuf::from(&self.source.cache_dir),
            default_branch: self.source.branch.clone(),
            connect_timeout: std::time::Duration::from_secs(self.source.connect_timeout_secs),
        }
    }

    /// Public URL of the source repository for the manifest.
    pub fn source_url(&self) -> String {
        self.source.url.clone().unwrap_or_default()
    }

    /// sha256 of everything that shapes the documents (not where they are
    /// read from or written to).
    pub fn digest(&self) -> String {
        let mut shaping = serde_json::json!({
            "source": self.source_id(),
            "repo": self.source.repo,
            "walk": self.walk,
            "parse": self.parse,
            "chunk": self.chunk,
            "links": self.links,
            "catalog": self.catalog,
            "index": self.output.index,
            "embed": [self.embed.enabled, &self.embed.model, &self.embed.revision, self.embed.max_tokens],
        });
        // Only when set, so builds without a budget keep their digests.
        if self.embed.enabled && self.embed.sections_per_skill > 0 {
            shaping["embed_sections_per_skill"] = self.embed.sections_per_skill.into();
        }
        hex::encode(Sha256::digest(shaping.to_string().as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_pipeline_toml_matches_the_defaults_but_for_its_source() {
        let shipped = Config::from_toml(include_str!("../pipeline.toml"), "pipeline.toml").unwrap();
        assert_eq!(shipped.source.location.as_deref(), Some("fixtures/skills"));
        assert_eq!(shipped.source.repo.as_deref(), Some("agentfinder/fixtures"));
        let mut expected = Config::default();
        expected.source.location = shipped.source.location.clone();
        expected.source.repo = shipped.source.repo.clone();
        assert_eq!(shipped, expected);
    }

    #[test]
    fn unknown_keys_and_bad_ranges_are_errors_naming_the_file() {
        let err = Config::from_toml("[chunk]\nmax_char = 5\n", "p.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("p.toml") && err.contains("max_char"), "{err}");
        let err = Config::from_toml("[chunk]\nmax_chars = 1000\noverlap_chars = 900\n", "p.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("overlap_chars"), "{err}");
    }

    #[test]
    fn sources_are_checked_and_each_gets_its_own_configuration() {
        let bad = |text: &str| Config::from_toml(text, "p.toml").unwrap_err().to_string();
        assert!(bad("[[sources]]\nid = \"Bad Id\"\nlocation = \"x\"\n").contains("sources[0].id"));
        assert!(bad("[[sources]]\nid = \"a\"\nlocation = \"x\"\n[[sources]]\nid = \"a\"\nlocation = \"y\"\n")
            .contains("used twice"));
        assert!(bad("[[sources]]\nid = \"a\"\n").contains("neither a location nor a preset"));
        assert!(
            bad("[source]\nlocation = \"x\"\n[[sources]]\nid = \"a\"\nlocation = \"y\"\n")
                .contains("both set")
        );

        let config = Config::from_toml(
            "[[sources]]\nid = \"plugins\"\npreset = \"codex-plugins\"\ntimeout_secs = 60\n\
             [[sources]]\nid = \"hf\"\nlocation = \"$HOME/src/skills\"\ninclude = [\"skills/*/SKILL.md\"]\n",
            "p.toml",
        )
        .unwrap();
        let (plugins, location) = config.for_entry(&config.sources[0], Some("/home/me/"));
        assert_eq!(location, "/home/me/.codex/plugins/cache");
        assert_eq!(plugins.source_id(), "plugins");
        assert_eq!(plugins.repo(), "local/codex-plugins");
        assert!(plugins.walk.one_version_per_plugin);
        assert_eq!(plugins.walk.include, ["*/*/*/skills/*/SKILL.md"]);
        assert_eq!(plugins.source.timeout_secs, 60);
        let (hf, location) = config.for_entry(&config.sources[1], Some("/home/me"));
        assert_eq!(location, "/home/me/src/skills");
        assert_eq!(hf.source.repo, None, "derived from the source when built");
        assert_eq!(hf.walk.include, ["skills/*/SKILL.md"]);
        assert!(!hf.walk.one_version_per_plugin);
        assert_eq!(hf.source.timeout_secs, 1800);
        assert_ne!(plugins.digest(), hf.digest());
    }

    #[test]
    fn home_expands_at_the_start_and_as_a_variable() {
        assert_eq!(expand_home("~/x", Some("/h")), "/h/x");
        assert_eq!(expand_home("~", Some("/h")), "/h");
        assert_eq!(expand_home("${HOME}/a:$HOME/b", Some("/h")), "/h/a:/h/b");
        assert_eq!(expand_home("~other/x", Some("/h")), "~other/x");
        assert_eq!(expand_home("~/x", None), "~/x");
    }

    #[test]
    fn digest_follows_shaping_settings_only() {
        let a = Config::default();
        let mut b = a.clone();
        b.output.store = "s3://elsewhere".into();
        assert_eq!(a.digest(), b.digest());
        b.chunk.max_chars = 5000;
        assert_ne!(a.digest(), b.digest());
    }
}
