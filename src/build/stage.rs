//! The CPU-bound middle of a build: walk, parse, chunk, validate, embed and
//! assemble one snapshot into files staged on disk.

use agentfinder_skills_reader::contract::{CATALOG_FILE, DOCUMENTS_FILE, FINDINGS_FILE};

use super::BuildError;
use crate::assemble::{Assembled, Assembler, SharedEmbedder, Sinks, VersionInfo};
use crate::config::Config;
use crate::diagnostics::{Finding, WarningClass};
use crate::logging::Reporter;
use crate::marketplace::{parse_marketplace, Marketplace};
use crate::read_skills::{extract, SkillTree};
use crate::run_context::RunContext;
use crate::source::{self, rfc3339, Snapshot};
use crate::staging::HashingFile;
use crate::walk::{one_version_per_plugin, plugin_aliases, skill_entries, WalkRules};
use crate::write::ArtifactFiles;

/// Skill files parsed per batch: enough to keep both cores busy, few enough
/// that memory does not grow with the repository.
const BATCH: usize = 256;

/// Walks, parses, chunks, validates and assembles `snapshot` into files
/// staged in `dir`. One thread parses batches on all cores while this one
/// turns the previous batch into NDJSON, so memory holds two batches at
/// most, whatever the number of skills.
pub(super) fn stage_artifact(
    config: &Config,
    snapshot: &Snapshot,
    reporter: &Reporter,
    run: &RunContext,
    embedder: Option<SharedEmbedder>,
    dir: &std::path::Path,
) -> Result<(Assembled, ArtifactFiles), BuildError> {
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
        file_times: snapshot.last_changed(&paths)?,
    };
    let io = |e: std::io::Error| BuildError::Internal(format!("staging the artifact: {e}"));
    let sinks = Sinks {
        documents: HashingFile::create(dir, DOCUMENTS_FILE).map_err(io)?,
        catalog: HashingFile::create(dir, CATALOG_FILE).map_err(io)?,
        findings: HashingFile::create(dir, FINDINGS_FILE).map_err(io)?,
    };
    let mut assembler = Assembler::new(config, version, &marketplace, marketplace_findings, sinks)?
        .with_embedder(embedder);

    let tree = SkillTree::new(&skills);
    let options = config.parse_options();
    let bar = reporter.progress(skills.len() as u64, "parsing");
    let tick = || bar.inc(1);
    std::thread::scope(|scope| -> Result<(), BuildError> {
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        let (tree, tick, skills) = (&tree, &tick, &skills);
        let producer = scope.spawn(move || -> Result<(), BuildError> {
            for batch in skills.chunks(BATCH) {
                // Its own object database, released after the batch.
                let source = snapshot.reopened()?;
                let parsed = extract(&source, batch, tree, &options, cache, tick);
                if sender.send(parsed).is_err() {
                    break; // the assembler stopped on an error
                }
            }
            Ok(())
        });
        for batch in receiver {
            assembler.add_all(&batch)?;
        }
        producer
            .join()
            .map_err(|_| BuildError::Internal("the parsing thread panicked".into()))?
    })?;
    bar.finish_and_clear();

    let generated_at = rfc3339(crate::time::unix_seconds());
    let (assembled, sinks) = assembler.finish(&generated_at)?;
    let files = ArtifactFiles {
        documents: sinks.documents.finish().map_err(io)?,
        catalog: sinks.catalog.finish().map_err(io)?,
        findings: sinks.findings.finish().map_err(io)?,
        manifest: assembled.manifest.clone(),
    };
    Ok((assembled, files))
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
