//! The build command: clone -> walk -> parse/chunk -> validate -> write ->
//! promote, each stage a call.

use std::path::PathBuf;
use std::time::Instant;

use agentfinder_skills_reader::artifact::{read_manifest, read_success};
use agentfinder_skills_reader::contract::{
    ArtifactLocation, CATALOG_FILE, DOCUMENTS_FILE, SCHEMA_VERSION,
};
use agentfinder_skills_reader::store::Store;

use crate::assemble::{AssembleError, Assembled, Assembler, SharedEmbedder, VersionInfo};
use crate::config::Config;
use crate::diagnostics::{Finding, WarningClass};
use crate::embed::EmbedError;
use crate::extract::{extract, ParseCache, SkillTree};
use crate::failpoint::failpoint;
use crate::lock::{LockError, LockTimes, StoreLock};
use crate::marketplace::{parse_marketplace, Marketplace};
use crate::promote::{promote, PromoteError, PromotePolicy, Promotion};
use crate::report::Reporter;
pub use crate::run::RunContext;
use crate::source::{self, rfc3339, Snapshot, SourceError, SourceSpec};
use crate::staging::{remove_stale, HashingFile};
use crate::validate::{DocumentError, StrictPolicy};
use crate::walk::{skill_entries, GlobError, WalkRules};
use crate::write::{write_commit, ArtifactFiles, WriteError, WriteOutcome};

/// What to build.
#[derive(Debug, Clone)]
pub struct BuildRequest {
    /// Effective configuration.
    pub config: Config,
    /// Where to read.
    pub source: SourceSpec,
    /// Branch, tag or commit.
    pub reference: Option<String>,
    /// Promote `latest/` afterwards.
    pub promote: bool,
    /// Skip promotion's age and shrink checks.
    pub force: bool,
    /// What fails the build.
    pub strict: StrictPolicy,
}

/// Whether this run built the commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildStatus {
    /// Written by this run.
    Built,
    /// A complete artifact existed already; nothing was parsed.
    AlreadyBuilt,
}

/// The result of a build, for the summary line.
#[derive(Debug, Clone)]
pub struct BuildSummary {
    /// The version built.
    pub commit: String,
    /// Built or already there.
    pub status: BuildStatus,
    /// Skill documents.
    pub skills: u64,
    /// All documents.
    pub documents: u64,
    /// Skipped files.
    pub skipped: usize,
    /// Warnings.
    pub warnings: usize,
    /// Promotion outcome, when asked for.
    pub promotion: Option<Promotion>,
    /// Where it was written.
    pub store: String,
    /// Outcome of the load stage, set by the caller.
    pub load: Option<String>,
    /// Vectors computed by the model in this build.
    pub embedded: u64,
    /// Vectors reused from the cache.
    pub cached: u64,
    /// Seconds the model spent embedding.
    pub embed_seconds: f64,
    /// Wall time in seconds.
    pub seconds: f64,
}

impl BuildSummary {
    /// The summary as JSON fields (for `--log-format json`).
    pub fn fields(&self) -> serde_json::Value {
        serde_json::json!({
            "event": "build",
            "commit": self.commit,
            "schema_version": SCHEMA_VERSION,
            "status": self.status_name(),
            "skills": self.skills,
            "documents": self.documents,
            "skipped": self.skipped,
            "warnings": self.warnings,
            "latest": self.promotion_name(),
            "load": self.load.as_deref().unwrap_or("not-run"),
            "vectors_embedded": self.embedded,
            "vectors_cached": self.cached,
            "embed_docs_per_second": self.embed_rate(),
            "store": self.store,
            "seconds": (self.seconds * 1000.0).round() / 1000.0,
        })
    }

    /// Documents embedded per second of model time (0 when none were).
    pub fn embed_rate(&self) -> f64 {
        if self.embed_seconds > 0.0 {
            (self.embedded as f64 / self.embed_seconds * 10.0).round() / 10.0
        } else {
            0.0
        }
    }

