//! Reader side of the agent-skills search artifacts.
//!
//! This crate owns the artifact contract ([`contract`]): the builder writes
//! through these types and every consumer reads through them, so writer and
//! reader cannot drift. It reads an artifact only when its `_SUCCESS` marker is
//! present and every file matches the digest the marker names ([`artifact`]),
//! and it opens any store the builder can write to ([`store`]).
//!
//! [`sources`] knows where many sources live in one store and what a
//! many-source run reports.
//!
//! [`rank`] holds what both engines share about ranking (stop words), and
//! [`copies`] how both show copies of a skill.
//!
//! [`topgun`] holds TopGun's registry contract (the unified result schema,
//! its normalisation, the adapter object and FindSkills output).
//!
//! It has no Markdown or git dependency: a serving process (the Agent Finder
//! Space) can depend on it alone.

pub mod agent_text;
#[cfg(feature = "serve")]
pub mod answer;
pub mod artifact;
pub mod cli;
pub mod contract;
pub mod copies;
pub mod documents;
pub mod find;
pub mod local;
#[cfg(feature = "serve")]
pub mod mcp;
pub mod meili;
pub mod parts;
pub mod rank;
#[cfg(feature = "serve")]
pub mod serve;
pub mod sources;
pub mod store;
pub mod topgun;

pub use artifact::{read_artifact, read_artifact_retrying, Artifact, ReadError};
pub use contract::{ArtifactLocation, Document, Manifest, SuccessMarker, SCHEMA_VERSION};
pub use store::{Store, StoreError};
