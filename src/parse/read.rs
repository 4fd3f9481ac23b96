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
use std::time::Instant;

use rayon::prelude::*;

use super::content_key::{body_key, content_key, file_part};
use super::{parse_skill, ParseOptions, ParsedSkill};
use crate::source::{Entry, EntryKind, FileReader, ObjectRef, Snapshot, SourceError};
use crate::validate::diagnostics::{unsafe_path_char, Finding, Unusable, WarningClass};
use crate::validate::risk::{scan_folder, Risk, ShippedFile};
use crate::walk::resolve_symlink;
use crate::walk::supporting_files::folder_of;

/// A parse result, shared between the cache and every commit that uses it.
pub type SharedParse = Arc<Result<ParsedSkill, Unusable>>;

/// One skill file after the parse stage.
#[derive(Debug, Clone)]
pub struct Extracted {
    /// Path of the file in the source.
    pub path: String,
    /// The parsed file, or why it cannot be used (shared with the cache).
    pub result: SharedParse,
    /// What the skill's files hold, for a usable one.
    pub scanned: Option<Scanned>,
}

/// What a usable skill's files hold: read with its SKILL.md, whole.
#[derive(Debug, Clone, Default)]
pub struct Scanned {
    /// What the risk rules found.
    pub risk: Risk,
    /// Its content key ([`content_key`]).
    pub content_key: String,
    /// Its body key ([`body_key`]).
    pub body_key: String,
    /// Shipped files that could not be read.
    pub findings: Vec<Finding>,
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

/// Where the parse stage's thread time goes: nanoseconds summed over the
/// threads (so together they can pass the stage's wall time).
#[derive(Debug, Default)]
pub struct Spent {
    read: AtomicU64,
    parse: AtomicU64,
    scan: AtomicU64,
}

/// [`Spent`] in seconds.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct SpentSeconds {
    /// Reading skill files and the files they ship from the source.
    pub read: f64,
    /// Parsing SKILL.md files (frontmatter and chunks) and their keys.
    pub parse: f64,
    /// The risk rules over every file a skill ships.
    pub scan: f64,
}

impl Spent {
    /// The totals so far, in seconds.
    pub fn seconds(&self) -> SpentSeconds {
        let s = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64 / 1e9;
        SpentSeconds {
            read: s(&self.read),
            parse: s(&self.parse),
            scan: s(&self.scan),
        }
    }

    fn add(counter: &AtomicU64, since: Instant) {
        counter.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}

/// What a parse stage needs besides the files: how to parse, the cache,
/// what each skill ships and which repository it comes from.
pub struct ExtractContext<'a> {
    /// How to parse.
    pub options: &'a ParseOptions,
    /// Parses shared between commits.
    pub cache: &'a ParseCache,
    /// The files each skill file's folder ships, by skill file.
    pub shipped: &'a HashMap<String, Vec<Entry>>,
    /// `owner/name` of the repository (for the risk rules' hosts).
    pub repo: &'a str,
    /// Where the threads' time goes.
    pub spent: &'a Spent,
}

/// Reads and parses `batch` (in order) on all cores, calling `tick` after
/// each; a usable skill's files (its SKILL.md and every file it ships,
/// whole) are read for the risk rules and its content key.
pub fn extract(
    snapshot: &Snapshot,
    batch: &[&Entry],
    tree: &SkillTree<'_>,
    context: &ExtractContext<'_>,
    tick: &(dyn Fn() + Sync),
) -> Vec<Extracted> {
    batch
        .par_iter()
        .map_init(
            || snapshot.reader(),
            |reader, entry| {
                let reading = Instant::now();
                let read = read_skill(reader, entry, tree);
                Spent::add(&context.spent.read, reading);
                let (result, scanned) = match read {
                    Err(unusable) => (Arc::new(Err(unusable)), None),
                    Ok((bytes, alias)) => {
                        let parsing = Instant::now();
                        let result = parse_cached(entry, &bytes, alias, context);
                        Spent::add(&context.spent.parse, parsing);
                        let scanned = result
                            .as_ref()
                            .as_ref()
                            .ok()
                            .map(|parsed| scan_skill(reader, entry, (&bytes, parsed), context));
                        (result, scanned)
                    }
                };
                tick();
                Extracted {
                    path: entry.path.clone(),
                    result,
                    scanned,
                }
            },
        )
        .collect()
}

