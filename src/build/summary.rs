//! What a build reports when it ends: the one summary line, or its JSON.

use agentfinder_skills_reader::contract::{ArtifactLocation, Manifest, SCHEMA_VERSION};

use crate::assemble::Assembled;
use crate::logging::Reporter;
use crate::parse::read::SpentSeconds;
use crate::promote::Promotion;

/// Whether this run built the commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildStatus {
    /// Written by this run.
    Built,
    /// Written by this run beside an existing artifact of the same commit
    /// that was built differently (see [`crate::write::variant`]).
    Rebuilt,
    /// A complete artifact existed already; nothing was parsed.
    AlreadyBuilt,
    /// `--embed-shard`: this shard's vectors were embedded into the cache
    /// and shared; no artifact was written.
    EmbeddedShard,
}

impl BuildStatus {
    /// The name in the summary.
    pub fn name(self) -> &'static str {
        match self {
            Self::Built => "built",
            Self::Rebuilt => "rebuilt",
            Self::AlreadyBuilt => "already-built",
            Self::EmbeddedShard => "embedded-shard",
        }
    }
}

/// The result of a build, for the summary line.
#[derive(Debug, Clone)]
pub struct BuildSummary {
    /// The source commit (or folder version) built.
    pub commit: String,
    /// The artifact's id: its folder under `commits/`.
    pub artifact: String,
    /// Built or already there.
    pub status: BuildStatus,
    /// Why an existing artifact of the commit was not reused.
    pub rebuild_reason: Option<String>,
    /// Skill documents.
    pub skills: u64,
    /// All documents.
    pub documents: u64,
    /// Skipped files.
    pub skipped: u64,
    /// Warnings.
    pub warnings: u64,
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
    /// Skill files whose entries an earlier build made (not parsed).
    pub reused: u64,
    /// Skill files parsed.
    pub parsed: u64,
    /// Whether the build started from the entries of its first parent's
    /// build and the files the commit changed, not from a listing of the
    /// whole tree (see `build::plan`).
    pub patched: bool,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Where the wall time went.
    pub stages: StageTimes,
}

/// Where a build's wall time went, in seconds: the summary's `stages`
/// (JSON), so a slow build says which stage was slow.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct StageTimes {
    /// Opening the source: cloning or fetching a URL, resolving the commit.
    pub source: f64,
    /// Listing the tree (or the parent's changes) and dating the files.
    pub plan: f64,
    /// Parsing, checking, embedding and staging the documents (and loading
    /// the model and the last build's entries).
    pub parse: f64,
    /// Writing `commits/<sha>/` and its parts, and first sightings.
    pub write: f64,
    /// Promoting `latest/`.
    pub promote: f64,
    /// Sharing the vectors embedded through the store.
    pub share: f64,
    /// Inside `parse`, thread-seconds summed over the cores (so they can
    /// pass its wall time): reading files, parsing SKILL.md, the risk scan.
    pub threads: SpentSeconds,
    /// Inside `parse`, seconds the assembler spent on parsed batches
    /// (documents, buckets, embedding), beside the parsing threads.
    pub assemble: f64,
}

impl StageTimes {
    fn fields(&self) -> serde_json::Value {
        let ms = |seconds: f64| (seconds * 1000.0).round() / 1000.0;
        serde_json::json!({
            "source": ms(self.source),
            "plan": ms(self.plan),
            "parse": ms(self.parse),
            "write": ms(self.write),
            "promote": ms(self.promote),
            "share": ms(self.share),
        })
    }

    /// What the parse stage's threads and its assembler spent (JSON).
    fn inside_parse(&self) -> serde_json::Value {
        let ms = |seconds: f64| (seconds * 1000.0).round() / 1000.0;
        serde_json::json!({
            "read": ms(self.threads.read),
            "parse": ms(self.threads.parse),
            "scan": ms(self.threads.scan),
            "assemble": ms(self.assemble),
        })
    }

    /// The stage times for the summary line: wall seconds of each stage,
    /// then thread-seconds inside `parse`.
    fn line(&self) -> String {
        format!(
            "stages=source:{:.1},plan:{:.1},parse:{:.1},write:{:.1},promote:{:.1},share:{:.1} parse_threads=read:{:.1},parse:{:.1},scan:{:.1},assemble:{:.1}",
            self.source,
            self.plan,
            self.parse,
            self.write,
            self.promote,
            self.share,
            self.threads.read,
            self.threads.parse,
            self.threads.scan,
            self.assemble,
        )
    }
}

