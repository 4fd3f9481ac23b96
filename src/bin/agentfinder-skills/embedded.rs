//! The embedded engine behind `search`, `find` and `serve` when no
//! Meilisearch is configured: the store's artifacts indexed locally (once
//! per artifact version), the query embedded with the artifacts' model when
//! it is on this machine, keywords only otherwise.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use agentfinder_skills::embed::{EmbedSettings, Embedder};
use agentfinder_skills_engine::{Engine, EngineQuery, Turns};
use agentfinder_skills_reader::local::{LocalQuery, LocalSearch};
use agentfinder_skills_reader::meili::SearchResponse;
use agentfinder_skills_reader::store::{Store, StoreOptions};

/// The embedded engine over the store a command names.
pub struct EmbeddedSearch {
    store: String,
    store_options: StoreOptions,
    cache: PathBuf,
    embed: Option<EmbedSettings>,
    engines: tokio::sync::Mutex<HashMap<String, Engine>>,
    embedder: Mutex<Option<Result<Embedder, String>>>,
    /// Vectors of recent queries: agents repeat themselves, and the model
    /// (one forward pass per query, one at a time) is what a hybrid
    /// search waits for.
    recent: Mutex<HashMap<String, Vec<f32>>>,
    /// Searches (and query embeddings) take turns at the CPU, in arrival order.
    turns: Turns,
}

/// Query vectors kept; the cache starts over when it is full.
const RECENT_QUERIES: usize = 4_096;

impl EmbeddedSearch {
    /// An engine over `store` (the default; a query may name another),
    /// keeping local indexes in `cache`; `embed` says which model embeds
    /// queries (`None`: keywords only).
    pub fn new(
        store: String,
        store_options: StoreOptions,
        cache: PathBuf,
        embed: Option<EmbedSettings>,
    ) -> Self {
        Self {
            store,
            store_options,
            cache,
            embed,
            engines: tokio::sync::Mutex::new(HashMap::new()),
            embedder: Mutex::new(None),
            recent: Mutex::new(HashMap::new()),
            turns: Turns::for_this_machine(),
        }
    }

    /// The engine of `spec`'s current artifacts; `refresh` looks at the
    /// store again (a new `latest/` gets its own local index).
    pub async fn engine(&self, spec: Option<&str>, refresh: bool) -> Result<Engine, String> {
        let spec = spec.unwrap_or(&self.store).to_string();
        let mut engines = self.engines.lock().await;
        if !refresh {
            if let Some(engine) = engines.get(&spec) {
                return Ok(engine.clone());
            }
        }
        let store =
            Store::open_existing_with(&spec, &self.store_options).map_err(|e| e.to_string())?;
        let engine = Engine::open(&store, &self.cache)
            .await
            .map_err(|e| e.to_string())?;
        engines.insert(spec, engine.clone());
        Ok(engine)
    }

    /// The query's vector, when the engine's artifacts have vectors of the
    /// model this machine has; why not otherwise.
    fn query_vector(&self, engine: &Engine, text: &str) -> Result<Vec<f32>, String> {
        let Some(wanted) = engine.embedder() else {
            return Err("the artifact has no vectors".into());
        };
        let Some(settings) = &self.embed else {
            return Err("[embed] is off".into());
        };
        let same = wanted.get("model").and_then(|m| m.as_str()) == Some(settings.model.as_str())
            && wanted.get("revision").and_then(|r| r.as_str()) == Some(settings.revision.as_str());
        if !same {
            return Err(format!(
                "the artifact's vectors are of {wanted}, not of the configured model"
            ));
        }
        if let Some(vector) = self.recent.lock().ok().and_then(|r| r.get(text).cloned()) {
            return Ok(vector);
        }
        let mut slot = self
            .embedder
            .lock()
            .map_err(|_| "embedder lock poisoned".to_string())?;
        let embedder = slot.get_or_insert_with(|| {
            let offline = EmbedSettings {
                download: false,
                ..settings.clone()
            };
            Embedder::open(&offline).map_err(|e| e.to_string())
        });
        let vector = match embedder {
            Ok(embedder) => embedder.embed_query(text).map_err(|e| e.to_string())?,
            Err(why) => return Err(format!("no model to embed the query: {why}")),
        };
        drop(slot);
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
        Box::pin(async move { self.engine(store, true).await.map(|_| ()) })
    }

    fn status<'a>(&'a self, store: Option<&'a str>) -> BoxFuture<'a, serde_json::Value> {
        Box::pin(async move {
            match self.engine(store, false).await {
                Ok(engine) => serde_json::json!({
                    "ready": true,
                    "documents": engine.documents(),
                    "sources": engine.sources(),
                    "vectors": engine.dimensions() > 0,
                }),
                Err(e) => serde_json::json!({"ready": false, "problem": e}),
            }
        })
    }

    fn prepare<'a>(&'a self, store: Option<&'a str>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let started = std::time::Instant::now();
            let Ok(engine) = self.engine(store, false).await else {
                return;
            };
            if engine.dimensions() > 0 && self.embed.is_some() {
                // Loads the model (a query vector is cached, so no work is lost).
                let _ = tokio::task::block_in_place(|| self.query_vector(&engine, ""));
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

    fn search<'a>(
        &'a self,
        query: &'a LocalQuery,
    ) -> BoxFuture<'a, Result<SearchResponse, String>> {
        Box::pin(async move {
            let engine = self.engine(query.store.as_deref(), false).await?;
            let (mut response, why_not) = self
                .turns
                .run(|| {
                    let (vector, why_not) = match query.semantic_ratio {
                        Some(ratio) if ratio > 0.0 && engine.dimensions() > 0 => {
                            match self.query_vector(&engine, &query.text) {
                                Ok(v) => (Some(v), None),
                                Err(why) => (None, Some(why)),
                            }
                        }
                        _ => (None, None),
                    };
                    let asked = EngineQuery {
                        text: &query.text,
                        vector: vector.as_deref(),
                        source: query.source.as_deref(),
                        limit: query.limit,
                        semantic_ratio: query.semantic_ratio.unwrap_or(0.0),
                    };
                    engine.search(&asked).map(|response| (response, why_not))
                })
                .await
                .map_err(|e| e.to_string())?;
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
