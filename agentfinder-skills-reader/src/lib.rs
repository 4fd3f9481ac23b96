//! Reader side of the agent-skills search artifacts: what a serving
//! process (the Agent Finder Space) links to keep its search current.
//!
//! - [`contract`]: the artifact contract. The builder writes through these
//!   types and every consumer reads through them, so writer and reader
//!   cannot drift.
//! - [`artifact`], [`documents`], [`parts`]: reading an artifact safely,
//!   only when its `_SUCCESS` marker is present and every file matches the
//!   digest the marker names ([`read`]: what those reads share).
//! - [`store`]: opening any store the builder can write to; [`sources`]:
//!   where many sources live in one store, and what a many-source run
//!   reports.
//! - [`meili`]: keeping a Meilisearch index in sync with the store, and
//!   its health; [`cli`]: the `sync`, `load` and `health` commands.
//! - [`results`] and [`rules`]: the neutral types both engines answer
//!   with, and the query rules they share.
//! - [`testing`]: small artifacts written straight to a folder, for tests.
//!
//! It has no Markdown or git dependency, and no HTTP server, MCP, tantivy
//! or model: a Space can depend on it alone.

pub mod artifact;
pub mod cli;
pub mod contract;
pub mod documents;
pub mod meili;
pub mod parts;
pub mod read;
pub mod results;
pub mod rules;
pub mod seen;
pub mod sources;
pub mod store;
pub mod testing;

pub use artifact::{read_artifact, read_artifact_retrying, Artifact};
pub use contract::{ArtifactLocation, Document, Manifest, SuccessMarker, SCHEMA_VERSION};
pub use read::ReadError;
pub use store::{Store, StoreError};
