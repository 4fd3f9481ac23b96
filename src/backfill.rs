//! The backfill command: one `commits/<sha>/` per commit of a history.
//!
//! Walks first-parent history, oldest first, and builds every selected
//! commit that lacks a complete artifact; complete ones are skipped without
//! reading them, so a backfill stopped by a crash or Ctrl-C continues where
//! it stopped. Each distinct SKILL.md blob is parsed once per run and reused
//! by every commit that contains it (see [`ParseCache`]), and a commit whose
//! parent was the one built just before is planned from that build and the
//! files the commit changed, not from a listing of its tree (see
//! `build::plan`). `latest/` is left alone unless `--promote-newest`.

use std::io::IsTerminal;
use std::time::Instant;

use agentfinder_skills_reader::store::Store;

use crate::build::interrupt;
use crate::build::run_context::RunContext;
use crate::build::{
    build_commit, config_for_source, off_runtime, BuildError, BuildRequest, BuildStatus,
};
use crate::config::Config;
use crate::logging::Reporter;
use crate::parse::read::ParseCache;
use crate::promote::{promote_ordered, PromotePolicy, Promotion};
use crate::shard::Shard;
use crate::source::{open_history, History, SourceSpec};
use crate::validate::StrictPolicy;
use crate::write::variant::{target, Target};

/// Which commits to build.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Newest commit of the walk (default: HEAD, or the remote's default branch).
    pub to: Option<String>,
    /// Oldest commit of the walk, included.
    pub from: Option<String>,
    /// At most this many commits, the newest.
    pub last: Option<usize>,
    /// Only commits at or after this time (Unix seconds).
    pub since: Option<i64>,
    /// Exactly these commits instead of a walk.
    pub commits: Vec<String>,
}

/// What to backfill.
#[derive(Debug, Clone)]
pub struct BackfillRequest {
    /// Effective configuration.
    pub config: Config,
    /// The repository.
    pub source: SourceSpec,
    /// Which commits.
    pub selection: Selection,
    /// This job's part of them.
    pub shard: Option<Shard>,
    /// Promote the newest selected commit afterwards.
    pub promote_newest: bool,
    /// Skip promotion's age and shrink checks.
    pub force: bool,
    /// What fails a commit.
    pub strict: StrictPolicy,
}

/// The outcome of a backfill.
#[derive(Debug, Clone, Default)]
pub struct BackfillSummary {
    /// Commits selected (after sharding).
    pub selected: usize,
    /// Built by this run.
    pub built: usize,
    /// Already complete, skipped.
    pub already: usize,
    /// Commits that failed validation, with the reason.
    pub failed: Vec<(String, String)>,
    /// Documents written by this run.
    pub documents: u64,
    /// Skill files parsed (cache misses) and reused (hits).
    pub parsed: u64,
    /// Skill files reused from an earlier commit of this run.
    pub reused: u64,
    /// Commits built from their parent's build and their own diff, not
    /// from a listing of the whole tree.
    pub patched: usize,
    /// Texts embedded by the model in this run.
    pub embedded: u64,
    /// Vectors reused from the cache in this run.
    pub cached: u64,
    /// Promotion outcome with `--promote-newest`.
    pub promotion: Option<(String, Promotion)>,
    /// Why `--promote-newest` promoted nothing.
    pub not_promoted: Option<String>,
    /// Wall time.
    pub seconds: f64,
}

impl BackfillSummary {
    /// The summary as JSON fields (for `--log-format json`).
    pub fn fields(&self, store: &str, shard: Option<Shard>) -> serde_json::Value {
        let (latest, latest_commit) = match &self.promotion {
            None if self.not_promoted.is_some() => ("not-promoted", None),
            None => ("untouched", None),
            Some((commit, Promotion::AlreadyLatest)) => ("already-latest", Some(commit)),
            Some((commit, Promotion::Promoted { .. })) => ("promoted", Some(commit)),
        };
        serde_json::json!({
            "event": "backfill",
            "schema_version": agentfinder_skills_reader::contract::SCHEMA_VERSION,
            "shard": shard.map_or("1/1".to_string(), |s| format!("{}/{}", s.index, s.count)),
            "commits": self.selected,
            "built": self.built,
            "already": self.already,
            "failed": self.failed.iter().map(|(c, r)| serde_json::json!({"commit": c, "reason": r})).collect::<Vec<_>>(),
            "documents": self.documents,
            "parsed": self.parsed,
            "reused": self.reused,
            "patched": self.patched,
            "vectors_embedded": self.embedded,
            "vectors_cached": self.cached,
            "latest": latest,
            "latest_commit": latest_commit,
            "not_promoted": self.not_promoted,
            "store": store,
            "seconds": (self.seconds * 1000.0).round() / 1000.0,
        })
    }

