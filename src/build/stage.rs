//! The CPU-bound middle of a build: walk, parse, chunk, validate, embed and
//! assemble one snapshot into its parts, staged on disk. Files whose inputs
//! an earlier build saw (the [`Base`]) are not read at all; which files
//! those are is the [`plan`](super::plan)'s to say.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use agentfinder_skills_reader::contract::parts::PartEntry;

use super::interrupt;
use super::plan::{list_tree, patch_parent, Plan};
use super::run_context::RunContext;
use super::BuildError;
use crate::assemble::{Assembled, Assembler, Item, NewParts, SharedEmbedder, VersionInfo};
use crate::config::Config;
use crate::failpoint::failpoint;
use crate::logging::Reporter;
use crate::parse::read::{extract, ExtractContext, SkillTree, Spent, SpentSeconds};
use crate::reuse::Base;
use crate::source::{rfc3339, Entry, EntryKind, ObjectRef, Snapshot};
use crate::walk::WalkRules;

/// Skill files parsed per batch: enough to keep both cores busy, few enough
/// that memory does not grow with the repository. A batch holds as many
/// reused entries besides as come between them (a backfill's commit parses
/// a few dozen files among 18,000 carried ones: in batches of 256 entries
/// those few were parsed one or two at a time, on one core).
const BATCH: usize = 256;

/// One batch of the files in path order: for each, its entry (carried or
/// reused) or `None` where it is parsed, and the files to parse, in order.
struct Gathered<'a> {
    ready: Vec<Option<Item>>,
    to_parse: Vec<(&'a Entry, Option<String>, Option<String>)>,
}

/// Takes files off `ordered` until [`BATCH`] of them need parsing (or none
/// are left), taking the reusable ones' entries from `base`.
fn gather<'a>(
    ordered: &mut impl Iterator<Item = Next<'a>>,
    planner: &crate::assemble::keys::Planner,
    mut base: Option<&mut Base>,
) -> Gathered<'a> {
    let mut gathered = Gathered {
        ready: Vec::new(),
        to_parse: Vec::new(),
    };
    for next in ordered.by_ref() {
        let entry = match next {
            Next::Carried(entry) => {
                gathered.ready.push(Some(Item::Reused(entry)));
                continue;
            }
            Next::File(entry) => entry,
        };
        let (key, blob) = key_of(planner, entry);
        let taken = key
            .as_deref()
            .and_then(|key| base.as_deref_mut()?.take_reusable(&entry.path, key));
        match taken {
            Some(reused) => gathered.ready.push(Some(Item::Reused(reused))),
            None => {
                gathered.to_parse.push((entry, key, blob));
                gathered.ready.push(None);
                if gathered.to_parse.len() == BATCH {
                    break;
                }
            }
        }
    }
    gathered
}

/// One skill file in path order, before keying: an entry carried over from
/// the parent's build, or a file of the tree. (Nearly all are carried in a
/// backfill, so boxing the large variant would only add an allocation each.)
#[allow(clippy::large_enum_variant)]
enum Next<'a> {
    Carried(PartEntry),
    File(&'a Entry),
}

/// A staged artifact.
pub(super) struct Staged {
    /// The manifest and what was found.
    pub assembled: Assembled,
    /// The objects to write.
    pub parts: NewParts,
    /// Whether it was planned from the parent's build (see [`patch_parent`]).
    pub patched: bool,
    /// Seconds spent planning (listing or patching, and dating).
    pub plan_seconds: f64,
    /// Where the parsing threads' time went.
    pub spent: SpentSeconds,
    /// Seconds the assembler spent on the parsed batches.
    pub assemble_seconds: f64,
}

