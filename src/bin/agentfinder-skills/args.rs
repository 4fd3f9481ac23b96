//! The command line of `agentfinder-skills`: every command and flag.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use agentfinder_skills::logging::LogFormat;
use agentfinder_skills_reader::cli::{MeiliArgs, TaskArgs};
use agentfinder_skills_serve::ServingCommand;

#[derive(Parser)]
#[command(
    name = "agentfinder-skills",
    version,
    about = "Turns repositories of agent skills (SKILL.md) into versioned search artifacts."
)]
pub struct Cli {
    /// Log lines as text, or as one JSON object per line (for Jobs and Actions).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Configuration file, for every command (default: ./pipeline.toml if
    /// present, else built-in defaults); a malformed one is an error.
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Build commits/<commit>/ from a source at one ref, then promote latest/.
    Build(BuildArgs),
    /// Build commits/<sha>/ for every commit of a first-parent history that lacks one (resumable).
    Backfill(BackfillArgs),
    /// Re-read an artifact and check digests, schema, ids and counts.
    Verify(VerifyArgs),
    /// Make latest/ equal to an existing commits/<commit>/.
    Promote(PromoteArgs),
    /// Write the complete files of an artifact (hf-skills.ndjson, ai-catalog.json, findings.ndjson, manifest.json, _SUCCESS) into a folder.
    Materialize(MaterializeArgs),
    /// Check skills against the Agent Skills specification before publishing: one skill's folder or a repository's working tree; exit 1 when a rule fails.
    Lint(LintArgs),
    #[command(flatten)]
    Serving(ServingCommand),
}

#[derive(Args)]
pub struct Common {
    /// Artifact store: a folder or an object_store URL (file://, s3://, gs://, az://) [default: ./artifacts].
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Print only warnings, errors and the summary.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print every warning, not only the first 20.
    #[arg(long, short)]
    pub verbose: bool,
}

#[derive(Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub common: Common,
    /// Git repository (local path or URL) or plain folder [default: [source].location,
    /// or every enabled [[sources]] entry].
    #[arg(long, value_name = "URL|PATH")]
    pub source: Option<String>,
    /// Build only these [[sources]] entries (comma-separated ids), enabled or not.
    #[arg(long, value_name = "ID,...", value_delimiter = ',', conflicts_with_all = ["source", "reference", "repo"])]
    pub only: Vec<String>,
    /// Branch, tag or commit to build [default: HEAD / the remote's default branch].
    #[arg(long = "ref", value_name = "REF")]
    pub reference: Option<String>,
    /// owner/name of the repository, for documents, ids and links [default:
    /// [source].repo for [source].location, else derived from the URL or the
    /// clone's origin remote].
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// Write commits/<commit>/ only; leave latest/ alone.
    #[arg(long)]
    pub no_promote: bool,
    /// Promote even onto an older commit or a build that shrank past promote.max_shrink_ratio.
    #[arg(long)]
    pub force: bool,
    /// Build (and promote) a source that holds no skill; without it such a
    /// build is refused (exit 3), as a wrong --source or --ref usually is.
    #[arg(long)]
    pub allow_empty: bool,
    /// Fail instead of warning: bare, on every skip and warning; with names
    /// (comma-separated warning classes), on every skip and those classes.
    #[arg(long, value_name = "CLASSES", num_args = 0..=1, default_missing_value = "all")]
    pub strict: Option<String>,
    /// Fail (exit 8) when the direct load into Meilisearch cannot run or fails.
    #[arg(long)]
    pub require_load: bool,
    /// Skip the embed stage: documents carry no vectors, the manifest says "embedder": null.
    #[arg(long)]
    pub no_embed: bool,
    /// Fail (exit 1) when the model cannot be loaded, instead of building without vectors
    /// (as [embed].required = true does).
    #[arg(long, conflicts_with = "no_embed")]
    pub require_embed: bool,
    /// Embed only shard I of N of the texts into the vector cache, share it
    /// through the store, and write no artifact: N jobs split a first embed,
    /// then a plain build only reads their vectors.
    #[arg(long, value_name = "I/N", conflicts_with = "no_embed", value_parser = agentfinder_skills::shard::Shard::parse)]
    pub embed_shard: Option<agentfinder_skills::shard::Shard>,
    #[command(flatten)]
    pub meili: MeiliArgs,
    #[command(flatten)]
    pub tasks: TaskArgs,
}

#[derive(Args)]
pub struct BackfillArgs {
    #[command(flatten)]
    pub common: Common,
    /// Git repository: a local path or a URL (cloned with full history) [default: [source].location].
    #[arg(long, value_name = "URL|PATH")]
    pub source: Option<String>,
    /// owner/name of the repository (see build --repo).
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// Newest commit of the walk: branch, tag or commit [default: HEAD / the remote's default branch].
    #[arg(long, value_name = "REV")]
    pub to: Option<String>,
    /// Oldest commit of the walk, included.
    #[arg(long, value_name = "REV")]
    pub from: Option<String>,
    /// Only the N newest commits of the walk.
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
    /// Only commits made at or after DATE (YYYY-MM-DD or RFC 3339).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Exactly these commits (comma-separated), instead of a walk.
    #[arg(long, value_name = "SHA,...", value_delimiter = ',')]
    pub commits: Vec<String>,
    /// Build only this job's share: commits whose id hashes to I of N (1-based).
    /// N jobs with 1/N .. N/N cover every commit once.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Promote the newest selected commit to latest/ afterwards (latest/ is untouched otherwise).
    #[arg(long)]
    pub promote_newest: bool,
    /// With --promote-newest: promote even onto an older commit or a shrunken build.
    #[arg(long)]
    pub force: bool,
    /// Skip the embed stage (see build --no-embed).
    #[arg(long)]
    pub no_embed: bool,
    /// Fail when the model cannot be loaded (see build --require-embed).
    #[arg(long, conflicts_with = "no_embed")]
    pub require_embed: bool,
    /// Fail a commit instead of warning (see build --strict); the backfill goes on and exits 4.
    #[arg(long, value_name = "CLASSES", num_args = 0..=1, default_missing_value = "all")]
    pub strict: Option<String>,
}

#[derive(Args)]
pub struct LintArgs {
    /// A skill's folder, a SKILL.md, or a repository.
    pub path: std::path::PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// owner/name of the repository the skills are published from [default:
    /// as a build of the clone names it: its origin remote, else a local name].
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
}

#[derive(Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub common: Common,
    /// Commit id, or `latest`.
    #[arg(long, value_name = "SHA|latest", default_value = "latest")]
    pub commit: String,
    /// In a store of many sources ([[sources]]), only this source's
    /// artifact [default: the store's own latest/, else every source's].
    #[arg(long, value_name = "ID")]
    pub source: Option<String>,
}

#[derive(Args)]
pub struct MaterializeArgs {
    #[command(flatten)]
    pub common: Common,
    /// Commit id, or `latest`.
    #[arg(long, value_name = "SHA|latest", default_value = "latest")]
    pub commit: String,
    /// Folder to write the files into (created when missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(Args)]
pub struct PromoteArgs {
    #[command(flatten)]
    pub common: Common,
    /// Commit whose artifact becomes latest/.
    #[arg(long, value_name = "SHA")]
    pub commit: String,
    /// Promote even onto an older commit or a shrunken build.
    #[arg(long)]
    pub force: bool,
}