    fn status_name(&self) -> &'static str {
        match self.status {
            BuildStatus::Built => "built",
            BuildStatus::AlreadyBuilt => "already-built",
        }
    }

    fn promotion_name(&self) -> &'static str {
        match &self.promotion {
            None => "not-requested",
            Some(Promotion::AlreadyLatest) => "already-latest",
            Some(Promotion::Promoted { .. }) => "promoted",
        }
    }

    /// The one line every run ends with.
    pub fn line(&self) -> String {
        let status = match self.status {
            BuildStatus::Built => "built",
            BuildStatus::AlreadyBuilt => "already-built",
        };
        let promotion = match &self.promotion {
            None => "not-requested",
            Some(Promotion::AlreadyLatest) => "already-latest",
            Some(Promotion::Promoted { .. }) => "promoted",
        };
        format!(
            "summary: commit={} schema={SCHEMA_VERSION} status={status} skills={} documents={} skipped={} warnings={} vectors={}+{}cached({}/s) latest={promotion} load={} store={} seconds={:.2}",
            self.commit,
            self.skills,
            self.documents,
            self.skipped,
            self.warnings,
            self.embedded,
            self.cached,
            self.embed_rate(),
            self.load.as_deref().unwrap_or("not-run"),
            self.store,
            self.seconds
        )
    }
}

