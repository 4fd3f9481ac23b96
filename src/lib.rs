//! agentfinder-skills: turns repositories of agent skills into versioned
//! search artifacts.
//!
//! The map of the modules (this is the one place it is kept; the README
//! points here). The stages, one module each, in the order data flows:
//!
//! | stage | module | what it holds | pure? |
//! |---|---|---|---|
//! | source | [`source`] | git via gix (a local clone, or cloned into a cache), plain folders; a version's files, listed and read; history and parent diffs (the walk's bound in [`source`]'s `bound`, a function of the commit); [`source::identity`]: which repository it is | I/O |
//! | walk | [`walk`] | which entries are skills; [`walk::supporting_files`]: what each skill's folder ships | pure |
//! | parse | [`parse`] | the bytes of one SKILL.md into frontmatter fields (YAML, lenient recovery) and chunks; [`parse::read`]: reads every skill file of a snapshot on all cores (and, for the risk rules and the copy keys, every file each skill ships), parse results shared by blob; [`parse::content_key`]: what copies of a skill share | pure, but for [`parse::read`], its I/O edge |
//! | chunk | [`chunk`] | a body cut into sections and parts | pure |
//! | validate | [`validate`] | the Agent Skills rules, the contract per document, `--strict`; [`validate::diagnostics`]: warning and skip classes; [`validate::findings`]: streamed to `findings.ndjson` and counted; [`validate::finding_lines`]: its lines; [`validate::risk`]: static risk rules over a skill's files (code parsed with tree-sitter, capabilities combined across files), evidence not scores | pure |
//! | embed | [`embed`] | model, vector cache, its sharing through the store, Hub download | I/O |
//! | assemble | [`assemble`] | each file's entry (keyed, [`assemble::keys`]; its documents, [`assemble::document`], appended to a pack; its [`assemble::catalog`] object; its findings), buckets and the manifest; [`assemble::marketplace`]; [`assemble::digest`]: the output version and build digest | pure over a `Write` pack |
//! | write | [`write`](mod@write) | `commits/<id>/`; [`write::variant`]: which `commits/<id>/` a build owns | I/O |
//! | promote | [`promote`] | `latest/`; [`promote::materialize`]: complete files composed from parts; [`promote::verify`]: an artifact re-read and checked | I/O |
//!
//! The last step, the optional load of `latest/` into Meilisearch, is the
//! binary's, through the reader crate.
//!
//! Beside the stages, not between them: the commands [`build`] (chains the
//! stages for one commit: its plan in `build::plan`, its CPU-bound middle
//! in `build::stage`, [`build::run_context`] for what the commits of a run
//! share, many sources in [`build::sources`], its summary in
//! `build::summary`, and after each artifact the store's record of where
//! skills were first met in `build::sightings`), [`backfill`] (runs it over a history) and [`lint`]
//! (the walk, parse and validate stages and the risk rules over a working
//! tree); and what
//! they use: [`config`] (`pipeline.toml`), [`reuse`] (the parse cache
//! across runs: an earlier artifact's entries, by key), [`lock`] (builder
//! leases with heartbeats), [`store`] (files staged on disk, and the puts
//! every stage that writes uses), [`shard`] (`I/N` splits of work),
//! [`logging`] (log lines, progress, the summary line), [`failpoint`]
//! (crash and pause points for tests), [`time`].
//!
//! The artifact contract, safe reading and the serving side (Meilisearch
//! sync, search, health) live in the `agentfinder-skills-reader` crate,
//! which knows no git or Markdown.

// The stages, in the order data flows (comments between them keep rustfmt
// from sorting them):
// a version of the source, its files listed and read;
pub mod source;
// the skill files among them;
pub mod walk;
// each one's frontmatter and body,
pub mod parse;
// the body in chunks,
pub mod chunk;
// checked, with findings;
pub mod validate;
// a vector per document;
pub mod embed;
// each file's entry, the buckets and the manifest;
pub mod assemble;
// `commits/<id>/` in the store;
pub mod write;
// `latest/`.
pub mod promote;

// Beside the stages: the commands, then what they and the stages share.
pub mod backfill;
pub mod build;
pub mod lint;

pub mod config;
pub mod failpoint;
pub mod lock;
pub mod logging;
pub mod reuse;
pub mod shard;
pub mod store;
pub mod time;