/// The parse of `bytes`, from the cache where the blob was parsed before.
fn parse_cached(
    entry: &Entry,
    bytes: &[u8],
    alias: Option<Finding>,
    context: &ExtractContext<'_>,
) -> SharedParse {
    let parse = || {
        let mut parsed = parse_skill(bytes, context.options);
        if let (Ok(parsed), Some(alias)) = (parsed.as_mut(), alias.clone()) {
            parsed.findings.push(alias);
        }
        Arc::new(parsed)
    };
    match (&entry.kind, &entry.object) {
        (EntryKind::File, ObjectRef::Blob(id)) => match context.cache.get(id) {
            Some(hit) => hit,
            None => {
                let parsed = parse();
                context.cache.put(*id, parsed.clone());
                parsed
            }
        },
        _ => parse(),
    }
}

/// The bytes of a skill file (a symlink's target's, with the finding that
/// says so), or why it cannot be used.
fn read_skill(
    reader: &FileReader,
    entry: &Entry,
    tree: &SkillTree<'_>,
) -> Result<(Vec<u8>, Option<Finding>), Unusable> {
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
        EntryKind::File => Ok((read(entry)?, None)),
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
            let alias = Finding::file(
                WarningClass::SymlinkAlias,
                format!("symlink to {resolved}; indexed as an alias of that file"),
            );
            Ok((read(target_entry)?, Some(alias)))
        }
    }
}

/// The regular files of `shipped` (the files the folder of the skill file
/// at `skill` ships) read whole, and those that could not be read, each
/// with its path relative to that folder.
pub fn read_shipped<'e>(
    reader: &FileReader,
    skill: &str,
    shipped: &'e [Entry],
) -> (Vec<ShippedFile<'e>>, Vec<(&'e str, SourceError)>) {
    let folder = folder_of(skill);
    let (mut read, mut unreadable) = (Vec::with_capacity(shipped.len()), Vec::new());
    for file in shipped.iter().filter(|f| f.kind == EntryKind::File) {
        let relative = match folder {
            "" => file.path.as_str(),
            folder => file.path.get(folder.len() + 1..).unwrap_or(&file.path),
        };
        match reader.read(file) {
            Ok(bytes) => read.push((relative, bytes, file.executable)),
            Err(error) => unreadable.push((relative, error)),
        }
    }
    (read, unreadable)
}

/// Reads the files `entry`'s folder ships, whole, and runs the risk rules
/// and the content key over them and its SKILL.md (bytes, and as
/// parsed). A file that cannot be read is left out of both, with a
/// finding that names it.
fn scan_skill(
    reader: &FileReader,
    entry: &Entry,
    (skill_md, parsed): (&[u8], &ParsedSkill),
    context: &ExtractContext<'_>,
) -> Scanned {
    let shipped = context
        .shipped
        .get(&entry.path)
        .map_or(&[][..], Vec::as_slice);
    let reading = Instant::now();
    let (contents, unreadable) = read_shipped(reader, &entry.path, shipped);
    Spent::add(&context.spent.read, reading);
    let findings = unreadable
        .into_iter()
        .map(|(relative, error)| {
            Finding::file(
                WarningClass::ShippedUnreadable,
                format!("{relative} could not be read for the risk rules: {error}"),
            )
        })
        .collect();
    let scanning = Instant::now();
    let risk = Risk::of(scan_folder(
        context.repo,
        (skill_md, entry.executable),
        &contents,
    ));
    Spent::add(&context.spent.scan, scanning);
    let keying = Instant::now();
    let parts: Vec<(String, [u8; 32])> = contents
        .iter()
        .map(|(path, bytes, _)| file_part(path, bytes))
        .collect();
    let text = String::from_utf8_lossy(skill_md);
    let scanned = Scanned {
        risk,
        body_key: body_key(&text),
        content_key: content_key(&text, &parsed.fields, &parts),
        findings,
    };
    Spent::add(&context.spent.parse, keying);
    scanned
}
