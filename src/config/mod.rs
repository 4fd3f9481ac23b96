//! `pipeline.toml`: every setting of a build, with defaults; command-line
//! flags override it. Its tables are in [`tables`]; the sources of a
//! many-source build (`[[sources]]`) in [`sources`].

pub mod sources;
pub mod tables;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use self::sources::SourceEntry;
use self::tables::{
    CatalogConfig, ChunkConfig, EmbedConfig, EngineConfig, LinksConfig, OutputConfig, ParseConfig,
    PromoteConfig, SourceConfig, WalkConfig,
};
use crate::chunk::ChunkOptions;
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

    /// Reads a configuration file. A relative `[embed] model_dir` is
    /// relative to the file's folder, so the model is found whatever
    /// folder a command starts in.
    pub fn load(path: &std::path::Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
            path: path.display().to_string(),
            error,
        })?;
        let mut config = Self::from_toml(&text, &path.display().to_string())?;
        let folder = path.parent().unwrap_or(std::path::Path::new(""));
        if let Some(dir) = &mut config.embed.model_dir {
            if std::path::Path::new(dir.as_str()).is_relative() {
                *dir = folder.join(&*dir).display().to_string();
            }
        }
        Ok(config)
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
            history_depth: self.walk.history_depth,
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
        // Only when set, so sources without one keep their digests.
        if let Some(trust) = self.source.trust {
            shaping["trust"] = trust.as_str().into();
        }
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
    fn a_relative_model_dir_is_relative_to_the_configuration_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pipeline.toml");
        std::fs::write(&path, "[embed]\nmodel_dir = \"models/m\"\n").unwrap();
        let expected = dir.path().join("models/m").display().to_string();
        assert_eq!(Config::load(&path).unwrap().embed.model_dir, Some(expected));
        std::fs::write(&path, "[embed]\nmodel_dir = \"/opt/m\"\n").unwrap();
        assert_eq!(
            Config::load(&path).unwrap().embed.model_dir.as_deref(),
            Some("/opt/m")
        );
    }

    #[test]
    fn the_shipped_pipeline_toml_matches_the_defaults_but_for_its_source() {
        let shipped =
            Config::from_toml(include_str!("../../pipeline.toml"), "pipeline.toml").unwrap();
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
    fn digest_follows_shaping_settings_only() {
        let a = Config::default();
        let mut b = a.clone();
        b.output.store = "s3://elsewhere".into();
        assert_eq!(a.digest(), b.digest());
        b.chunk.max_chars = 5000;
        assert_ne!(a.digest(), b.digest());
    }
}
