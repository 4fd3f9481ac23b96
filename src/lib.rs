//! agentfinder-skills: turns repositories of agent skills into versioned
//! search artifacts.
//!
//! The map of the modules, in pipeline order (this is the one place it is
//! kept; the README points here):
//!
//! | stage | modules | pure? |
//! |---|---|---|
//! | clone | [`source`] (git via gix, plain folders; [`source::identity`]: which repository it is) | I/O |
//! | walk | [`walk`] (which entries are skills), [`supporting_files`] (what each skill's folder ships) | pure |
//! | reuse | [`reuse`] (the parse cache across runs: an earlier artifact's entries, by key) | I/O at the edge |
//! | parse, chunk | [`read_skills`] (reads files on all cores) -> [`parse`] (frontmatter, YAML, lenient recovery) -> [`chunk`] | [`parse`], [`chunk`] pure |
//! | validate | [`validate`] (name and description rules, `--strict`), [`diagnostics`] (warning and skip classes), [`findings`] (streamed to `findings.ndjson`, counted) | pure |
//! | document | [`document`] (documents and ids), [`catalog`], [`marketplace`] | pure |
//! | embed | [`embed`] (model, vector cache, its sharing through the store, Hub download) | I/O |
//! | assemble | [`assemble`] (each file's entry: documents into a pack, catalog object, findings; buckets and manifest) | pure over a `Write` pack |
//! | write | [`variant`] (which `commits/<id>/` a build owns), [`write`](mod@write), [`staging`] (files staged and hashed on disk) | I/O |
//! | promote | [`promote`] (`latest/`, complete files composed from parts; [`materialize`]), [`lock`] (builder leases with heartbeats) | I/O |
//! | verify | [`verify`] | I/O |
//!
//! The commands: [`build`] chains the stages for one commit (its CPU-bound
//! middle in `build::stage`, its summary in `build::summary`); [`backfill`]
//! runs it over a history, sharing a [`run_context::RunContext`] (parse
//! results and the embedder) between commits. Around them: [`config`]
//! (`pipeline.toml`), [`logging`] (log lines, progress, the summary line),
//! [`failpoint`] (crash and pause points for tests), [`time`].
//!
//! The artifact contract, safe reading and the serving side (Meilisearch
//! sync, search, health) live in the `agentfinder-skills-reader` crate,
//! which knows no git or Markdown.

pub mod assemble;
pub mod backfill;
pub mod build;
pub mod chunk;
pub mod config;
pub mod embed;
pub mod failpoint;
pub mod lint;
pub mod lock;
pub mod logging;
pub mod parse;
pub mod promote;
pub mod reuse;
pub mod shard;
pub mod source;
pub mod store;
pub mod time;
pub mod validate;
pub mod walk;
pub mod write;