/// Sets its flag when dropped: held by the async side of a build while
/// the blocking stage runs, so a build whose future is dropped (its
/// source's timeout) tells the stage to stop.
pub(super) struct StopOnDrop(pub std::sync::Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Why the stage must stop, if it must: a signal asked the process to
/// stop ([`interrupt`]), or `stop` was set (the build was given up).
fn stopped(stop: &AtomicBool) -> Option<BuildError> {
    if let Some(signal) = interrupt::requested() {
        return Some(BuildError::Interrupted(signal));
    }
    stop.load(Ordering::Relaxed).then_some(BuildError::Stopped)
}

/// Walks, parses, chunks, validates and assembles `snapshot` into parts
/// staged in `dir`, reusing `base`'s entries where a file's inputs are
/// unchanged (see [`plan`](super::plan)). One thread parses batches on all
/// cores while this one turns the previous batch into entries, so memory
/// holds two batches of documents at most, whatever the number of skills.
/// `stop` is checked before each batch is parsed and before each is
/// assembled (and embedded): once set, the stage ends with
/// [`BuildError::Stopped`] instead of working on for nobody.
#[allow(clippy::too_many_arguments)]
pub(super) fn stage_artifact(
    config: &Config,
    snapshot: &Snapshot,
    reporter: &Reporter,
    run: &RunContext,
    embedder: Option<SharedEmbedder>,
    base: Option<Base>,
    dir: &std::path::Path,
    stop: &AtomicBool,
) -> Result<Staged, BuildError> {
    let cache = run.parses.as_ref();
    let rules = WalkRules::new(&config.walk.include, &config.walk.exclude_dirs)?;
    let vectors = embedder.is_some();
    let planning = Instant::now();
    let (plan, patched) = match base {
        Some(base) => match patch_parent(config, snapshot, &rules, base, vectors)? {
            Ok(plan) => (plan, true),
            Err(base) => (list_tree(config, snapshot, &rules, Some(base))?, false),
        },
        None => (list_tree(config, snapshot, &rules, None)?, false),
    };
    let Plan {
        files,
        carried,
        changes,
        folder_files,
        shipped,
        marketplace: (marketplace, marketplace_findings),
        mut base,
        base_buckets,
        found,
    } = plan;
    reporter.info("walk", found);
    let plan_seconds = planning.elapsed().as_secs_f64();
    let shipped = std::sync::Arc::new(shipped);
    let version = VersionInfo {
        commit: snapshot.version.id.clone(),
        commit_time: rfc3339(snapshot.version.time),
        branch: snapshot.version.branch.clone(),
        changes: std::sync::Arc::new(changes),
        folder_files: std::sync::Arc::new(folder_files),
        shipped: shipped.clone(),
    };
    let io = |e: std::io::Error| BuildError::Internal(format!("staging the artifact: {e}"));
    let mut assembler = Assembler::new(
        config,
        version,
        &marketplace,
        marketplace_findings,
        dir,
        vectors,
    )
    .map_err(io)?
    .with_entries_set_aside(run.is_one_commit())
    .map_err(io)?
    .with_embedder(embedder)
    .with_base_buckets(base_buckets);

    // Symlinks resolve against every skill file of the tree: a listed plan's
    // files are all of them; a patched plan has no symlink to resolve.
    let tree_refs: Vec<&Entry> = match patched {
        true => Vec::new(),
        false => files.iter().collect(),
    };
    let tree = SkillTree::new(&tree_refs);
    let options = config.parse_options();
    let spent = Spent::default();
    let context = ExtractContext {
        options: &options,
        cache,
        shipped: &shipped,
        repo: config.repo(),
        spent: &spent,
    };
    let bar = reporter.progress((files.len() + carried.len()) as u64, "parsing");
    let tick = || bar.inc(1);
    let ordered = merge_by_path(carried, &files);
    let mut assemble_seconds = 0.0;
    std::thread::scope(|scope| -> Result<(), BuildError> {
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        let planner = assembler.planner();
        let (tree, tick, context) = (&tree, &tick, &context);
        let producer = scope.spawn(move || -> Result<(), BuildError> {
            let mut opened: Option<(Snapshot, usize)> = None;
            let mut ordered = ordered.into_iter().peekable();
            while ordered.peek().is_some() {
                failpoint("stage-before-batch");
                if let Some(stopped) = stopped(stop) {
                    return Err(stopped);
                }
                let Gathered { ready, to_parse } = gather(&mut ordered, &planner, base.as_mut());
                let mut parsed = if to_parse.is_empty() {
                    Vec::new()
                } else {
                    // An object database of its own, replaced after every
                    // BATCH files read, so the pack pages it maps are released.
                    if opened.as_ref().is_none_or(|(_, read)| *read >= BATCH) {
                        opened = Some((snapshot.reopened()?, 0));
                    }
                    let entries: Vec<&Entry> = to_parse.iter().map(|(e, _, _)| *e).collect();
                    match opened.as_mut() {
                        Some((source, read)) => {
                            *read += entries.len();
                            extract(source, &entries, tree, context, tick)
                        }
                        None => Vec::new(),
                    }
                }
                .into_iter()
                .zip(to_parse);
                let mut items = Vec::with_capacity(ready.len());
                for slot in ready {
                    match slot {
                        Some(item) => {
                            tick();
                            items.push(item);
                        }
                        None => {
                            let Some((extracted, (_, key, blob))) = parsed.next() else {
                                continue;
                            };
                            items.push(Item::Parsed {
                                extracted,
                                key,
                                blob,
                            });
                        }
                    }
                }
                if sender.send(items).is_err() {
                    break; // the assembler stopped on an error
                }
            }
            Ok(())
        });
        let mut outcome = Ok(());
        for batch in receiver {
            if let Some(stopped) = stopped(stop) {
                outcome = Err(stopped);
            }
            if outcome.is_ok() {
                let assembling = Instant::now();
                outcome = assembler.add_all(batch).map_err(BuildError::from);
                assemble_seconds += assembling.elapsed().as_secs_f64();
            } else {
                break; // dropping the receiver stops the parser
            }
        }
        let parsed = producer
            .join()
            .map_err(|_| BuildError::Internal("the parsing thread panicked".into()))?;
        // A signal also stops the embedder between slices of its work
        // (an error of its own): the build says it was interrupted.
        outcome
            .and(parsed)
            .map_err(|e| match interrupt::requested() {
                Some(signal) => BuildError::Interrupted(signal),
                None => e,
            })
    })?;
    bar.finish_and_clear();
    // The risk scan is done: its pattern caches go before the write stage.
    crate::validate::risk::release_caches();

    // Stopped now, the buckets are not encoded into a staging folder that
    // is going away.
    if let Some(stopped) = stopped(stop) {
        return Err(stopped);
    }
    let generated_at = rfc3339(crate::time::unix_seconds());
    let (assembled, parts) = assembler.finish(&generated_at)?;
    Ok(Staged {
        assembled,
        parts,
        patched,
        plan_seconds,
        spent: spent.seconds(),
        assemble_seconds,
    })
}

/// Carried entries and files, both in path order, merged into one sequence
/// in path order.
fn merge_by_path(carried: Vec<PartEntry>, files: &[Entry]) -> Vec<Next<'_>> {
    let mut merged = Vec::with_capacity(carried.len() + files.len());
    let mut files = files.iter().peekable();
    for entry in carried {
        while let Some(file) = files.next_if(|f| f.path < entry.path) {
            merged.push(Next::File(file));
        }
        merged.push(Next::Carried(entry));
    }
    merged.extend(files.map(Next::File));
    merged
}

