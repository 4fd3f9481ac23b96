//! Walk stage: which entries of a source tree are skills.
//!
//! Every path matching the configured globs (default `**/SKILL.md`), hidden
//! folders included (real repositories keep skills in `.curated/` or
//! `.system/`), with excluded folder names (`node_modules`, `.git`) pruned
//! anywhere in the path. A skill's identity is its path. Pure: it sees a
//! listing, never a disk.

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
        let mut folders = path.split('/').rev().skip(1);
        !folders.any(|dir| self.exclude_dirs.iter().any(|x| x == dir))
            && self.include.is_match(path)
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
