//! The CPU-bound middle of a build: walk, parse, chunk, validate, embed and
//! assemble one snapshot into its parts, staged on disk. Files whose inputs
//! an earlier build saw (the [`Base`]) are not read at all.

use agentfinder_skills_reader::parts::PACKS_DIR;

use super::BuildError;
use crate::assemble::{Assembled, Assembler, Item, NewParts, SharedEmbedder, VersionInfo};
use crate::config::Config;
use crate::diagnostics::{Finding, WarningClass};
use crate::logging::Reporter;
use crate::marketplace::{parse_marketplace, Marketplace};
use crate::read_skills::{extract, SkillTree};
use crate::reuse::Base;
use crate::run_context::RunContext;
use crate::source::{self, rfc3339, Entry, EntryKind, ObjectRef, Snapshot};
use crate::staging::HashingFile;
use crate::walk::{one_version_per_plugin, plugin_aliases, skill_entries, WalkRules};

/// Skill files parsed per batch: enough to keep both cores busy, few enough
/// that memory does not grow with the repository.
const BATCH: usize = 256;

/// Walks, parses, chunks, validates and assembles `snapshot` into parts
/// staged in `dir`, reusing `base`'s entries where a file's inputs are
/// unchanged. One thread parses batches on all cores while this one turns
/// the previous batch into entries, so memory holds two batches of
/// documents at most, whatever the number of skills.
pub(super) fn stage_artifact(
    config: &Config,
    snapshot: &Snapshot,
    reporter: &Reporter,
    run: &RunContext,
    embedder: Option<SharedEmbedder>,
    mut base: Option<Base>,
    dir: &std::path::Path,
) -> Result<(Assembled, NewParts), BuildError> {
    let cache = run.parses.as_ref();
    // The listing releases the pack pages it maps as it goes (see Snapshot::list).
    let entries = snapshot.list()?;
    let rules = WalkRules::new(&config.walk.include, &config.walk.exclude_dirs)?;
    let mut skills = skill_entries(&entries, &rules);
    if config.walk.one_version_per_plugin {
        let reader = snapshot.reader();
        let aliases = plugin_aliases(&entries, |entry| {
            let bytes = reader.read(entry).ok()?;
            String::from_utf8(bytes).ok()
        });
        skills = one_version_per_plugin(skills, &aliases);
    }
    // Path order: the order of the composed files, whatever the source's.
    skills.sort_by(|a, b| a.path.cmp(&b.path));
    reporter.info(
        "walk",
        format!(
            "found {} skill files in {} entries",
            skills.len(),
            entries.len()
        ),
    );
    let (marketplace, marketplace_findings) = read_marketplace(config, snapshot, &entries);
    let paths: Vec<&str> = skills.iter().map(|e| e.path.as_str()).collect();
    let version = VersionInfo {
        commit: snapshot.version.id.clone(),
        commit_time: rfc3339(snapshot.version.time),
        branch: snapshot.version.branch.clone(),
        changes: std::sync::Arc::new(
            snapshot.last_changed(&paths, base.as_ref().map(Base::known_changes))?,
        ),
    };
    let io = |e: std::io::Error| BuildError::Internal(format!("staging the artifact: {e}"));
    let pack =
        HashingFile::create(dir, PACKS_DIR.rsplit('/').next().unwrap_or("pack")).map_err(io)?;
    let mut assembler = Assembler::new(
        config,
        version,
        &marketplace,
        marketplace_findings,
        pack,
        embedder.is_some(),
    )
    .with_embedder(embedder)
    .with_base_buckets(base.as_mut().map(Base::take_buckets));

    let tree = SkillTree::new(&skills);
    let options = config.parse_options();
    let bar = reporter.progress(skills.len() as u64, "parsing");
    let tick = || bar.inc(1);
    std::thread::scope(|scope| -> Result<(), BuildError> {
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        let planner = assembler.planner();
        let (tree, tick, skills) = (&tree, &tick, &skills);
        let producer = scope.spawn(move || -> Result<(), BuildError> {
            let mut opened: Option<(Snapshot, usize)> = None;
            for batch in skills.chunks(BATCH) {
                let planned: Vec<(Option<String>, Option<String>)> =
                    batch.iter().map(|entry| key_of(&planner, entry)).collect();
                let items: Vec<Option<_>> = batch
                    .iter()
                    .zip(&planned)
                    .map(|(entry, (key, _))| {
                        let key = key.as_deref()?;
                        base.as_mut()?.take_reusable(&entry.path, key)
                    })
                    .collect();
                let to_parse: Vec<&Entry> = batch
                    .iter()
                    .zip(&items)
                    .filter(|(_, item)| item.is_none())
                    .map(|(entry, _)| *entry)
                    .collect();
                let mut parsed = if to_parse.is_empty() {
                    Vec::new()
                } else {
                    // An object database of its own, replaced after every
                    // BATCH files read, so the pack pages it maps are released.
                    if opened.as_ref().is_none_or(|(_, read)| *read >= BATCH) {
                        opened = Some((snapshot.reopened()?, 0));
                    }
                    match opened.as_mut() {
                        Some((source, read)) => {
                            *read += to_parse.len();
                            extract(source, &to_parse, tree, &options, cache, tick)
                        }
                        None => Vec::new(),
                    }
                }
                .into_iter();
                let mut ready = Vec::with_capacity(batch.len());
                for (item, (key, blob)) in items.into_iter().zip(planned) {
                    match item {
                        Some(reused) => {
                            tick();
                            ready.push(Item::Reused(reused));
                        }
                        None => {
                            let Some(extracted) = parsed.next() else {
                                continue;
                            };
                            ready.push(Item::Parsed {
                                extracted,
                                key,
                                blob,
                            });
                        }
                    }
                }
                if sender.send(ready).is_err() {
                    break; // the assembler stopped on an error
                }
            }
            Ok(())
        });
        let mut outcome = Ok(());
        for batch in receiver {
            if outcome.is_ok() {
                outcome = assembler.add_all(batch).map_err(BuildError::from);
            } else {
                break; // dropping the receiver stops the parser
            }
        }
        let parsed = producer
            .join()
            .map_err(|_| BuildError::Internal("the parsing thread panicked".into()))?;
        outcome.and(parsed)
    })?;
    bar.finish_and_clear();

    let generated_at = rfc3339(crate::time::unix_seconds());
    Ok(assembler.finish(&generated_at)?)
}
/// The entry key and git blob id of a skill file: symlinks and plain
/// folders have no key (their bytes have no id of their own), so they are
/// always parsed.
fn key_of(planner: &crate::assemble::Planner, entry: &Entry) -> (Option<String>, Option<String>) {
    match (&entry.kind, &entry.object) {
        (EntryKind::File, ObjectRef::Blob(id)) => {
            let blob = id.to_string();
            (planner.key(&entry.path, Some(&blob)), Some(blob))
        }
        _ => (None, None),
    }
}

/// The marketplace file of the snapshot, if it has one; an unreadable one
/// is a warning, never a failed build.
fn read_marketplace(
    config: &Config,
    snapshot: &Snapshot,
    entries: &[source::Entry],
) -> (Marketplace, Vec<(String, Finding)>) {
    let path = &config.walk.marketplace;
    let Some(entry) = entries.iter().find(|e| &e.path == path) else {
        return (Marketplace::default(), Vec::new());
    };
    let result = snapshot
        .reader()
        .read(entry)
        .map_err(|e| (1, e.to_string()))
        .and_then(|bytes| parse_marketplace(&bytes));
    match result {
        Ok(marketplace) => (marketplace, Vec::new()),
        Err((line, message)) => (
            Marketplace::default(),
            vec![(
                path.clone(),
                Finding::at(
                    WarningClass::MarketplaceInvalid,
                    line,
                    format!("ignored: {message}"),
                ),
            )],
        ),
    }
}
