//! The embedded engine behind `search`, `find` and `serve` when no
//! Meilisearch is configured: the store's artifacts indexed locally (once
//! per artifact version), the query embedded with the artifacts' model when
//! it is on this machine, keywords only otherwise.
//!
//! Searches never wait for a refresh: the engine in use sits in a map that
//! is locked only to clone or replace it, and a refresh reads the store and
//! builds a new local index (on a blocking thread) before it swaps the new
//! engine in. A refresh that cannot read a source the engine in use holds
//! keeps the engine in use, and says why in `status`.
//!
//! A query's vector is computed before its search takes its turn, on the
//! model's own thread, together with the other queries waiting for one (one
//! forward pass for up to 16 of them), so that many clients asking at once
//! cost the machine far less than one pass each.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Instant;

use futures::future::BoxFuture;

use agentfinder_skills::embed::{EmbedSettings, QueryEmbedder};
use agentfinder_skills_engine::batches::BatchError;
use agentfinder_skills_engine::{cache, Batches, Engine, EngineQuery, Turns};
use agentfinder_skills_reader::local::{LocalQuery, LocalSearch};
use agentfinder_skills_reader::meili::SearchResponse;
use agentfinder_skills_reader::rank::without_ruled_out;
use agentfinder_skills_reader::store::{Store, StoreOptions};

/// The embedded engine over the store a command names.
pub struct EmbeddedSearch {
    store: String,
    store_options: StoreOptions,
    cache: PathBuf,
    /// Local index versions kept in `cache` (see [`cache::tidy`]).
    keep_versions: usize,
    /// The engine in use per store, and what the last refresh could not do.
    engines: RwLock<HashMap<String, Current>>,
    /// One open or build at a time (searches do not take it once an
    /// engine is in use).
    opening: tokio::sync::Mutex<()>,
    queries: Arc<QueryVectors>,
    /// Searches (and query embeddings) take turns at the CPU, in arrival order.
    turns: Turns,
}

/// The engine a store is searched with.
#[derive(Clone)]
struct Current {
    engine: Engine,
    /// Why the last refresh kept this engine, if it did.
    problem: Option<String>,
}

/// Query vectors: the vectors of recent queries, and the model, loaded
/// once, embedding the queries that arrive together in one forward pass.
struct QueryVectors {
    /// The model's settings, and the queries waiting for it, embedded in
    /// batches (see [`agentfinder_skills_engine::batches`]); `None` when
    /// `[embed]` is off.
    model: Option<(EmbedSettings, Batches<String, Vec<f32>>)>,
    /// Agents repeat themselves, and the model's forward pass is what a
    /// hybrid search waits for.
    recent: Mutex<HashMap<String, Vec<f32>>>,
}

/// Query vectors kept; the cache starts over when it is full.
const RECENT_QUERIES: usize = 4_096;

/// Most queries embedded in one forward pass: past 16 a query costs
/// hardly less (3.5 ms at 16, 3.4 at 32 on 2 cores) while the batch's
/// callers all wait for the longest pass.
const QUERY_BATCH: usize = 16;

/// Why a query has no vector.
enum NoVector {
    /// It could not get one in time: the search is refused.
    Late(String),
    /// It cannot have one (no model, no vectors): keywords only.
    Unavailable(String),
}

impl EmbeddedSearch {
    /// An engine over `store` (the default; a query may name another),
    /// keeping local indexes in `cache` (the `keep_versions` used last);
    /// `embed` says which model embeds queries (`None`: keywords only).
    pub fn new(
        store: String,
        store_options: StoreOptions,
        cache: PathBuf,
        keep_versions: usize,
        embed: Option<EmbedSettings>,
    ) -> Self {
        Self {
            store,
            store_options,
            cache,
            keep_versions,
            engines: RwLock::new(HashMap::new()),
            opening: tokio::sync::Mutex::new(()),
            queries: Arc::new(QueryVectors::new(embed)),
            turns: Turns::for_this_machine(),
        }
    }

    fn current(&self, spec: &str) -> Option<Current> {
        self.engines.read().ok()?.get(spec).cloned()
    }

    /// The engine of `spec`'s artifacts: the one in use, else opened now.
    pub async fn engine(&self, spec: Option<&str>) -> Result<Engine, String> {
        let spec = spec.unwrap_or(&self.store);
        if let Some(current) = self.current(spec) {
            return Ok(current.engine);
        }
        self.reopen(spec, false).await
    }