    /// The one line a backfill ends with.
    pub fn line(&self, store: &str, shard: Option<Shard>) -> String {
        let shard = shard.map_or("1/1".to_string(), |s| format!("{}/{}", s.index, s.count));
        let latest = match &self.promotion {
            None if self.not_promoted.is_some() => "not-promoted".to_string(),
            None => "untouched".to_string(),
            Some((commit, Promotion::AlreadyLatest)) => format!("already-latest:{commit}"),
            Some((commit, Promotion::Promoted { .. })) => format!("promoted:{commit}"),
        };
        format!(
            "backfill: shard={shard} commits={} built={} already={} failed={} documents={} parsed={} reused={} patched={} vectors={}+{}cached latest={latest} store={store} seconds={:.2}",
            self.selected,
            self.built,
            self.already,
            self.failed.len(),
            self.documents,
            self.parsed,
            self.reused,
            self.patched,
            self.embedded,
            self.cached,
            self.seconds
        )
    }
}

/// Runs a backfill into `store`.
pub async fn backfill(
    request: BackfillRequest,
    store: &Store,
    reporter: &Reporter,
) -> Result<BackfillSummary, BuildError> {
    let started = Instant::now();
    let history = open(&request).await?;
    let commits = select(&history, &request.selection)?;
    let commits: Vec<String> = commits
        .into_iter()
        .filter(|c| request.shard.is_none_or(|s| s.owns(c)))
        .collect();
    reporter.info(
        "backfill",
        format!(
            "backfill of {} commit(s) of {} ({}) into {}",
            commits.len(),
            history.display,
            history.branch,
            store.display
        ),
    );

    let config = config_for_source(
        &request.config,
        &history.display,
        history.remote_url.as_deref(),
        true,
        reporter,
    );
    let build_request = BuildRequest {
        config: config.clone(),
        source: request.source.clone(),
        reference: None,
        promote: false,
        force: request.force,
        strict: request.strict.clone(),
        // Commits of a history before its first skill are history too.
        allow_empty: true,
    };
    let quiet_builds = Reporter {
        quiet: true,
        ..*reporter
    };
    let run = RunContext::new(&config, ParseCache::default());
    let cache = run.parses.clone();
    let mut summary = BackfillSummary {
        selected: commits.len(),
        ..Default::default()
    };
    let mut progress = Progress::new(reporter, commits.len());
    let mut entries_reused = 0;
    for commit in &commits {
        if let Some(signal) = interrupt::requested() {
            run.share_vectors(store, reporter).await;
            return Err(BuildError::Interrupted(signal));
        }
        let existing = target(store, commit, &config, run.expects_vectors()).await?;
        if let Target::Complete { .. } = existing {
            summary.already += 1;
        } else {
            let id = history.resolve(commit)?;
            let snapshot = history.snapshot(id)?;
            match build_commit(&build_request, snapshot, store, &quiet_builds, run.clone()).await {
                Ok(built) => {
                    match built.status {
                        BuildStatus::Built | BuildStatus::Rebuilt => summary.built += 1,
                        BuildStatus::AlreadyBuilt => summary.already += 1,
                        // A backfill's configuration never asks for a shard.
                        BuildStatus::EmbeddedShard => {}
                    }
                    summary.documents += built.documents;
                    summary.patched += usize::from(built.patched);
                    entries_reused += built.reused;
                    summary.embedded += built.embedded;
                    summary.cached += built.cached;
                }
                Err(BuildError::Validation(reason)) => {
                    reporter.warn("backfill", format!("{commit}: {reason}"));
                    summary.failed.push((commit.clone(), reason));
                }
                Err(other) => {
                    run.share_vectors(store, reporter).await;
                    return Err(other);
                }
            }
            cache.advance();
            run.share_vectors_if_due(store, reporter).await;
        }
        let (hits, misses) = cache.stats();
        progress.tick(&summary, hits + misses + entries_reused);
    }
    progress.finish();
    run.share_vectors(store, reporter).await;
    // Reused: files whose entry the commit before made, and files parsed
    // once for several commits; parsed: every file read and parsed.
    let (hits, misses) = cache.stats();
    (summary.reused, summary.parsed) = (entries_reused + hits, misses);

    if request.promote_newest {
        if let Some(newest) = commits.last() {
            let policy = PromotePolicy {
                force: request.force,
                max_shrink_ratio: request.config.promote.max_shrink_ratio,
            };
            // Only the newest commit's artifact built as this run builds
            // (it may be a rebuild beside commits/<newest>/): when its build
            // failed, commits/<newest>/ may be another configuration's.
            match target(store, newest, &config, run.expects_vectors()).await? {
                Target::Complete { location, .. } => {
                    let artifact = location.commit_id().unwrap_or(newest).to_string();
                    let ancestry = Some(history.ancestry());
                    let outcome = promote_ordered(store, &artifact, policy, ancestry).await?;
                    summary.promotion = Some((newest.clone(), outcome));
                }
                Target::Build { location, .. } => {
                    let reason = format!(
                        "latest/ not promoted: the newest commit {newest} has no complete artifact built with this configuration ({location} is missing; see its failure above)"
                    );
                    reporter.warn("backfill", reason.clone());
                    summary.not_promoted = Some(reason);
                }
            }
        }
    }
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

async fn open(request: &BackfillRequest) -> Result<History, BuildError> {
    let spec = request.source.clone();
    let to = request.selection.to.clone();
    let fetching = request.config.fetching();
    off_runtime(move || open_history(&spec, to.as_deref(), &fetching)).await
}

/// The selected commits, oldest first.
fn select(history: &History, selection: &Selection) -> Result<Vec<String>, BuildError> {
    if !selection.commits.is_empty() {
        let mut listed = Vec::new();
        for commit in &selection.commits {
            let id = history.resolve(commit)?;
            let (_, time) = history.first_parent(id, |_, _| true)?[0];
            listed.push((time, id.to_string()));
        }
        listed.sort();
        listed.dedup_by(|a, b| a.1 == b.1);
        return Ok(listed.into_iter().map(|(_, id)| id).collect());
    }
    let head = history.resolve(selection.to.as_deref().unwrap_or("HEAD"))?;
    let from = selection
        .from
        .as_deref()
        .map(|r| history.resolve(r))
        .transpose()?;
    let mut count = 0usize;
    let walk = history.first_parent(head, |id, time| {
        count += 1;
        Some(id) == from
            || selection.last.is_some_and(|n| count >= n)
            || selection.since.is_some_and(|since| time < since)
    })?;
    let mut commits: Vec<String> = walk
        .into_iter()
        .filter(|(_, time)| selection.since.is_none_or(|since| *time >= since))
        .map(|(id, _)| id.to_string())
        .collect();
    commits.reverse();
    Ok(commits)
}

/// Commits done / total, skills per second and ETA: a bar on a terminal,
/// a line every ten seconds otherwise.
struct Progress {
    bar: indicatif::ProgressBar,
    plain: bool,
    reporter: Reporter,
    started: Instant,
    last_line: Instant,
    done: usize,
    total: usize,
}

impl Progress {
    fn new(reporter: &Reporter, total: usize) -> Self {
        let plain =
            !std::io::stderr().is_terminal() || reporter.format == crate::logging::LogFormat::Json;
        Self {
            bar: reporter.progress(total as u64, "commits"),
            plain,
            reporter: *reporter,
            started: Instant::now(),
            last_line: Instant::now(),
            done: 0,
            total,
        }
    }

    fn tick(&mut self, summary: &BackfillSummary, skills: u64) {
        self.done += 1;
        self.bar.inc(1);
        let elapsed = self.started.elapsed().as_secs_f64().max(1e-9);
        let rate = skills as f64 / elapsed;
        self.bar.set_message(format!("{rate:.0} skills/s"));
        if self.plain && (self.last_line.elapsed().as_secs() >= 10 || self.done == self.total) {
            let eta = elapsed / self.done as f64 * (self.total - self.done) as f64;
            self.reporter.info("backfill", format!("{}/{} commits (built {}, already {}, failed {}), {rate:.0} skills/s, eta {:.0} s",
                self.done,
                self.total,
                summary.built,
                summary.already,
                summary.failed.len(),
                eta
            ));
            self.last_line = Instant::now();
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
