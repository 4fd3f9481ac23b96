//! Query vectors: a query embedded by the model the artifact's vectors were
//! made with, on the model's own threads, together with the other queries
//! waiting for one (one forward pass for up to [`QUERY_BATCH`] of them),
//! so that many clients asking at once cost far less than one pass each.
//!
//! This crate runs no model of its own: the caller hands it a
//! [`ModelLoader`] (the main binary's loads all-MiniLM-L6-v2 with candle).
//! The model is loaded once and shared ([`QueryModel`] is `Sync`: a pass
//! takes `&self`): each batch worker runs its pass beside the others',
//! with no lock held across a pass, so batches use every core.
//! A load that failed is tried again after [`RETRY_LOAD_AFTER`], so a
//! model put in place while a service runs is picked up without a restart.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::batches::{BatchError, Batches};
use crate::engine::Engine;

/// A sentence-embedding model, loaded.
pub trait QueryModel: Send + Sync {
    /// One vector per text, in order; the error says why not.
    fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String>;
}

/// Which model embeds queries, and how to load it.
#[derive(Clone)]
pub struct ModelLoader {
    /// Its name, as the artifact's manifest names the vectors' model.
    pub model: String,
    /// Its revision, likewise.
    pub revision: String,
    /// Loads it from this machine (never from the network: a query cannot
    /// wait for a download); the error says why it cannot.
    pub load: Arc<dyn Fn() -> Result<Box<dyn QueryModel>, String> + Send + Sync>,
}

impl std::fmt::Debug for ModelLoader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ModelLoader({}@{})", self.model, self.revision)
    }
}

/// Query vectors kept; the cache starts over when it is full.
const RECENT_QUERIES: usize = 4_096;

/// Most queries embedded in one forward pass: past 16 a query costs
/// hardly less (3.5 ms at 16, 3.4 at 32 on 2 cores) while the batch's
/// callers all wait for the longest pass.
pub const QUERY_BATCH: usize = 16;

/// How long a failed load of the model is remembered before the next
/// query tries again.
pub const RETRY_LOAD_AFTER: Duration = Duration::from_secs(30);

/// Why a query has no vector.
#[derive(Debug, Clone, PartialEq)]
pub enum NoVector {
    /// It could not get one in time: the search is refused.
    Late(String),
    /// It cannot have one (no model, no vectors): keywords only.
    Unavailable(String),
}

/// The model's state between loads.
enum Loaded {
    Absent,
    Ready(Arc<dyn QueryModel>),
    Failed { at: Instant, why: String },
}

/// The model (loaded on the first query that needs it), its batches, and
/// the vectors of recent queries.
pub struct QueryVectors {
    loader: Option<(ModelLoader, Batches<String, Vec<f32>>)>,
    /// Agents repeat themselves, and the model's forward pass is what a
    /// hybrid search waits for.
    recent: Mutex<HashMap<String, Vec<f32>>>,
    /// Why the last load failed, for health.
    failure: Arc<Mutex<Option<String>>>,
}

impl QueryVectors {
    /// Vectors by `loader`'s model (`None`: keywords only).
    pub fn new(loader: Option<ModelLoader>) -> Self {
        Self::retrying_after(loader, RETRY_LOAD_AFTER)
    }

    /// The same, a failed load tried again after `retry_after`.
    pub fn retrying_after(loader: Option<ModelLoader>, retry_after: Duration) -> Self {
        Self::with_workers(loader, retry_after, super::workers::one_per_core())
    }

