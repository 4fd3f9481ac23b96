//! The one owner of a store's engine: it opens the engine on first use and
//! refreshes it when asked, one attempt at a time, in a task of its own.
//! Requests never open anything: they wait for the owner, each up to its
//! own deadline, and a request that stops waiting leaves the attempt
//! running for the next ones, so a slow first build is done once (and, by
//! the build's own lock, once across processes: [`crate::index::build`]).
//!
//! An attempt that failed is not tried again for [`RETRY_AFTER`]: a store
//! that cannot be read answers every request at once with why, instead of
//! being read once per request.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use agentfinder_skills_reader::store::{Store, StoreOptions};

use crate::engine::Engine;
use crate::index;

/// How long a failed attempt's reason answers requests before the next
/// request tries again.
pub const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Where the engine of one store comes from.
#[derive(Debug, Clone)]
pub struct Source {
    /// The store (a folder or an object_store URL).
    pub spec: String,
    /// How a remote store is reached.
    pub options: StoreOptions,
    /// Where local indexes are kept.
    pub cache: PathBuf,
    /// Local index versions kept in the cache.
    pub keep_versions: usize,
}

/// What the owner holds now.
#[derive(Default)]
struct State {
    /// The engine in use.
    engine: Option<Engine>,
    /// Why the last attempt did not give a new engine (the one in use is
    /// kept), when it did not.
    problem: Option<String>,
    /// When the attempt under way started.
    attempting: Option<Instant>,
    /// When the last attempt failed, and why.
    failed: Option<(Instant, String)>,
}

/// The owner of one store's engine.
pub struct Opener {
    source: Source,
    state: Mutex<State>,
    /// Bumped each time an attempt ends.
    ended: tokio::sync::watch::Sender<u64>,
    /// Local indexes this owner built (not found ready).
    builds: AtomicUsize,
}