/// The entry key and git blob id of a skill file: symlinks and plain
/// folders have no key (their bytes have no id of their own), so they are
/// always parsed.
fn key_of(
    planner: &crate::assemble::keys::Planner,
    entry: &Entry,
) -> (Option<String>, Option<String>) {
    match (&entry.kind, &entry.object) {
        (EntryKind::File, ObjectRef::Blob(id)) => {
            let blob = id.to_string();
            (planner.key(&entry.path, Some(&blob)), Some(blob))
        }
        _ => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::read::ParseCache;
    use crate::source::{Fetching, SourceSpec};

    #[test]
    fn a_stopped_stage_parses_nothing_more_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..3 {
            let folder = dir.path().join(format!("skills/s{n}"));
            std::fs::create_dir_all(&folder).unwrap();
            let text = format!("---\nname: s{n}\ndescription: Skill {n}\n---\n# S\n\nBody.\n");
            std::fs::write(folder.join("SKILL.md"), text).unwrap();
        }
        let fetching = Fetching {
            cache_dir: dir.path().join("cache"),
            default_branch: "main".into(),
            connect_timeout: std::time::Duration::from_secs(1),
            history_depth: 0,
        };
        let snapshot =
            crate::source::open(&SourceSpec::Local(dir.path().into()), None, &fetching).unwrap();
        let config = Config::default();
        let stage = |stop: bool| {
            let staging = tempfile::tempdir().unwrap();
            let run = RunContext::new(&config, ParseCache::disabled());
            let stop = AtomicBool::new(stop);
            let reporter = crate::logging::global();
            stage_artifact(
                &config,
                &snapshot,
                &reporter,
                &run,
                None,
                None,
                staging.path(),
                &stop,
            )
        };
        assert!(matches!(stage(true), Err(BuildError::Stopped)));
        let staged = stage(false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(staged.assembled.parsed, 3);
        // The flag is set when its holder is dropped.
        let flag = std::sync::Arc::new(AtomicBool::new(false));
        drop(StopOnDrop(flag.clone()));
        assert!(flag.load(Ordering::Relaxed));
    }
}