    /// The same, with `workers` batch workers (one pass each at a time).
    pub fn with_workers(
        loader: Option<ModelLoader>,
        retry_after: Duration,
        workers: usize,
    ) -> Self {
        let failure = Arc::new(Mutex::new(None));
        let loader = loader.map(|loader| {
            let load = loader.load.clone();
            let failed = failure.clone();
            let model = Mutex::new(Loaded::Absent);
            // One pass of the model keeps one core busy: one batch worker
            // per core.
            let batches = Batches::new(
                "query-vectors",
                workers,
                QUERY_BATCH,
                Box::new(move |texts: Vec<String>| {
                    // The lock is held to load the model (one load for all
                    // workers), never across a pass.
                    let ready = {
                        let mut model = model
                            .lock()
                            .map_err(|_| "the model's lock is poisoned".to_string())?;
                        let retry = match &*model {
                            Loaded::Ready(_) => false,
                            Loaded::Failed { at, .. } => at.elapsed() >= retry_after,
                            Loaded::Absent => true,
                        };
                        if retry {
                            *model = match load() {
                                Ok(ready) => Loaded::Ready(Arc::from(ready)),
                                Err(why) => Loaded::Failed {
                                    at: Instant::now(),
                                    why,
                                },
                            };
                            if let Ok(mut failure) = failed.lock() {
                                *failure = match &*model {
                                    Loaded::Failed { why, .. } => Some(why.clone()),
                                    _ => None,
                                };
                            }
                        }
                        match &*model {
                            Loaded::Ready(ready) => ready.clone(),
                            Loaded::Failed { why, .. } => {
                                return Err(format!("no model to embed the query: {why}"))
                            }
                            Loaded::Absent => return Err("no model to embed the query".to_string()),
                        }
                    };
                    ready.embed_batch(&texts)
                }),
            );
            (loader, batches)
        });
        Self {
            loader,
            recent: Mutex::new(HashMap::new()),
            failure,
        }
    }

    /// Whether a model is configured at all.
    pub fn configured(&self) -> bool {
        self.loader.is_some()
    }

    /// Why the model could not be loaded the last time it was tried.
    pub fn failure(&self) -> Option<String> {
        self.failure.lock().ok().and_then(|f| f.clone())
    }

    /// The query's vector, when `engine`'s artifacts have vectors of this
    /// model; why not otherwise. `start_by`: the batch must have started
    /// by then.
    pub async fn vector(
        &self,
        engine: &Engine,
        text: &str,
        start_by: Option<Instant>,
    ) -> Result<Vec<f32>, NoVector> {
        let Some(wanted) = engine.embedder() else {
            return Err(NoVector::Unavailable("the artifact has no vectors".into()));
        };
        let Some((loader, _)) = &self.loader else {
            return Err(NoVector::Unavailable("[embed] is off".into()));
        };
        let same = wanted.get("model").and_then(|m| m.as_str()) == Some(loader.model.as_str())
            && wanted.get("revision").and_then(|r| r.as_str()) == Some(loader.revision.as_str());
        if !same {
            return Err(NoVector::Unavailable(format!(
                "the artifact's vectors are of {wanted}, not of the configured model"
            )));
        }
        self.embed(text, start_by).await
    }

    /// `text`'s vector by the configured model, whatever the artifact
    /// holds (to compare texts with each other, not with its vectors).
    pub async fn embed(&self, text: &str, start_by: Option<Instant>) -> Result<Vec<f32>, NoVector> {
        let Some((_, batches)) = &self.loader else {
            return Err(NoVector::Unavailable("[embed] is off".into()));
        };
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Constant;

    impl QueryModel for Constant {
        fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
            Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
        }
    }

    /// A model that is missing for the first `missing` loads.
    fn flaky(missing: usize) -> (ModelLoader, Arc<AtomicUsize>) {
        let loads = Arc::new(AtomicUsize::new(0));
        let counted = loads.clone();
        let loader = ModelLoader {
            model: "m".into(),
            revision: "r".into(),
            load: Arc::new(move || {
                if counted.fetch_add(1, Ordering::SeqCst) < missing {
                    Err("not on disk yet".into())
                } else {
                    Ok(Box::new(Constant) as Box<dyn QueryModel>)
                }
            }),
        };
        (loader, loads)
    }