impl Opener {
    /// The owner of `source`'s engine; nothing is opened yet.
    pub fn new(source: Source) -> Arc<Self> {
        Arc::new(Self {
            source,
            state: Mutex::new(State::default()),
            ended: tokio::sync::watch::channel(0).0,
            builds: AtomicUsize::new(0),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic cannot leave the state half written (every update is a
        // few assignments), so a poisoned lock is still good.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The engine, opened by the owner if it is not yet; waits for an
    /// attempt under way (or starts one) until `deadline` (`None`: for as
    /// long as it takes). The error says why there is no engine.
    pub async fn engine(self: &Arc<Self>, deadline: Option<Instant>) -> Result<Engine, String> {
        loop {
            let mut ended = self.ended.subscribe();
            let since = {
                let mut state = self.state();
                if let Some(engine) = &state.engine {
                    return Ok(engine.clone());
                }
                match (state.attempting, &state.failed) {
                    (Some(since), _) => since,
                    (None, Some((at, why))) if at.elapsed() < RETRY_AFTER => {
                        return Err(why.clone())
                    }
                    (None, _) => self.start(&mut state),
                }
            };
            let waited = match deadline {
                None => Ok(ended.changed().await),
                Some(deadline) => tokio::time::timeout_at(deadline.into(), ended.changed()).await,
            };
            if waited.is_err() {
                return Err(format!(
                    "the local index is being built ({:.1} s so far); try again shortly",
                    since.elapsed().as_secs_f64()
                ));
            }
            // The attempt ended: its engine, or its failure (fresh, so
            // within RETRY_AFTER), is what the next turn answers.
        }
    }

    /// Looks at the store again and swaps in the engine of its artifacts
    /// when they changed (the engine in use answers meanwhile, and is
    /// kept when the new one cannot be opened). Waits for the attempt.
    pub async fn refresh(self: &Arc<Self>) -> Result<(), String> {
        loop {
            let mut ended = self.ended.subscribe();
            let started_here = {
                let mut state = self.state();
                match state.attempting {
                    // One under way may have read the store before it
                    // changed: wait for it, then look again.
                    Some(_) => false,
                    None => {
                        self.start(&mut state);
                        true
                    }
                }
            };
            let _ = ended.changed().await;
            if started_here {
                let state = self.state();
                return match (&state.failed, &state.problem) {
                    (Some((_, why)), _) | (None, Some(why)) => Err(why.clone()),
                    (None, None) => Ok(()),
                };
            }
        }
    }

    /// Starts an attempt (the state says none is under way); returns when
    /// it started.
    fn start(self: &Arc<Self>, state: &mut State) -> Instant {
        let now = Instant::now();
        state.attempting = Some(now);
        let owner = self.clone();
        tokio::spawn(async move {
            let previous = owner.state().engine.clone();
            let opened = owner.open(previous.as_ref()).await;
            {
                let mut state = owner.state();
                match opened {
                    Ok(engine) => {
                        state.engine = Some(engine);
                        state.problem = None;
                        state.failed = None;
                    }
                    Err(why) => {
                        if state.engine.is_some() {
                            state.problem =
                                Some(format!("still serving the previous version: {why}"));
                        }
                        state.failed = Some((Instant::now(), why));
                    }
                }
                state.attempting = None;
            }
            owner.ended.send_modify(|n| *n += 1);
        });
        now
    }

    /// The engine of the store's current artifacts: `previous` when they
    /// are the ones it holds, else their local index opened (built first
    /// if need be). Refuses a set that leaves out a source `previous`
    /// holds.
    async fn open(&self, previous: Option<&Engine>) -> Result<Engine, String> {
        let source = &self.source;
        let store =
            Store::open_existing_with(&source.spec, &source.options).map_err(|e| e.to_string())?;
        let set = Engine::read_set(&store).await.map_err(|e| e.to_string())?;
        if let Some(previous) = previous {
            if index::key_of(&set) == previous.key() {
                return Ok(previous.clone());
            }
            if let Some((source, why)) = set
                .left_out
                .iter()
                .find(|(source, _)| previous.sources().contains(source))
            {
                return Err(format!("source {source} could not be read: {why}"));
            }
        }
        let cache = source.cache.clone();
        let runtime = tokio::runtime::Handle::current();
        // Indexing is CPU work (and waits for another process's build of
        // the same key): a blocking thread drives it, so the runtime's
        // threads go on answering queries.
        let built =
            tokio::task::spawn_blocking(move || runtime.block_on(index::build(&set, &cache)))
                .await
                .map_err(|e| format!("the local index build stopped: {e}"))?
                .map_err(|e| e.to_string())?;
        if built.fresh {
            self.builds.fetch_add(1, Ordering::SeqCst);
        }
        let engine = Engine::open_dir(&built.dir).map_err(|e| e.to_string())?;
        let tidied = index::cache::tidy(&source.cache, engine.dir(), source.keep_versions);
        for path in tidied.abandoned_builds.iter().chain(&tidied.old_versions) {
            eprintln!("embedded engine: removed {}", path.display());
        }
        Ok(engine)
    }

    /// What health says of it, from what it holds (no I/O).
    pub fn status(&self) -> serde_json::Value {
        let state = self.state();
        let building = state.attempting.map(|since| since.elapsed().as_secs_f64());
        match &state.engine {
            Some(engine) => serde_json::json!({
                "ready": true,
                "documents": engine.documents(),
                "sources": engine.sources(),
                "vectors": engine.dimensions() > 0,
                "problem": state.problem,
                "refreshing_seconds": building,
            }),
            None => serde_json::json!({
                "ready": false,
                "problem": match (&building, &state.failed) {
                    (Some(_), _) => "the local index is being built".to_string(),
                    (None, Some((_, why))) => why.clone(),
                    (None, None) => "the local index is not open yet".to_string(),
                },
                "building_seconds": building,
            }),
        }
    }

    /// Local indexes this owner built (rather than found ready).
    pub fn builds(&self) -> usize {
        self.builds.load(Ordering::SeqCst)
    }

    /// The engine in use, if any (no waiting).
    pub fn current(&self) -> Option<Engine> {
        self.state().engine.clone()
    }
}
