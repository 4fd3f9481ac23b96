//! Search with no server: an embedded engine over the store's artifacts.
//!
//! - [`index`]: the local index of an artifact set (every source's
//!   `latest/`, `_SUCCESS` and digests checked), built once into a cache
//!   folder keyed by the artifacts' digests and opened after.
//! - [`engine`]: an opened local index; [`search`]: its ranking, BM25 over
//!   the searchable fields (weighted as Meilisearch's
//!   `searchableAttributes` order them, one typo allowed in names and
//!   titles in words of 5 letters or more, [`typo`]; phrases of a query's
//!   compounds, [`compounds`]; the share of the query's words a hit holds,
//!   [`coverage`]) and, given the query's vector, the artifact's own
//!   vectors ([`nearest`]), fused by skill ([`rank`]). It answers with the
//!   reader's neutral [`Candidates`], which the serving side's one results
//!   pipeline ranks, folds and presents for both engines.
//! - [`service`]: the engine as a service, with its one owner of open and
//!   refresh per store, query vectors (a model the caller provides) and
//!   searches taking turns at the CPU.

pub mod compounds;
pub mod coverage;
pub mod engine;
pub mod error;
pub mod index;
pub mod nearest;
pub mod rank;
pub mod search;
pub mod service;
pub mod typo;

pub use agentfinder_skills_reader::results::Candidates;
pub use engine::{default_cache_dir, Engine};
pub use error::EngineError;
pub use search::EngineQuery;
pub use service::{Embedded, EmbeddedOptions, Query};

/// `metadata.sourceType` of this engine's results.
pub const SOURCE_TYPE: &str = "embedded";
