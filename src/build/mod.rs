//! The build command: clone -> walk -> parse/chunk -> validate -> embed ->
//! write -> promote, each stage a call.

pub mod interrupt;
mod plan;
pub mod run_context;
mod sightings;
pub mod sources;
mod stage;
mod summary;

use std::time::Instant;

use agentfinder_skills_reader::contract::ArtifactLocation;
use agentfinder_skills_reader::read::ReadError;
use agentfinder_skills_reader::store::Store;

use self::run_context::RunContext;
use self::summary::{already_built, assembled_summary};
pub use self::summary::{BuildStatus, BuildSummary, StageTimes};
use crate::assemble::AssembleError;
use crate::config::Config;
use crate::embed::EmbedError;
use crate::failpoint::failpoint;
use crate::lock::{with_lock, LockError, LockGuard, LockTimes, StoreLock};
use crate::logging::Reporter;
use crate::parse::read::ParseCache;
use crate::promote::{promote_ordered, PromoteError, PromotePolicy};
use crate::reuse::Base;
use crate::source::identity::{identify, IdentityInputs};
use crate::source::{self, Snapshot, SourceError, SourceSpec};
use crate::store::put::WriteError;
use crate::store::staging::{remove_abandoned, Staging, STAGING_PREFIX};
use crate::validate::{DocumentError, StrictPolicy};
use crate::walk::GlobError;
use crate::write::variant::{target, Target};
use crate::write::{write_commit, CommitFiles, WriteOutcome};

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
    /// Skip promotion's age, repository and shrink checks.
    pub force: bool,
    /// What fails the build.
    pub strict: StrictPolicy,
    /// Build (and promote) a source that holds no skill; refused otherwise.
    pub allow_empty: bool,
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
    /// An existing artifact in the store could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The store failed.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// Promotion failed or was refused.
    #[error(transparent)]
    Promote(#[from] PromoteError),
    /// A builder lock could not be taken, or was lost.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The embed stage could not load or run its model.
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// The build ran past its deadline before promotion (nothing was
    /// promoted).
    #[error("timed out after {0} s, before promotion (latest/ unchanged)")]
    TimedOut(u64),
    /// The build was told to stop (its time ran out) and did, before
    /// promotion.
    #[error("stopped before promotion (latest/ unchanged)")]
    Stopped,
    /// A signal (Ctrl-C, SIGTERM) stopped the build before promotion; the
    /// vectors it embedded are kept in the cache.
    #[error("interrupted by {}: stopped before promotion (latest/ unchanged; the vectors embedded so far are kept in the cache)", .0.name())]
    Interrupted(interrupt::Signal),
    /// The source holds no skill, and `--allow-empty` was not given.
    #[error("{source_name} at {commit} holds no skill to index ({skipped} skill files skipped; [walk].include says which files are skills); refusing to build an empty artifact: check --source and --ref, or pass --allow-empty if an empty source is intended")]
    Empty {
        /// The source.
        source_name: String,
        /// The version read.
        commit: String,
        /// Skill files found but skipped.
        skipped: u64,
    },
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
    build_by(request, store, reporter, None).await
}

