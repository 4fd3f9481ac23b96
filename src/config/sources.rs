//! `[[sources]]`: the sources of a many-source build, each built with its
//! own configuration ([`Config::for_entry`]), and the presets for skills
//! installed on this machine.

use serde::{Deserialize, Serialize};

use super::tables::LinksConfig;
use super::Config;

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
    /// How far the operator trusts it (`[source].trust`).
    pub trust: Option<super::tables::Trust>,
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
            trust: None,
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

impl Config {
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
        config.source.from_entry = true;
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
        config.source.trust = entry.trust;
        if let Some(timeout) = entry.timeout_secs {
            config.source.timeout_secs = timeout;
        }
        (config, location)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