    /// An engine over one document with a vector of model `m`@`r`.
    fn engine_with_vectors() -> (tempfile::TempDir, Engine) {
        let dir = tempfile::tempdir().unwrap();
        let mut sink = crate::index::sink::Sink::create(dir.path()).unwrap();
        let mut doc = serde_json::json!({"skill_key": "s:r:p/SKILL.md", "skill_name": "p",
            "content": "pdf", "_vectors": {"default": {"embeddings": [1.0, 0.0]}}});
        sink.add(&mut doc, "s").unwrap();
        sink.finish(
            "k",
            Some(serde_json::json!({"model": "m", "revision": "r"})),
        )
        .unwrap();
        let engine = Engine::open_dir(dir.path()).unwrap();
        (dir, engine)
    }

    /// A model whose pass waits (up to 10 s) until `wanted` passes run at
    /// once, and counts the passes that saw them.
    struct Meeting {
        running: Arc<(Mutex<usize>, std::sync::Condvar)>,
        met: Arc<AtomicUsize>,
        wanted: usize,
    }

    impl QueryModel for Meeting {
        fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
            let (count, changed) = &*self.running;
            let mut count = count.lock().unwrap();
            *count += 1;
            changed.notify_all();
            let (count, _) = changed
                .wait_timeout_while(count, Duration::from_secs(10), |c| *c < self.wanted)
                .unwrap();
            if *count >= self.wanted {
                self.met.fetch_add(1, Ordering::SeqCst);
            }
            Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_workers_run_their_passes_side_by_side() {
        let (_dir, engine) = engine_with_vectors();
        let running = Arc::new((Mutex::new(0usize), std::sync::Condvar::new()));
        let met = Arc::new(AtomicUsize::new(0));
        let loader = {
            let (running, met) = (running.clone(), met.clone());
            ModelLoader {
                model: "m".into(),
                revision: "r".into(),
                load: Arc::new(move || {
                    let model = Meeting {
                        running: running.clone(),
                        met: met.clone(),
                        wanted: 2,
                    };
                    Ok(Box::new(model) as Box<dyn QueryModel>)
                }),
            }
        };
        let vectors = Arc::new(QueryVectors::with_workers(Some(loader), Duration::ZERO, 2));
        let first = {
            let vectors = vectors.clone();
            let engine = engine.clone();
            tokio::spawn(async move { vectors.vector(&engine, "first", None).await })
        };
        // The first pass is running: the second query is a batch of its own.
        while *running.0.lock().unwrap() == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let second = vectors.vector(&engine, "second", None).await;
        assert_eq!(first.await.unwrap(), Ok(vec![1.0, 0.0]));
        assert_eq!(second, Ok(vec![1.0, 0.0]));
        // A lock held across a pass would have kept the second waiting
        // for the first, which waited for it.
        assert_eq!(met.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_model_that_failed_to_load_is_tried_again() {
        let (_dir, engine) = engine_with_vectors();
        let (loader, loads) = flaky(1);
        let vectors = QueryVectors::retrying_after(Some(loader), Duration::ZERO);
        let first = vectors.vector(&engine, "pdf", None).await;
        assert!(
            matches!(first, Err(NoVector::Unavailable(ref why)) if why.contains("not on disk yet")),
            "{first:?}"
        );
        assert!(vectors.failure().is_some());
        // Put in place since: the next query loads it.
        assert_eq!(
            vectors.vector(&engine, "pdf", None).await,
            Ok(vec![1.0, 0.0])
        );
        assert_eq!(vectors.failure(), None);
        assert_eq!(loads.load(Ordering::SeqCst), 2);
        // Within the pause, a failure is not tried again at every query.
        let (loader, loads) = flaky(5);
        let patient = QueryVectors::retrying_after(Some(loader), Duration::from_secs(3600));
        for text in ["a", "b", "c"] {
            assert!(patient.vector(&engine, text, None).await.is_err());
        }
        assert_eq!(loads.load(Ordering::SeqCst), 1);
    }
}