/// Runs a build into `store`; the work before promotion stops at
/// `deadline` ([`BuildError::TimedOut`], `latest/` untouched). Promotion,
/// once begun, always runs to its end: stopped halfway it would leave
/// `latest/` without `_SUCCESS` and its lock held.
pub async fn build_by(
    request: BuildRequest,
    store: &Store,
    reporter: &Reporter,
    deadline: Option<tokio::time::Instant>,
) -> Result<BuildSummary, BuildError> {
    let started = Instant::now();
    // Outside the deadline: a build stopped by it still shares what it
    // embedded (a first embed of a large collection can take longer than
    // a source's timeout; its next run then starts from those vectors).
    let run = RunContext::new(&request.config, ParseCache::disabled()).one_commit();
    let unpromoted = async {
        let opening = Instant::now();
        let snapshot = interrupt::unless_interrupted(open_source(&request)).await?;
        let ancestry = snapshot.ancestry();
        let source_seconds = opening.elapsed().as_secs_f64();
        let request = BuildRequest {
            config: config_for_source(
                &request.config,
                &snapshot.display,
                snapshot.remote_url.as_deref(),
                snapshot.version.is_git,
                reporter,
            ),
            ..request.clone()
        };
        reporter.info(
            "source",
            format!(
                "source {} ({}) at {} ({})",
                snapshot.display,
                request.config.repo(),
                snapshot.version.id,
                snapshot.version.branch
            ),
        );
        let built = build_commit(&request, snapshot, store, reporter, run.clone())
            .await
            .map(|mut summary| {
                summary.stages.source = source_seconds;
                summary
            });
        Ok::<_, BuildError>((request, built, ancestry))
    };
    let (request, built, ancestry) = match deadline {
        Some(deadline) => match tokio::time::timeout_at(deadline, unpromoted).await {
            Ok(finished) => finished?,
            Err(_) => {
                run.share_vectors(store, reporter).await;
                return Err(BuildError::TimedOut(started.elapsed().as_secs()));
            }
        },
        None => unpromoted.await?,
    };
    let outcome: Result<BuildSummary, BuildError> = async {
        let mut summary = built?;
        summary.store = store.display.clone();
        if request.promote {
            if let Some(signal) = interrupt::requested() {
                // commits/<id>/ is complete; latest/ is left alone.
                return Err(BuildError::Interrupted(signal));
            }
            let policy = PromotePolicy {
                force: request.force,
                max_shrink_ratio: request.config.promote.max_shrink_ratio,
            };
            let promoting = Instant::now();
            let promotion = promote_ordered(store, &summary.artifact, policy, ancestry).await?;
            summary.promotion = Some(promotion);
            summary.stages.promote = promoting.elapsed().as_secs_f64();
        }
        Ok(summary)
    }
    .await;
    // After promotion, so sharing never delays latest/; after a failure too,
    // so what was embedded is kept.
    let sharing = Instant::now();
    run.share_vectors(store, reporter).await;
    let mut summary = outcome?;
    summary.stages.share = sharing.elapsed().as_secs_f64();
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// `config` with the repository identity of the source filled in (see
/// [`crate::source::identity`]); warns once when nothing names it.
pub fn config_for_source(
    config: &Config,
    location: &str,
    remote_url: Option<&str>,
    pins_commit: bool,
    reporter: &Reporter,
) -> Config {
    let advice = config.source.naming_advice();
    let identity = identify(IdentityInputs {
        explicit_repo: config.source.repo.as_deref(),
        explicit_url: config.source.url.as_deref(),
        remote_url,
        location,
        naming_advice: &advice,
    });
    if let Some(advice) = &identity.unnamed {
        reporter.warn("source", advice.clone());
    }
    config.for_source(&identity, pins_commit)
}

/// Makes an artifact of `snapshot` complete in the store: a no-op when one
/// built the same way exists, else a build under the commit's lock (a
/// builder that waited for the lock finds it complete). `run` carries parse
/// results and the embedder across commits.
pub async fn build_commit(
    request: &BuildRequest,
    snapshot: Snapshot,
    store: &Store,
    reporter: &Reporter,
    run: RunContext,
) -> Result<BuildSummary, BuildError> {
    let commit = snapshot.version.id.clone();
    // Staging a killed build left (beside a local store, else in the
    // temporary folder); a live build's is kept (its owner lock).
    let abandoned = match &store.local_root {
        Some(root) => remove_abandoned(root, STAGING_PREFIX),
        None => ["agentfinder-build-", "agentfinder-promote-"]
            .iter()
            .flat_map(|prefix| remove_abandoned(&std::env::temp_dir(), prefix))
            .collect(),
    };
    for path in abandoned {
        let removed = format!(
            "removed {}, left by a build that was stopped",
            path.display()
        );
        reporter.info("build", removed);
    }
    let vectors = run.expects_vectors();
    if let Target::Complete { location, manifest } =
        target(store, &commit, &request.config, vectors).await?
    {
        return Ok(already_built(&location, &manifest));
    }
    let purpose = format!("build {commit}");
    let lock = interrupt::unless_interrupted(async {
        let name = format!("commit-{commit}");
        Ok(StoreLock::acquire(store, &name, &purpose, LockTimes::from_env()).await?)
    })
    .await?;
    let guard = lock.guard();
    with_lock(lock, async {
        failpoint("commit-after-lock");
        match target(store, &commit, &request.config, vectors).await? {
            Target::Complete { location, manifest } => Ok(already_built(&location, &manifest)),
            Target::Build { .. } => {
                build_new(request, snapshot, store, reporter, run, &guard).await
            }
        }
    })
    .await
}

async fn open_source(request: &BuildRequest) -> Result<Snapshot, BuildError> {
    let spec = request.source.clone();
    let reference = request.reference.clone();
    let fetching = request.config.fetching();
    off_runtime(move || source::open(&spec, reference.as_deref(), &fetching)).await
}

/// Runs a blocking source operation (clone, fetch, open) off the async runtime.
pub(crate) async fn off_runtime<T: Send + 'static>(
    operation: impl FnOnce() -> Result<T, SourceError> + Send + 'static,
) -> Result<T, BuildError> {
    tokio::task::spawn_blocking(operation)
        .await
        .map_err(|e| BuildError::Internal(e.to_string()))?
        .map_err(BuildError::from)
}

fn artifact_id(location: &ArtifactLocation) -> String {
    location.commit_id().unwrap_or("latest").to_string()
}