/// A build failed; the variant is the failure class (and exit code).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The source could not be opened or read.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The configuration is unusable.
    #[error(transparent)]
    Glob(#[from] GlobError),
    /// `--strict` found problems, or a document broke the contract.
    #[error("{0}")]
    Validation(String),
    /// The store failed.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// Promotion failed or was refused.
    #[error(transparent)]
    Promote(#[from] PromoteError),
    /// A builder lock could not be taken.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The embed stage could not load or run its model.
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// A background task died.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<DocumentError> for BuildError {
    fn from(e: DocumentError) -> Self {
        Self::Validation(e.to_string())
    }
}

impl From<AssembleError> for BuildError {
    fn from(e: AssembleError) -> Self {
        match e {
            AssembleError::Document(e) => e.into(),
            AssembleError::Io(e) => Self::Internal(format!("staging the artifact: {e}")),
            AssembleError::Embed(e) => Self::Embed(e),
        }
    }
}

/// Runs a build into `store`.
pub async fn build(
    request: BuildRequest,
    store: &Store,
    reporter: &Reporter,
) -> Result<BuildSummary, BuildError> {
    let started = Instant::now();
    let snapshot = open_source(&request).await?;
    let commit = snapshot.version.id.clone();
    reporter.info(
        "source",
        format!(
            "source {} at {commit} ({})",
            snapshot.display, snapshot.version.branch
        ),
    );

    let run = RunContext::new(&request.config, ParseCache::disabled());
    let outcome: Result<BuildSummary, BuildError> = async {
        let mut summary = build_commit(&request, snapshot, store, reporter, run.clone()).await?;
        summary.store = store.display.clone();
        if request.promote {
            let policy = PromotePolicy {
                force: request.force,
                max_shrink_ratio: request.config.promote.max_shrink_ratio,
            };
            summary.promotion = Some(promote(store, &commit, policy).await?);
        }
        Ok(summary)
    }
    .await;
    // After promotion, so sharing never delays latest/; after a failure too,
    // so what was embedded is kept.
    run.share_vectors(store, reporter).await;
    let mut summary = outcome?;
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// Makes `commits/<commit>/` complete for `snapshot`: a no-op when it is,
/// else a build under the commit's lock (a builder that waited for the lock
/// finds it complete). `run` carries parse results and the embedder across commits.
pub async fn build_commit(
    request: &BuildRequest,
    snapshot: Snapshot,
    store: &Store,
    reporter: &Reporter,
    run: RunContext,
) -> Result<BuildSummary, BuildError> {
    let commit = snapshot.version.id.clone();
    let location = ArtifactLocation::Commit(commit.clone());
    if is_complete(store, &location).await? {
        return already_built(store, &location, &request.config).await;
    }
    let purpose = format!("build {commit}");
    let lock_name = format!("commit-{commit}");
    let lock = StoreLock::acquire(store, &lock_name, &purpose, LockTimes::default()).await?;
    failpoint("commit-after-lock");
    let result = if is_complete(store, &location).await? {
        already_built(store, &location, &request.config).await
    } else {
        build_new(request, snapshot, store, reporter, run).await
    };
    lock.release().await;
    result
}

/// Whether `location` has its `_SUCCESS` (and so is complete).
pub(crate) async fn is_complete(
    store: &Store,
    location: &ArtifactLocation,
) -> Result<bool, BuildError> {
    read_success(store, location)
        .await
        .map(|marker| marker.is_some())
        .map_err(|e| BuildError::Promote(PromoteError::Read(e)))
}

async fn open_source(request: &BuildRequest) -> Result<Snapshot, BuildError> {
    let spec = request.source.clone();
    let reference = request.reference.clone();
    let cache = PathBuf::from(&request.config.source.cache_dir);
    let branch = request.config.source.branch.clone();
    tokio::task::spawn_blocking(move || source::open(&spec, reference.as_deref(), &cache, &branch))
        .await
        .map_err(|e| BuildError::Internal(e.to_string()))?
        .map_err(BuildError::from)
}

async fn already_built(
    store: &Store,
    location: &ArtifactLocation,
    config: &Config,
) -> Result<BuildSummary, BuildError> {
    let (_, manifest) = read_manifest(store, location)
        .await
        .map_err(|e| BuildError::Promote(PromoteError::Read(e)))?;
    if manifest.config_digest != config.digest() {
        crate::report::global().warn(
            "build",
            format!(
                "{location} was built with another configuration (digest {}); commit artifacts are immutable, so it is kept",
                &manifest.config_digest[..12.min(manifest.config_digest.len())]
            ),
        );
    }
    Ok(BuildSummary {
        commit: manifest.source_commit,
        status: BuildStatus::AlreadyBuilt,
        skills: manifest.skill_count,
        documents: manifest.document_count,
        skipped: manifest.skipped.len(),
        warnings: manifest.warnings.len(),
        promotion: None,
        store: String::new(),
        load: None,
        embedded: 0,
        cached: 0,
        embed_seconds: 0.0,
        seconds: 0.0,
    })
}

async fn build_new(
    request: &BuildRequest,
    snapshot: Snapshot,
    store: &Store,
    reporter: &Reporter,
    run: RunContext,
) -> Result<BuildSummary, BuildError> {
    let config = request.config.clone();
    let reporter_copy = *reporter;
    // Beside a local store, so its files can be renamed into place instead of copied.
    if let Some(root) = &store.local_root {
        remove_stale(root, &[".staging-"]);
    }
    let staging = match &store.local_root {
        Some(root) => tempfile::Builder::new()
            .prefix(".staging-")
            .tempdir_in(root),
        None => tempfile::Builder::new()
            .prefix("agentfinder-build-")
            .tempdir(),
    }
    .map_err(|e| BuildError::Internal(format!("cannot create a staging folder: {e}")))?;
    let dir = staging.path().to_path_buf();
    let embedder = run.embedder(store, reporter).await?;
    let (assembled, files) = tokio::task::spawn_blocking(move || {
        stage_artifact(&config, &snapshot, &reporter_copy, &run, embedder, &dir)
    })
    .await
    .map_err(|e| BuildError::Internal(e.to_string()))??;
    report_findings(reporter, &assembled);
    enforce_strict(&request.strict, &assembled)?;

    let manifest = &files.manifest;
    let (commit, skills, documents) = (
        manifest.source_commit.clone(),
        manifest.skill_count,
        manifest.document_count,
    );
    let outcome = write_commit(store, &files.seal()).await?;
    drop(staging);
    let status = match outcome {
        WriteOutcome::Written => BuildStatus::Built,
        WriteOutcome::AlreadyComplete => BuildStatus::AlreadyBuilt,
    };
    Ok(BuildSummary {
        commit,
        status,
        skills,
        documents,
        skipped: assembled.skipped.len(),
        warnings: assembled.warnings.len(),
        promotion: None,
        store: String::new(),
        load: None,
        embedded: assembled.embedded,
        cached: assembled.cached,
        embed_seconds: assembled.embed_seconds,
        seconds: 0.0,
    })
}

/// Skill files parsed per batch: enough to keep both cores busy, few enough
/// that memory does not grow with the repository.
const BATCH: usize = 256;

/// Walk, parse, chunk, validate and assemble into files staged in `dir`:
/// the CPU-bound middle. One thread parses batches on all cores while this
/// one turns the previous batch into NDJSON, so memory holds two batches at
/// most, whatever the number of skills.
fn stage_artifact(
    config: &Config,
    snapshot: &Snapshot,
    reporter: &Reporter,
    run: &RunContext,
    embedder: Option<SharedEmbedder>,
    dir: &std::path::Path,
) -> Result<(Assembled, ArtifactFiles), BuildError> {
    let cache = run.parses.as_ref();
    let entries = snapshot.list()?;
    let rules = WalkRules::new(&config.walk.include, &config.walk.exclude_dirs)?;
    let skills = skill_entries(&entries, &rules);
    reporter.info(
        "walk",
        format!(
            "found {} skill files in {} entries",
            skills.len(),
            entries.len()
        ),
    );
    let (marketplace, marketplace_findings) = read_marketplace(config, snapshot, &entries);
    let version = VersionInfo {
        commit: snapshot.version.id.clone(),
        commit_time: rfc3339(snapshot.version.time),
        branch: snapshot.version.branch.clone(),
    };
    let io = |e: std::io::Error| BuildError::Internal(format!("staging the artifact: {e}"));
    let documents = HashingFile::create(dir, DOCUMENTS_FILE).map_err(io)?;
    let catalog = HashingFile::create(dir, CATALOG_FILE).map_err(io)?;
    let mut assembler = Assembler::new(
        config,
        version,
        &marketplace,
        marketplace_findings,
        documents,
        catalog,
    )?
    .with_embedder(embedder);

    let tree = SkillTree::new(&skills);
    let options = config.parse_options();
    let bar = reporter.progress(skills.len() as u64, "parsing");
    let tick = || bar.inc(1);
    std::thread::scope(|scope| -> Result<(), BuildError> {
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        let (tree, tick, skills) = (&tree, &tick, &skills);
        scope.spawn(move || {
            for batch in skills.chunks(BATCH) {
                let parsed = extract(snapshot, batch, tree, &options, cache, tick);
                if sender.send(parsed).is_err() {
                    break; // the assembler stopped on an error
                }
            }
        });
        for batch in receiver {
            assembler.add_all(&batch)?;
        }
        Ok(())
    })?;
    bar.finish_and_clear();

    let generated_at = rfc3339(now_seconds());
    let (assembled, documents, catalog) = assembler.finish(&generated_at)?;
    let files = ArtifactFiles {
        documents: documents.finish().map_err(io)?,
        catalog: catalog.finish().map_err(io)?,
        manifest: assembled.manifest.clone(),
    };
    Ok((assembled, files))
}

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

fn report_findings(reporter: &Reporter, assembled: &Assembled) {
    for skip in &assembled.skipped {
        reporter.skipped(&skip.path, &skip.class, &skip.reason);
    }
    reporter.findings(
        assembled
            .warnings
            .iter()
            .map(|(path, f)| (path.as_str(), f.line, f.class.as_str(), f.message.as_str())),
    );
}

fn enforce_strict(policy: &StrictPolicy, assembled: &Assembled) -> Result<(), BuildError> {
    let skips = if policy.skips {
        assembled.skipped.len()
    } else {
        0
    };
    let failing: Vec<&str> = assembled
        .warnings
        .iter()
        .filter(|(_, f)| policy.fails_on(f.class))
        .map(|(path, _)| path.as_str())
        .collect();
    if skips + failing.len() == 0 {
        return Ok(());
    }
    Err(BuildError::Validation(format!(
        "--strict: {skips} skipped file(s) and {} warning(s) of the named classes; nothing was written",
        failing.len()
    )))
}

fn now_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
