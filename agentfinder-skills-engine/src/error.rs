//! Why the engine could not open or search.

/// The engine could not be opened or could not search.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The store's artifacts could not be read.
    #[error("artifact: {0}")]
    Artifact(String),
    /// The local index could not be written or read.
    #[error("local index: {0}")]
    Io(String),
    /// tantivy failed.
    #[error("local index: {0}")]
    Index(String),
}

impl EngineError {
    pub(crate) fn index(e: impl std::fmt::Display) -> Self {
        Self::Index(e.to_string())
    }
}