async fn build_new(
    request: &BuildRequest,
    snapshot: Snapshot,
    store: &Store,
    reporter: &Reporter,
    run: RunContext,
    guard: &LockGuard,
) -> Result<BuildSummary, BuildError> {
    let config = request.config.clone();
    let reporter_copy = *reporter;
    let run_for_stage = run.clone();
    let commit = snapshot.version.id.clone();
    // Beside a local store, so its files can be renamed into place instead of copied.
    if let Some(root) = &store.local_root {
        // A source's folder of a many-source store exists once it is built.
        std::fs::create_dir_all(root)
            .map_err(|e| BuildError::Internal(format!("cannot create {}: {e}", root.display())))?;
    }
    let staging = match &store.local_root {
        Some(root) => Staging::create_in(root, STAGING_PREFIX),
        None => Staging::create_in(&std::env::temp_dir(), "agentfinder-build-"),
    }
    .map_err(|e| BuildError::Internal(format!("cannot create a staging folder: {e}")))?;
    let dir = staging.path().to_path_buf();
    let staging_started = Instant::now();
    let embedder = interrupt::unless_interrupted(run.embedder(store, reporter)).await?;
    let source_name = snapshot.display.clone();
    let base = match run.take_base() {
        Some(base) => Some(base),
        None => base_from_latest(store, &request.config, reporter).await,
    };
    // Dropped with this future (a source's timeout), it stops the stage
    // at its next batch, so no core keeps working for a build given up.
    let stop = stage::StopOnDrop(std::sync::Arc::default());
    let stop_flag = stop.0.clone();
    let staged = tokio::task::spawn_blocking(move || {
        stage::stage_artifact(
            &config,
            &snapshot,
            &reporter_copy,
            &run_for_stage,
            embedder,
            base,
            &dir,
            &stop_flag,
        )
    })
    .await
    .map_err(|e| BuildError::Internal(e.to_string()))??;
    let stage::Staged {
        assembled,
        mut parts,
        patched,
        plan_seconds,
        spent,
        assemble_seconds,
    } = staged;
    let mut stages = StageTimes {
        plan: plan_seconds,
        parse: staging_started.elapsed().as_secs_f64() - plan_seconds,
        threads: spent,
        assemble: assemble_seconds,
        ..StageTimes::default()
    };
    let writing = Instant::now();
    summary::report_findings(reporter, &assembled);
    if assembled.manifest.skill_count == 0 && !request.allow_empty {
        let skipped = assembled.findings.skipped_total();
        return Err(BuildError::Empty {
            source_name,
            commit,
            skipped,
        });
    }
    if let Some(failure) = assembled.findings.strict_failure(&request.strict) {
        return Err(BuildError::Validation(failure));
    }
    if request.config.embed.shard.is_some() {
        // Its documents lack the other shards' vectors: only the vector
        // cache, shared when the build ends, is this run's work.
        let not_written = (String::new(), BuildStatus::EmbeddedShard, None);
        let mut summary = assembled_summary(commit, not_written, &assembled, patched);
        summary.stages = stages;
        return Ok(summary);
    }

    // Where it goes is decided by what was built (the model may have
    // loaded or not), not by what was expected.
    let vectors = assembled.manifest.embedder.is_some();
    let (location, rebuild) = match target(store, &commit, &request.config, vectors).await? {
        Target::Complete { location, manifest } => return Ok(already_built(&location, &manifest)),
        Target::Build { location, rebuild } => (location, rebuild),
    };
    if let Some(reason) = &rebuild {
        reporter.info("build", format!("rebuilding: {reason}; writing {location}"));
    }
    let artifact = artifact_id(&location);
    let named_buckets = std::mem::take(&mut parts.named_buckets);
    let next_base = parts
        .entries
        .take()
        .map(|entries| Base::new(&commit, entries, named_buckets).keyed_with(parts.fingerprint));
    let files = CommitFiles {
        parts,
        manifest: assembled.manifest.clone(),
    };
    let outcome = write_commit(store, &files.seal(&artifact), guard).await?;
    drop(staging);
    sightings::record_first_sightings(store, &assembled.met, reporter).await;
    if let Some(base) = next_base {
        run.set_base(base);
    }
    let status = match (outcome, &rebuild) {
        (WriteOutcome::AlreadyComplete, _) => BuildStatus::AlreadyBuilt,
        (WriteOutcome::Written, None) => BuildStatus::Built,
        (WriteOutcome::Written, Some(_)) => BuildStatus::Rebuilt,
    };
    stages.write = writing.elapsed().as_secs_f64();
    let mut summary = assembled_summary(commit, (artifact, status, rebuild), &assembled, patched);
    summary.stages = stages;
    Ok(summary)
}

/// The entries of `latest/`, when it holds parts of this repository: the
/// parse cache of a build in a new process. Unreadable, it is a warning and
/// the build parses everything.
async fn base_from_latest(store: &Store, config: &Config, reporter: &Reporter) -> Option<Base> {
    match Base::from_latest(store, config.repo()).await {
        Ok(base) => base,
        Err(e) => {
            reporter.warn("build", format!("not reusing latest/'s parts: {e}"));
            None
        }
    }
}
