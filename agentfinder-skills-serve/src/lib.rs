//! The serving side of agent-skills search: the commands people and agents
//! use to find skills (`search`, `find`, `eval`, `serve`, `mcp`, `health`;
//! `sync` and `load` are the reader crate's), over Meilisearch or the
//! embedded engine.
//!
//! - [`commands`]: one module per command, and [`run`], which hands a
//!   parsed command to its module.
//! - [`pipeline`]: the one results pipeline, for both engines: candidates,
//!   the shared rules, skills named as the query first, copies folded.
//! - [`present`]: the one presenting step: every author-written field
//!   cleaned once (into [`present::AgentText`] or [`present::AgentJson`],
//!   which only cleaning makes), and the Agent Finder JSON, the MCP answer
//!   and TopGun's objects made from the same values.
//! - [`searcher`]: the search path of the long-running front doors
//!   (Meilisearch, falling back to the embedded engine); [`mcp`]: the MCP
//!   tools; [`eval`]: search quality on a query set.

pub mod commands;
pub mod eval;
pub mod mcp;
pub mod pipeline;
pub mod present;
pub mod searcher;

pub use commands::{run, ServingCommand, ServingDefaults};

/// Longest query, in bytes (`serve` refuses a longer one with 414).
pub const MAX_QUERY_BYTES: usize = 2_048;