    /// Reads `spec`'s artifacts and swaps in their engine (building its
    /// local index when `latest/` moved). With `force` unset an engine
    /// already in use is returned as it is. The engine in use goes on
    /// answering meanwhile, and is kept when the store cannot be read or
    /// a source it holds is left out.
    async fn reopen(&self, spec: &str, force: bool) -> Result<Engine, String> {
        let _one_at_a_time = self.opening.lock().await;
        let previous = self.current(spec);
        if let (false, Some(previous)) = (force, &previous) {
            return Ok(previous.engine.clone());
        }
        let opened = self.open(spec, previous.as_ref().map(|p| &p.engine)).await;
        let (current, result) = match (opened, previous) {
            (Ok(engine), _) => (
                Current {
                    engine: engine.clone(),
                    problem: None,
                },
                Ok(engine),
            ),
            (Err(why), Some(previous)) => (
                Current {
                    engine: previous.engine.clone(),
                    problem: Some(format!("still serving the previous version: {why}")),
                },
                Err(why),
            ),
            (Err(why), None) => return Err(why),
        };
        if let Ok(mut engines) = self.engines.write() {
            engines.insert(spec.to_string(), current);
        }
        result
    }

    /// Opens `spec`'s current artifacts; refuses a set that leaves out a
    /// source `previous` holds.
    async fn open(&self, spec: &str, previous: Option<&Engine>) -> Result<Engine, String> {
        let store =
            Store::open_existing_with(spec, &self.store_options).map_err(|e| e.to_string())?;
        let set = Engine::read_set(&store).await.map_err(|e| e.to_string())?;
        if let Some(previous) = previous {
            if let Some((source, why)) = set
                .left_out
                .iter()
                .find(|(source, _)| previous.sources().contains(source))
            {
                return Err(format!("source {source} could not be read: {why}"));
            }
        }
        let cache = self.cache.clone();
        let runtime = tokio::runtime::Handle::current();
        // Indexing is CPU work: a blocking thread drives it, so the
        // runtime's threads go on answering queries.
        let engine =
            tokio::task::spawn_blocking(move || runtime.block_on(Engine::open_set(&set, &cache)))
                .await
                .map_err(|e| format!("the local index build stopped: {e}"))?
                .map_err(|e| e.to_string())?;
        let tidied = cache::tidy(&self.cache, engine.dir(), self.keep_versions);
        for path in tidied.abandoned_builds.iter().chain(&tidied.old_versions) {
            eprintln!("embedded engine: removed {}", path.display());
        }
        Ok(engine)
    }
}

impl QueryVectors {
    /// Vectors by the model `embed` names (`None`: keywords only), loaded
    /// from this machine only, on the first query that needs it.
    fn new(embed: Option<EmbedSettings>) -> Self {
        let model = embed.map(|settings| {
            let offline = EmbedSettings {
                download: false,
                ..settings.clone()
            };
            let model: OnceLock<Result<QueryEmbedder, String>> = OnceLock::new();
            // One pass of the model keeps one core busy
            // (`embed::one_thread_per_pass`): one batch worker per core.
            let batches = Batches::new(
                "query-vectors",
                agentfinder_skills_engine::workers::one_per_core(),
                QUERY_BATCH,
                Box::new(move |texts: Vec<String>| {
                    let model = model
                        .get_or_init(|| QueryEmbedder::open(&offline).map_err(|e| e.to_string()))
                        .as_ref()
                        .map_err(|why| format!("no model to embed the query: {why}"))?;
                    model.embed_batch(&texts).map_err(|e| e.to_string())
                }),
            );
            (settings, batches)
        });
        Self {
            model,
            recent: Mutex::new(HashMap::new()),
        }
    }