impl BuildSummary {
    /// The summary as JSON fields (for `--log-format json`).
    pub fn fields(&self) -> serde_json::Value {
        serde_json::json!({
            "event": "build",
            "commit": self.commit,
            "artifact": self.artifact,
            "schema_version": SCHEMA_VERSION,
            "status": self.status.name(),
            "rebuild_reason": self.rebuild_reason,
            "skills": self.skills,
            "documents": self.documents,
            "skipped": self.skipped,
            "warnings": self.warnings,
            "latest": self.promotion_name(),
            "load": self.load.as_deref().unwrap_or("not-run"),
            "vectors_embedded": self.embedded,
            "vectors_cached": self.cached,
            "embed_docs_per_second": self.embed_rate(),
            "files_reused": self.reused,
            "files_parsed": self.parsed,
            "store": self.store,
            "seconds": (self.seconds * 1000.0).round() / 1000.0,
            "stages": self.stages.fields(),
            "parse_threads": self.stages.inside_parse(),
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

    fn promotion_name(&self) -> &'static str {
        match &self.promotion {
            None => "not-requested",
            Some(Promotion::AlreadyLatest) => "already-latest",
            Some(Promotion::Promoted { .. }) => "promoted",
        }
    }

    /// The one line every run ends with (`artifact=` only when the artifact
    /// is not simply the commit's).
    pub fn line(&self) -> String {
        let artifact = if self.artifact == self.commit {
            String::new()
        } else {
            format!(" artifact={}", self.artifact)
        };
        format!(
            "summary: commit={}{artifact} schema={SCHEMA_VERSION} status={} skills={} documents={} skipped={} warnings={} parsed={} reused={} vectors={}+{}cached({}/s) latest={} load={} store={} {} seconds={:.2}",
            self.commit,
            self.status.name(),
            self.skills,
            self.documents,
            self.skipped,
            self.warnings,
            self.parsed,
            self.reused,
            self.embedded,
            self.cached,
            self.embed_rate(),
            self.promotion_name(),
            self.load.as_deref().unwrap_or("not-run"),
            self.store,
            self.stages.line(),
            self.seconds
        )
    }
}

/// Prints the skips and the first warnings (every one is in findings.ndjson).
pub(super) fn report_findings(reporter: &Reporter, assembled: &Assembled) {
    for risky in &assembled.risky {
        reporter.warn(
            "risk",
            format!("{risky} (see signals.risk in its documents)"),
        );
    }
    let findings = &assembled.findings;
    for skip in &findings.skipped {
        reporter.skipped(&skip.path, &skip.class, &skip.reason);
    }
    reporter.findings(
        findings.warnings.iter().map(|w| {
            (
                w.path.as_str(),
                w.line,
                w.class.as_str(),
                w.message.as_str(),
            )
        }),
        findings.warning_total(),
    );
    let unlisted = findings.skipped_total() - findings.skipped.len() as u64;
    if unlisted > 0 {
        reporter.warn(
            "validate",
            format!("... and {unlisted} more skipped files (all are in findings.ndjson)"),
        );
    }
}

/// The summary of an artifact that was there already.
pub(super) fn already_built(location: &ArtifactLocation, manifest: &Manifest) -> BuildSummary {
    BuildSummary {
        commit: manifest.source_commit.clone(),
        artifact: location.commit_id().unwrap_or("latest").to_string(),
        status: BuildStatus::AlreadyBuilt,
        rebuild_reason: None,
        skills: manifest.skill_count,
        documents: manifest.document_count,
        skipped: count(&manifest.skipped_counts, manifest.skipped.len()),
        warnings: count(&manifest.warning_counts, manifest.warnings.len()),
        promotion: None,
        store: String::new(),
        load: None,
        embedded: 0,
        cached: 0,
        embed_seconds: 0.0,
        reused: 0,
        parsed: 0,
        patched: false,
        seconds: 0.0,
        stages: StageTimes::default(),
    }
}

/// The summary of a build that assembled `assembled`: written as
/// `artifact` with `status`, or, for an `--embed-shard` run, not written.
pub(super) fn assembled_summary(
    commit: String,
    (artifact, status, rebuild_reason): (String, BuildStatus, Option<String>),
    assembled: &Assembled,
    patched: bool,
) -> BuildSummary {
    BuildSummary {
        commit,
        artifact,
        status,
        rebuild_reason,
        skills: assembled.manifest.skill_count,
        documents: assembled.manifest.document_count,
        skipped: assembled.findings.skipped_total(),
        warnings: assembled.findings.warning_total(),
        promotion: None,
        store: String::new(),
        load: None,
        embedded: assembled.embedded,
        cached: assembled.cached,
        embed_seconds: assembled.embed_seconds,
        reused: assembled.reused,
        parsed: assembled.parsed,
        patched,
        seconds: 0.0,
        stages: StageTimes::default(),
    }
}

/// Findings of a manifest: its counts (schema 3), else the length of its list.
fn count(counts: &std::collections::BTreeMap<String, u64>, listed: usize) -> u64 {
    if counts.is_empty() {
        listed as u64
    } else {
        counts.values().sum()
    }
}
