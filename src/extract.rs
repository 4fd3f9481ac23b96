//! Reading and parsing every skill file of a snapshot, on all cores.
//!
//! The I/O edge of the parse stage: bytes come from the source (one reader
//! per thread), [`parse_skill`](crate::parse::parse_skill) does the rest.
//! Symlinks are resolved against the tree: one pointing at another SKILL.md
//! of the tree is parsed as that file (an alias, with a warning); any other
//! is skipped.

use rayon::prelude::*;

use crate::diagnostics::{Finding, Unusable, WarningClass};
use crate::parse::{parse_skill, ParseOptions, ParsedSkill};
use crate::source::{Entry, EntryKind, FileReader, Snapshot};
use crate::walk::resolve_symlink;

/// One skill file after the parse stage.
#[derive(Debug)]
pub struct Extracted {
    /// Path of the file in the source.
    pub path: String,
    /// The parsed file, or why it cannot be used.
    pub result: Result<ParsedSkill, Unusable>,
}

/// Reads and parses `skills` (in order), calling `tick` after each.
pub fn extract(
    snapshot: &Snapshot,
    skills: &[&Entry],
    options: &ParseOptions,
    tick: &(dyn Fn() + Sync),
) -> Vec<Extracted> {
    let skill_paths: Vec<&str> = skills
        .iter()
        .filter(|e| e.kind == EntryKind::File)
        .map(|e| e.path.as_str())
        .collect();
    skills
        .par_iter()
        .map_init(
            || snapshot.reader(),
            |reader, entry| {
                let result = extract_one(reader, entry, skills, &skill_paths, options);
                tick();
                Extracted {
                    path: entry.path.clone(),
                    result,
                }
            },
        )
        .collect()
}

fn extract_one(
    reader: &FileReader,
    entry: &Entry,
    skills: &[&Entry],
    skill_paths: &[&str],
    options: &ParseOptions,
) -> Result<ParsedSkill, Unusable> {
    if !entry.path_is_utf8 {
        return Err(Unusable::PathNotUtf8);
    }
    let read = |e: &Entry| {
        reader.read(e).map_err(|error| Unusable::Unreadable {
            reason: error.to_string(),
        })
    };
    match entry.kind {
        EntryKind::File => parse_skill(&read(entry)?, options),
        EntryKind::Symlink => {
            let target = String::from_utf8_lossy(&read(entry)?).into_owned();
            let resolved =
                resolve_symlink(&entry.path, &target, skill_paths).ok_or(Unusable::Symlink {
                    target: target.clone(),
                })?;
            let target_entry = skills
                .iter()
                .find(|e| e.path == resolved)
                .ok_or(Unusable::Symlink { target })?;
            let mut parsed = parse_skill(&read(target_entry)?, options)?;
            parsed.findings.push(Finding::file(
                WarningClass::SymlinkAlias,
                format!("symlink to {resolved}; indexed as an alias of that file"),
            ));
            Ok(parsed)
        }
    }
}
