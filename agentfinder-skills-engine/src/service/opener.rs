//! The one owner of a store's engine: it opens the engine on first use and
//! refreshes it when asked, one attempt at a time, in a task of its own.
//! Requests never open anything: they wait for the owner, each up to its
//! own deadline, and a request that stops waiting leaves the attempt
//! running for the next ones, so a slow first build is done once (and, by
//! the build's own lock, once across processes: [`crate::index::build`]).
//!
//! An attempt that failed is not tried again for [`RETRY_AFTER`]: a store
//! that cannot be read answers every request at once with why, instead of
//! being read once per request. An attempt that panicked has failed like
//! any other (its panic is the reason), so the next request tries again:
//! the owner never waits for an attempt that will not end.
//!
//! What blocks (building the index, opening its files, removing old
//! versions from the cache) runs on a blocking thread, never on the
//! runtime's threads, which go on answering queries meanwhile.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::FutureExt;
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
    #[cfg(test)]
    hooks: tests::Hooks,
}

impl Opener {
    /// The owner of `source`'s engine; nothing is opened yet.
    pub fn new(source: Source) -> Arc<Self> {
        Arc::new(Self {
            source,
            state: Mutex::new(State::default()),
            ended: tokio::sync::watch::channel(0).0,
            builds: AtomicUsize::new(0),
            #[cfg(test)]
            hooks: tests::Hooks::default(),
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
            // A panic is this attempt's failure: left to unwind the task,
            // it would leave the attempt under way for ever.
            let opened = std::panic::AssertUnwindSafe(owner.open(previous.as_ref()))
                .catch_unwind()
                .await
                .unwrap_or_else(|panic| {
                    Err(format!(
                        "opening the local index failed unexpectedly: {}",
                        super::turns::panic_text(&panic)
                    ))
                });
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
        #[cfg(test)]
        self.hooks.before_open();
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
        let keep = source.keep_versions;
        let runtime = tokio::runtime::Handle::current();
        #[cfg(test)]
        let blocking_hook = self.hooks.blocking.clone();
        // Indexing is CPU work (and waits for another process's build of
        // the same key); opening the index maps and reads its files, and
        // tidying removes whole folders: a blocking thread does all three,
        // so the runtime's threads go on answering queries.
        let (fresh, engine) = tokio::task::spawn_blocking(move || {
            let built = runtime
                .block_on(index::build(&set, &cache))
                .map_err(|e| e.to_string())?;
            #[cfg(test)]
            blocking_hook();
            let engine = Engine::open_dir(&built.dir).map_err(|e| e.to_string())?;
            let tidied = index::cache::tidy(&cache, engine.dir(), keep);
            for path in tidied.abandoned_builds.iter().chain(&tidied.old_versions) {
                eprintln!("embedded engine: removed {}", path.display());
            }
            Ok::<_, String>((built.fresh, engine))
        })
        .await
        .map_err(|e| format!("the local index build stopped: {e}"))??;
        if fresh {
            self.builds.fetch_add(1, Ordering::SeqCst);
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

#[cfg(test)]
mod tests {
    use super::*;
    use agentfinder_skills_reader::testing::{sample_docs, write_artifact};
    use std::sync::atomic::AtomicBool;

    /// What a test makes an attempt do.
    pub(super) struct Hooks {
        /// Panic once, at the start of the next attempt.
        pub panic_once: AtomicBool,
        /// Run on the blocking thread between the build and the open.
        pub blocking: Arc<dyn Fn() + Send + Sync>,
    }

    impl Default for Hooks {
        fn default() -> Self {
            Self {
                panic_once: AtomicBool::new(false),
                blocking: Arc::new(|| {}),
            }
        }
    }

    impl Hooks {
        pub(super) fn before_open(&self) {
            if self.panic_once.swap(false, Ordering::SeqCst) {
                panic!("a test's panic in the opener");
            }
        }
    }

    fn opener_of(store: &std::path::Path, cache: &std::path::Path) -> Arc<Opener> {
        write_artifact(store, "latest", "c1", "hf_skills", &sample_docs("c1")).unwrap();
        Opener::new(Source {
            spec: store.to_str().unwrap().to_string(),
            options: Default::default(),
            cache: cache.to_path_buf(),
            keep_versions: 2,
        })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_attempt_that_panics_fails_and_the_next_request_opens() {
        let (store, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let opener = opener_of(store.path(), cache.path());
        opener.hooks.panic_once.store(true, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(10);
        let first = opener.engine(Some(deadline)).await;
        let why = first.err().unwrap_or_default();
        assert!(why.contains("a test's panic in the opener"), "{why}");
        assert!(
            opener.status()["building_seconds"].is_null(),
            "no attempt is left under way"
        );
        // After the pause a failure answers for, the next request opens.
        tokio::time::sleep(RETRY_AFTER).await;
        let engine = opener
            .engine(Some(Instant::now() + Duration::from_secs(10)))
            .await;
        assert!(engine.is_ok(), "{:?}", engine.err());
        assert_eq!(opener.builds(), 1);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn opening_blocks_no_runtime_thread() {
        // One runtime thread: if the slow part of an attempt ran on it,
        // the ticker below could not tick until it ended.
        let (store, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let mut opener = opener_of(store.path(), cache.path());
        let slow = Duration::from_millis(600);
        Arc::get_mut(&mut opener).unwrap().hooks.blocking =
            Arc::new(move || std::thread::sleep(slow));
        let ticks = Arc::new(AtomicUsize::new(0));
        let ticker = {
            let ticks = ticks.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    ticks.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
        let started = Instant::now();
        let engine = opener.engine(None).await;
        assert!(engine.is_ok(), "{:?}", engine.err());
        assert!(started.elapsed() >= slow);
        ticker.abort();
        let ticked = ticks.load(Ordering::SeqCst);
        assert!(
            ticked >= 20,
            "the runtime thread ticked {ticked} times in {:?}",
            started.elapsed()
        );
    }
}