    /// The query's vector, when the engine's artifacts have vectors of the
    /// model this machine has; why not otherwise.
    async fn vector(
        &self,
        engine: &Engine,
        text: &str,
        start_by: Option<Instant>,
    ) -> Result<Vec<f32>, NoVector> {
        let Some(wanted) = engine.embedder() else {
            return Err(NoVector::Unavailable("the artifact has no vectors".into()));
        };
        let Some((settings, batches)) = &self.model else {
            return Err(NoVector::Unavailable("[embed] is off".into()));
        };
        let same = wanted.get("model").and_then(|m| m.as_str()) == Some(settings.model.as_str())
            && wanted.get("revision").and_then(|r| r.as_str()) == Some(settings.revision.as_str());
        if !same {
            return Err(NoVector::Unavailable(format!(
                "the artifact's vectors are of {wanted}, not of the configured model"
            )));
        }
        if let Some(vector) = self.recent.lock().ok().and_then(|r| r.get(text).cloned()) {
            return Ok(vector);
        }
        let vector = match batches.run(start_by, text.to_string()).await {
            Ok(vector) => vector,
            Err(late @ BatchError::Late { .. }) => return Err(NoVector::Late(late.to_string())),
            Err(other) => return Err(NoVector::Unavailable(other.to_string())),
        };
        if let Ok(mut recent) = self.recent.lock() {
            if recent.len() >= RECENT_QUERIES {
                recent.clear();
            }
            recent.insert(text.to_string(), vector.clone());
        }
        Ok(vector)
    }
}

impl LocalSearch for EmbeddedSearch {
    fn refresh<'a>(&'a self, store: Option<&'a str>) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let spec = store.unwrap_or(&self.store);
            self.reopen(spec, true).await.map(|_| ())
        })
    }

    fn status<'a>(&'a self, store: Option<&'a str>) -> BoxFuture<'a, serde_json::Value> {
        Box::pin(async move {
            let spec = store.unwrap_or(&self.store);
            match self.current(spec) {
                Some(Current { engine, problem }) => serde_json::json!({
                    "ready": true,
                    "documents": engine.documents(),
                    "sources": engine.sources(),
                    "vectors": engine.dimensions() > 0,
                    "problem": problem,
                    "waiting": self.turns.waiting(),
                }),
                // Never opened: say so rather than build it here (a health
                // probe must answer at once).
                None => serde_json::json!({
                    "ready": false,
                    "problem": "the local index is not open yet",
                }),
            }
        })
    }

    fn prepare<'a>(&'a self, store: Option<&'a str>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let started = Instant::now();
            let Ok(engine) = self.engine(store).await else {
                return;
            };
            if engine.dimensions() > 0 && self.queries.model.is_some() {
                // Loads the model (a query vector is cached, so no work is lost).
                let _ = self.queries.vector(&engine, "", None).await;
            }
            let seconds = started.elapsed().as_secs_f64();
            if seconds >= 1.0 {
                eprintln!(
                    "embedded engine: ready in {seconds:.1} s ({} documents; the local index is built once per artifact version, in {})",
                    engine.documents(),
                    engine.dir().display()
                );
            }
        })
    }

    fn skill_documents<'a>(
        &'a self,
        store: Option<&'a str>,
        skill_key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<serde_json::Value>, String>> {
        Box::pin(async move {
            let engine = self.engine(store).await?;
            let key = skill_key.to_string();
            self.turns
                .run(None, move || engine.skill_documents(&key))
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn search<'a>(
        &'a self,
        query: &'a LocalQuery,
    ) -> BoxFuture<'a, Result<SearchResponse, String>> {
        Box::pin(async move {
            let engine = self.engine(query.store.as_deref()).await?;
            // The vector first (in a batch with other queries), then the
            // search in its turn; the vector of what the query wants, as
            // the keywords are.
            let (vector, why_not) = match query.semantic_ratio {
                Some(ratio) if ratio > 0.0 && engine.dimensions() > 0 => {
                    let wanted = without_ruled_out(&query.text);
                    match self.queries.vector(&engine, &wanted, query.start_by).await {
                        Ok(v) => (Some(v), None),
                        Err(NoVector::Late(why)) => return Err(why),
                        Err(NoVector::Unavailable(why)) => (None, Some(why)),
                    }
                }
                _ => (None, None),
            };
            let asked = query.clone();
            let mut response = self
                .turns
                .run(query.start_by, move || {
                    let question = EngineQuery {
                        text: &asked.text,
                        vector: vector.as_deref(),
                        source: asked.source.as_deref(),
                        limit: asked.limit,
                        semantic_ratio: asked.semantic_ratio.unwrap_or(0.0),
                        sections: asked.sections,
                    };
                    engine.search(&question).map_err(|e| e.to_string())
                })
                .await
                .map_err(|e| e.to_string())??;
            if let Some(why) = why_not {
                response.fallback = Some(format!("keywords only: {why}"));
            }
            Ok(response)
        })
    }
}

/// Shares an engine with the serving commands.
pub fn shared(engine: EmbeddedSearch) -> agentfinder_skills_reader::local::LocalEngine {
    agentfinder_skills_reader::local::LocalEngine(Arc::new(engine))
}
