//! Reading and parsing every skill file of a snapshot, on all cores.
//!
//! The I/O edge of the parse stage: bytes come from the source (one reader
//! per thread), [`parse_skill`] does the rest.
//! Symlinks are resolved against the tree: one pointing at another SKILL.md
//! of the tree is parsed as that file (an alias, with a warning); any other
//! is skipped.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use super::{parse_skill, ParseOptions, ParsedSkill};
use crate::source::{Entry, EntryKind, FileReader, ObjectRef, Snapshot};
use crate::validate::diagnostics::{unsafe_path_char, Finding, Unusable, WarningClass};
use crate::walk::resolve_symlink;

/// A parse result, shared between the cache and every commit that uses it.
pub type SharedParse = Arc<Result<ParsedSkill, Unusable>>;

/// One skill file after the parse stage.
#[derive(Debug, Clone)]
pub struct Extracted {
    /// Path of the file in the source.
    pub path: String,
    /// The parsed file, or why it cannot be used (shared with the cache).
    pub result: SharedParse,
}

/// Parse results by git blob id, so a file that many commits share is parsed
/// once per run (the parse options are fixed for a run).
///
/// Entries carry the generation (commit) that last used them; [`ParseCache::advance`]
/// drops those the commit just built did not use, so memory follows one
/// commit's worth of skills, not the history's.
#[derive(Debug, Default)]
pub struct ParseCache {
    map: Mutex<HashMap<gix::ObjectId, (SharedParse, u64)>>,
    generation: AtomicU64,
    hits: AtomicU64,
    misses: AtomicU64,
    disabled: bool,
}

impl ParseCache {
    /// A cache that keeps nothing: a single build reads each blob once, and
    /// keeping its parses would hold the whole repository in memory.
    pub fn disabled() -> Self {
        Self {
            disabled: true,
            ..Self::default()
        }
    }

    /// Ends a commit: forgets what it did not use.
    pub fn advance(&self) {
        let current = self.generation.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut map) = self.map.lock() {
            map.retain(|_, (_, used)| *used >= current);
        }
    }

    /// (hits, misses) so far.
    pub fn stats(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    fn get(&self, id: &gix::ObjectId) -> Option<SharedParse> {
        let generation = self.generation.load(Ordering::Relaxed);
        let found = self.map.lock().ok()?.get_mut(id).map(|(parsed, used)| {
            *used = generation;
            parsed.clone()
        });
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    fn put(&self, id: gix::ObjectId, result: SharedParse) {
        if self.disabled {
            return;
        }
        let generation = self.generation.load(Ordering::Relaxed);
        if let Ok(mut map) = self.map.lock() {
            map.insert(id, (result, generation));
        }
    }
}

/// The skill files of a tree, for resolving symlinks between them.
pub struct SkillTree<'a> {
    entries: &'a [&'a Entry],
    paths: Vec<&'a str>,
}

impl<'a> SkillTree<'a> {
    /// Indexes `entries`.
    pub fn new(entries: &'a [&'a Entry]) -> Self {
        let paths = entries
            .iter()
            .filter(|e| e.kind == EntryKind::File)
            .map(|e| e.path.as_str())
            .collect();
        Self { entries, paths }
    }
}

/// Reads and parses `batch` (in order) on all cores, calling `tick` after each.
pub fn extract(
    snapshot: &Snapshot,
    batch: &[&Entry],
    tree: &SkillTree<'_>,
    options: &ParseOptions,
    cache: &ParseCache,
    tick: &(dyn Fn() + Sync),
) -> Vec<Extracted> {
    batch
        .par_iter()
        .map_init(
            || snapshot.reader(),
            |reader, entry| {
                let result = match (&entry.kind, &entry.object) {
                    (EntryKind::File, ObjectRef::Blob(id)) => match cache.get(id) {
                        Some(hit) => hit,
                        None => {
                            let parsed = Arc::new(extract_one(reader, entry, tree, options));
                            cache.put(*id, parsed.clone());
                            parsed
                        }
                    },
                    _ => Arc::new(extract_one(reader, entry, tree, options)),
                };
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
    tree: &SkillTree<'_>,
    options: &ParseOptions,
) -> Result<ParsedSkill, Unusable> {
    if !entry.path_is_utf8 {
        return Err(Unusable::PathNotUtf8);
    }
    if let Some(character) = unsafe_path_char(&entry.path) {
        return Err(Unusable::PathUnsafe { character });
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
                resolve_symlink(&entry.path, &target, &tree.paths).ok_or(Unusable::Symlink {
                    target: target.clone(),
                })?;
            let target_entry = tree
                .entries
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
