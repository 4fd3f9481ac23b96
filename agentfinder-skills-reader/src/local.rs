//! Search without a server, as the serving commands see it: something that
//! answers a query from the store's artifacts in-process. The builder's
//! binary provides one (the embedded engine, with the query embedded by
//! the artifact's model); this crate has no engine of its own, so the Space
//! that links it pulls in neither tantivy nor a model.

use futures::future::BoxFuture;

use crate::meili::SearchResponse;

/// What an in-process search is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalQuery {
    /// The words.
    pub text: String,
    /// Most results (skills).
    pub limit: usize,
    /// Only this source.
    pub source: Option<String>,
    /// Weight of vector ranking, 0 to 1; `None` for keywords only.
    pub semantic_ratio: Option<f32>,
    /// Best-matching sections to name per skill found (0: none; see
    /// [`SearchResponse::sections`]).
    pub sections: usize,
    /// The store (`--store`), when not the default one.
    pub store: Option<String>,
    /// When the search must have started (a search still queued then is
    /// refused, saying it was busy); `None`: whenever its turn comes.
    pub start_by: Option<std::time::Instant>,
}

/// An in-process search engine.
pub trait LocalSearch: Send + Sync {
    /// Answers `query`; the error is a message for the operator.
    fn search<'a>(&'a self, query: &'a LocalQuery)
        -> BoxFuture<'a, Result<SearchResponse, String>>;

    /// Makes the engine ready to answer from `store` (the default one when
    /// `None`): opens its local index, building it the first time, and
    /// loads what embeds queries. Callers with a deadline call it first, so
    /// the deadline counts the search alone and a one-off build is not cut
    /// short (and so never finished). A failure is left for `search` to
    /// report.
    fn prepare<'a>(&'a self, store: Option<&'a str>) -> BoxFuture<'a, ()> {
        let _ = store;
        Box::pin(async {})
    }

    /// Looks at the store again, so a new `latest/` is searched (a
    /// long-running service calls it on its timer).
    fn refresh<'a>(&'a self, store: Option<&'a str>) -> BoxFuture<'a, Result<(), String>> {
        let _ = store;
        Box::pin(async { Ok(()) })
    }

    /// What `/health` says of it: at least `ready` (bool), and `problem`
    /// when it is not.
    fn status<'a>(&'a self, store: Option<&'a str>) -> BoxFuture<'a, serde_json::Value> {
        let _ = store;
        Box::pin(async { serde_json::json!({"ready": true}) })
    }

    /// Every document of the skill `skill_key` (its skill document and
    /// its sections, in the artifact's order) in `store`'s artifacts (the
    /// default store when `None`); empty when no skill has that key.
    fn skill_documents<'a>(
        &'a self,
        store: Option<&'a str>,
        skill_key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<serde_json::Value>, String>> {
        let _ = (store, skill_key);
        Box::pin(async { Err("this engine cannot list a skill's documents".to_string()) })
    }

    /// Its name in logs and health (`embedded`).
    fn name(&self) -> &'static str {
        "embedded"
    }
}

/// A shared [`LocalSearch`], for [`crate::cli::ServingDefaults`].
#[derive(Clone)]
pub struct LocalEngine(pub std::sync::Arc<dyn LocalSearch>);

impl std::fmt::Debug for LocalEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LocalEngine({})", self.0.name())
    }
}
