//! Walk stage: which entries of a source tree are skills.
//!
//! Every path matching the configured globs (default `**/SKILL.md`), hidden
//! folders included (real repositories keep skills in `.curated/` or
//! `.system/`), with excluded folder names (`node_modules`, `.git`) pruned
//! anywhere in the path. A skill's identity is its path. Pure: it sees a
//! listing, never a disk. What each skill's folder ships besides its
//! SKILL.md is [`supporting_files`].

pub mod supporting_files;

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::source::{Entry, EntryKind};

/// The configured globs could not be compiled.
#[derive(Debug, thiserror::Error)]
#[error("invalid glob `{glob}`: {message}")]
pub struct GlobError {
    /// The glob.
    pub glob: String,
    /// Why.
    pub message: String,
}

/// Which paths are skills.
#[derive(Debug, Clone)]
pub struct WalkRules {
    include: GlobSet,
    exclude_dirs: Vec<String>,
}

impl WalkRules {
    /// Compiles `include` globs and the folder names to prune.
    pub fn new(include: &[String], exclude_dirs: &[String]) -> Result<Self, GlobError> {
        let mut builder = GlobSetBuilder::new();
        for glob in include {
            let compiled = globset::GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
                .or_else(|_| Glob::new(glob))
                .map_err(|e| GlobError {
                    glob: glob.clone(),
                    message: e.to_string(),
                })?;
            builder.add(compiled);
        }
        let include = builder.build().map_err(|e| GlobError {
            glob: include.join(", "),
            message: e.to_string(),
        })?;
        Ok(Self {
            include,
            exclude_dirs: exclude_dirs.to_vec(),
        })
    }

    /// Whether `path` is a skill file.
    pub fn matches(&self, path: &str) -> bool {
        // The globs first: they refuse almost every path of a tree at once
        // (by its file name), and splitting each path of the tree into
        // folders first was 8% of a backfill's commit (perf, AgentWorkers).
        self.include.is_match(path) && !self.in_excluded_folder(path)
    }

    /// Whether a folder of `path` (slash-separated, its file name aside)
    /// is one never entered.
    pub fn in_excluded_folder(&self, path: &str) -> bool {
        let mut folders = path.split('/').rev().skip(1);
        folders.any(|dir| self.exclude_dirs.iter().any(|x| x == dir))
    }
}

/// The entries that are skills, in path order.
pub fn skill_entries<'a>(entries: &'a [Entry], rules: &WalkRules) -> Vec<&'a Entry> {
    let mut found: Vec<&Entry> = entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::File | EntryKind::Symlink))
        .filter(|e| rules.matches(&e.path))
        .collect();
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

/// Names of a plugin's version folder that stand for another version.
pub const VERSION_ALIASES: [&str; 2] = ["current", "local"];

/// Of the skill files of a Codex plugin cache,
/// `<publisher>/<plugin>/<version>/skills/<skill>/SKILL.md`, one per
/// publisher, plugin and skill, so a skill installed once is built once
/// however many names its version has: the version `current` names
/// (`aliases` maps `<publisher>/<plugin>` to the folder its `current`
/// symlink points at), else the newest numbered version, else `current`,
/// else `local`. Paths of another shape are kept as they are.
pub fn one_version_per_plugin<'a>(
    skills: Vec<&'a Entry>,
    aliases: &std::collections::HashMap<String, String>,
) -> Vec<&'a Entry> {
    use std::collections::BTreeMap;
    let mut groups: BTreeMap<(String, String), Vec<(&str, &'a Entry)>> = BTreeMap::new();
    let mut kept = Vec::new();
    for entry in skills {
        let parts: Vec<&str> = entry.path.split('/').collect();
        match parts.as_slice() {
            [publisher, plugin, version, "skills", skill, _file] => {
                let plugin_key = format!("{publisher}/{plugin}");
                let version = &entry.path[publisher.len() + plugin.len() + 2..][..version.len()];
                groups
                    .entry((plugin_key, skill.to_string()))
                    .or_default()
                    .push((version, entry));
            }
            _ => kept.push(entry),
        }
    }
    for ((plugin, _), versions) in groups {
        let named = aliases.get(&plugin).map(String::as_str);
        let chosen = versions
            .iter()
            .find(|(v, _)| Some(*v) == named)
            .or_else(|| {
                versions
                    .iter()
                    .filter(|(v, _)| !VERSION_ALIASES.contains(v))
                    .max_by(|a, b| compare_versions(a.0, b.0))
            })
            .or_else(|| {
                VERSION_ALIASES
                    .iter()
                    .find_map(|alias| versions.iter().find(|(v, _)| v == alias))
            });
        if let Some((_, entry)) = chosen {
            kept.push(entry);
        }
    }
    kept.sort_by(|a, b| a.path.cmp(&b.path));
    kept
}

/// The `current` aliases of a Codex plugin cache: `<publisher>/<plugin>`
/// to the version folder its `current` symlink names, from the listing's
/// symlinks and `target`, which reads one's target path.
pub fn plugin_aliases(
    entries: &[Entry],
    target: impl Fn(&Entry) -> Option<String>,
) -> std::collections::HashMap<String, String> {
    entries
        .iter()
        .filter(|e| e.kind == EntryKind::Symlink)
        .filter_map(|e| {
            let (plugin, name) = e.path.rsplit_once('/')?;
            if name != "current" || plugin.split('/').count() != 2 {
                return None;
            }
            let target = target(e)?;
            let version = target.trim_end_matches('/').rsplit('/').next()?.to_string();
            Some((plugin.to_string(), version))
        })
        .collect()
}

/// Orders version names: numeric pieces (split on `.`, `-`, `+`) as
/// numbers, others as text.
fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    let pieces = |v: &str| -> Vec<(u64, String)> {
        v.trim_start_matches('v')
            .split(['.', '-', '+'])
            .map(|p| (p.parse().unwrap_or(0), p.to_string()))
            .collect()
    };
    pieces(a).cmp(&pieces(b))
}

/// The folder name of a skill: the SKILL.md's parent folder, or `fallback`
/// (the repository name) for a SKILL.md at the root.
pub fn skill_folder<'a>(path: &'a str, fallback: &'a str) -> &'a str {
    let mut parts = path.rsplit('/');
    parts.next();
    parts.next().unwrap_or(fallback)
}

/// Resolves a symlink at `link` whose target is `target` against the tree.
///
/// Returns the normalised target path when it stays inside the tree and is
/// one of `skill_paths`; `None` when it leaves the tree or points elsewhere.
pub fn resolve_symlink(link: &str, target: &str, skill_paths: &[&str]) -> Option<String> {
    if target.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = link.split('/').collect();
    parts.pop();
    for piece in target.split('/') {
        match piece {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    let resolved = parts.join("/");
    skill_paths.contains(&resolved.as_str()).then_some(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::ObjectRef;

    fn file(path: &str) -> Entry {
        Entry {
            path: path.into(),
            path_is_utf8: true,
            kind: EntryKind::File,
            object: ObjectRef::File(path.into()),
            executable: false,
        }
    }

    #[test]
    fn a_plugin_skill_is_built_once_from_the_version_its_aliases_name() {
        let entries = [
            file("openai/docs/1.2.0/skills/pdf/SKILL.md"),
            file("openai/docs/1.10.0/skills/pdf/SKILL.md"),
            file("openai/docs/local/skills/pdf/SKILL.md"),
            file("openai/docs/local/skills/draft/SKILL.md"),
            file("acme/tools/current/skills/lint/SKILL.md"),
            file("acme/tools/local/skills/lint/SKILL.md"),
            file("elsewhere/SKILL.md"),
        ];
        let mut link = file("openai/docs/current");
        link.kind = EntryKind::Symlink;
        let listing: Vec<Entry> = entries.iter().cloned().chain([link]).collect();
        let paths = |aliases| -> Vec<String> {
            one_version_per_plugin(entries.iter().collect(), &aliases)
                .iter()
                .map(|e| e.path.clone())
                .collect()
        };
        // `current` -> 1.2.0: that version, though 1.10.0 is newer.
        let aliases = plugin_aliases(&listing, |_| Some("./1.2.0/".into()));
        assert_eq!(aliases["openai/docs"], "1.2.0");
        assert_eq!(
            paths(aliases),
            [
                "acme/tools/current/skills/lint/SKILL.md",
                "elsewhere/SKILL.md",
                "openai/docs/1.2.0/skills/pdf/SKILL.md",
                "openai/docs/local/skills/draft/SKILL.md",
            ]
        );
        // No alias known: the newest numbered version (1.10.0 > 1.2.0).
        let without = paths(Default::default());
        assert!(without.contains(&"openai/docs/1.10.0/skills/pdf/SKILL.md".to_string()));
        assert_eq!(without.len(), 4);
    }

    fn rules() -> WalkRules {
        WalkRules::new(
            &["**/SKILL.md".into()],
            &["node_modules".into(), ".git".into()],
        )
        .unwrap()
    }

    #[test]
    fn default_globs_find_hidden_and_nested_skills_but_not_node_modules() {
        let r = rules();
        for yes in [
            "SKILL.md",
            "skills/pdf/SKILL.md",
            ".curated/x/SKILL.md",
            "plugin/skills/a/SKILL.md",
        ] {
            assert!(r.matches(yes), "{yes}");
        }
        for no in [
            "node_modules/x/SKILL.md",
            "a/node_modules/b/SKILL.md",
            ".git/SKILL.md",
            "skills/pdf/skill.md",
            "skills/pdf/SKILL.md.bak",
        ] {
            assert!(!r.matches(no), "{no}");
        }
    }

    #[test]
    fn entries_are_filtered_and_sorted() {
        let entry = |path: &str| Entry {
            path: path.into(),
            path_is_utf8: true,
            kind: EntryKind::File,
            object: ObjectRef::File(path.into()),
            executable: false,
        };
        let entries = vec![entry("b/SKILL.md"), entry("README.md"), entry("a/SKILL.md")];
        let found: Vec<&str> = skill_entries(&entries, &rules())
            .iter()
            .map(|e| e.path.as_str())
            .collect();
        assert_eq!(found, ["a/SKILL.md", "b/SKILL.md"]);
    }

    #[test]
    fn folder_names() {
        assert_eq!(skill_folder("skills/pdf/SKILL.md", "repo"), "pdf");
        assert_eq!(skill_folder("SKILL.md", "repo"), "repo");
    }

    #[test]
    fn symlinks_resolve_only_inside_the_tree_to_skills() {
        let skills = ["skills/a/SKILL.md", "skills/b/SKILL.md"];
        assert_eq!(
            resolve_symlink("skills/b/SKILL.md", "../a/SKILL.md", &skills).as_deref(),
            Some("skills/a/SKILL.md")
        );
        assert_eq!(
            resolve_symlink("skills/b/SKILL.md", "../../../etc/passwd", &skills),
            None
        );
        assert_eq!(
            resolve_symlink("skills/b/SKILL.md", "/etc/passwd", &skills),
            None
        );
        assert_eq!(
            resolve_symlink("skills/b/SKILL.md", "../a/README.md", &skills),
            None
        );
    }
}
