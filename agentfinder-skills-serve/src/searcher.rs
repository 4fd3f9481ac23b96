//! The one search path of the long-running front doors (`serve`'s HTTP
//! endpoints and the `mcp` tools): Meilisearch when it is configured and
//! up, else (or when a search of it fails) the embedded engine, with the
//! reason in a notice. A background refresh syncs Meilisearch and
//! refreshes the embedded engine; searches never wait for it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use agentfinder_skills_engine::Embedded;
use agentfinder_skills_reader::contract::Severity;
use agentfinder_skills_reader::meili::{self, MeiliConfig, MeiliError, SyncOptions};
use agentfinder_skills_reader::seen;
use agentfinder_skills_reader::store::{Store, StoreOptions};

use crate::pipeline::fold::FirstSeen;
use crate::pipeline::{self, Asked, Engine, SearchError};
use crate::present::{present, Answer};

/// What is searched, and how.
#[derive(Debug, Clone)]
pub struct SearchSettings {
    /// The store searched and synced.
    pub store: String,
    /// How a remote store is reached.
    pub store_options: StoreOptions,
    /// Meilisearch, when configured.
    pub meili: Option<MeiliConfig>,
    /// Its index (the loaded one, else `hf_skills`).
    pub index: String,
    /// Its loaded-state file.
    pub state: std::path::PathBuf,
    /// Longest a request may take; a search still queued at three
    /// quarters of it is refused as busy.
    pub request_timeout: Duration,
    /// Hybrid weight of semantic ranking.
    pub semantic_ratio: f32,
    /// Requests (searches and MCP tool calls) answered at once; more wait,
    /// within their deadline.
    pub concurrency: usize,
}

/// The search path (see the module's documentation).
pub struct Searcher {
    /// What is searched.
    pub settings: SearchSettings,
    /// The embedded engine, behind Meilisearch (or alone).
    pub embedded: Arc<Embedded>,
    meili_up: AtomicBool,
    /// When the store's pipeline first saw each content, as of the last
    /// refresh (which copy of a skill is shown).
    first_seen: RwLock<Option<Arc<FirstSeen>>>,
    /// Turns for requests: `/search` and MCP tool calls alike.
    pub permits: tokio::sync::Semaphore,
}

impl Searcher {
    /// A searcher over `settings`, with `embedded` behind Meilisearch.
    pub fn new(settings: SearchSettings, embedded: Arc<Embedded>) -> Self {
        Self {
            meili_up: AtomicBool::new(settings.meili.is_some()),
            embedded,
            first_seen: RwLock::new(None),
            permits: tokio::sync::Semaphore::new(settings.concurrency.max(1)),
            settings,
        }
    }

    /// Whether Meilisearch answered its last call.
    pub fn meili_up(&self) -> bool {
        self.meili_up.load(Ordering::SeqCst)
    }

    /// Records whether Meilisearch can answer.
    pub fn set_meili_up(&self, up: bool) {
        self.meili_up.store(up, Ordering::SeqCst);
    }

    /// Which engine answers now: `meilisearch` or `embedded`.
    pub fn engine_name(&self) -> &'static str {
        if self.settings.meili.is_some() && self.meili_up() {
            "meilisearch"
        } else {
            self.embedded.name()
        }
    }

    /// Searches for `q` (at most `limit` skills, of `source` only when
    /// given, each with up to `sections` best-matching sections) for a
    /// request that `arrived` then. The error says why no engine could
    /// answer.
    pub async fn search(
        &self,
        q: &str,
        limit: usize,
        source: Option<&str>,
        max_risk: Option<Severity>,
        sections: usize,
        arrived: Instant,
    ) -> Result<Answer, String> {
        let settings = &self.settings;
        let mut asked = Asked {
            text: q.to_string(),
            limit,
            source: source.map(str::to_string),
            semantic_ratio: Some(settings.semantic_ratio),
            sections,
            first_seen: self.first_seen.read().ok().and_then(|s| s.clone()),
            max_risk,
            ..Asked::default()
        };
        let mut notice = None;
        if let (Some(config), true) = (&settings.meili, self.meili_up()) {
            let engine = Engine::Meili {
                config,
                index: &settings.index,
            };
            // Meilisearch gets its share of the request's time, retries
            // included; the rest is the embedded engine's, should it fail.
            let budget = meili_budget(settings.request_timeout);
            match tokio::time::timeout(budget, pipeline::run(engine, &asked)).await {
                Ok(Ok(ranked)) => return Ok(present(ranked, None)),
                Ok(Err(e)) => {
                    // Down only when it could not be reached; a query it
                    // refused says nothing of the next one.
                    let reachable =
                        !matches!(e, SearchError::Meili(MeiliError::Unavailable { .. }));
                    self.set_meili_up(reachable);
                    notice = Some(format!(
                        "Meilisearch failed ({}); answered by the embedded engine",
                        config.scrub(&e.to_string())
                    ));
                }
                Err(_) => {
                    self.set_meili_up(false);
                    notice = Some(format!(
                        "Meilisearch gave no answer within {:.1} s; answered by the embedded engine",
                        budget.as_secs_f64()
                    ));
                }
            }
        } else if settings.meili.is_some() {
            notice = Some("Meilisearch is down; answered by the embedded engine".to_string());
        }
        // The store this service was given, not the binary's default; a
        // search that cannot start within three quarters of the request's
        // time is refused (busy) rather than left to time out: the rest is
        // for the search itself.
        asked.store = Some(settings.store.clone());
        asked.start_by = arrived.checked_add(settings.request_timeout * 3 / 4);
        let ranked = pipeline::run(Engine::Embedded(&self.embedded), &asked)
            .await
            .map_err(|e| e.to_string())?;
        let notice = notice.or_else(|| ranked.fallback.clone());
        Ok(present(ranked, notice))
    }

    /// Has the embedded engine look at the store again, and reads the
    /// store's record of when each content was first seen, logging why
    /// when it cannot (it keeps answering from what it has).
    pub async fn refresh_engine(&self, log_prefix: &str) {
        if let Err(e) = self.embedded.refresh(Some(&self.settings.store)).await {
            eprintln!("{log_prefix}: {} engine: {e}", self.embedded.name());
        }
        let settings = &self.settings;
        let read = match Store::open_existing_with(&settings.store, &settings.store_options) {
            Ok(store) => seen::first_seen(&store).await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match read {
            Ok(record) => {
                if let Ok(mut kept) = self.first_seen.write() {
                    *kept = Some(Arc::new(record));
                }
            }
            Err(e) => eprintln!("{log_prefix}: the record of when contents were first seen: {e}"),
        }
    }

    /// Syncs Meilisearch with the store and refreshes the embedded engine,
    /// logging what happened (searches go on meanwhile).
    pub async fn refresh(&self, log_prefix: &str) {
        let settings = &self.settings;
        self.refresh_engine(log_prefix).await;
        let Some(config) = &settings.meili else {
            return;
        };
        let up = meili::ping(&probe(config)).await.is_ok();
        self.set_meili_up(up);
        if !up {
            eprintln!(
                "{log_prefix}: Meilisearch at {} is down; answering from the {} engine",
                config.display_url(),
                self.embedded.name()
            );
            return;
        }
        let store = match Store::open_existing_with(&settings.store, &settings.store_options) {
            Ok(store) => store,
            Err(e) => {
                eprintln!("{log_prefix}: store: {e}");
                return;
            }
        };
        let options = SyncOptions::latest(&settings.state);
        match meili::sync(&store, config, &options).await {
            Ok(report) => eprintln!(
                "{log_prefix}: {}",
                agentfinder_skills_reader::cli::describe_sync(&report, config)
            ),
            Err(e) => eprintln!("{log_prefix}: sync: {}", config.scrub(&e.to_string())),
        }
    }

    /// Readies the embedded engine (its local index, its model), then says
    /// on stderr when its queries are searched by keywords only.
    pub async fn prepare(&self, log_prefix: &str) {
        self.embedded.prepare(Some(&self.settings.store)).await;
        self.say_if_keywords_only(log_prefix);
    }

    /// Says on stderr, once the engine is open, when its queries are
    /// searched by keywords only (no model, or one that would not load).
    fn say_if_keywords_only(&self, log_prefix: &str) {
        if let Some(why) = self.embedded.keywords_only(Some(&self.settings.store)) {
            eprintln!("{log_prefix}: searching by keywords only: {why}");
        }
    }
}

/// Keeps `searcher` current without syncing Meilisearch: readies the
/// embedded engine at once (its local index, its model) and looks at the
/// store again every `refresh` seconds (0: only at start), and checks
/// whether Meilisearch answers.
pub async fn watch(searcher: Arc<Searcher>, refresh: u64, log_prefix: &'static str) {
    let settings = &searcher.settings;
    searcher.prepare(log_prefix).await;
    searcher.refresh_engine(log_prefix).await;
    loop {
        if let Some(config) = &settings.meili {
            searcher.set_meili_up(meili::ping(&probe(config)).await.is_ok());
        }
        if refresh == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_secs(refresh)).await;
        searcher.refresh_engine(log_prefix).await;
    }
}

/// The share of a request's time Meilisearch is given (half, at least
/// 100 ms): a Meilisearch that hangs leaves the embedded engine time to
/// answer within the request's deadline.
pub fn meili_budget(request_timeout: Duration) -> Duration {
    (request_timeout / 2).max(Duration::from_millis(100))
}

/// `config` for a health probe: one attempt, two seconds (a health
/// answer must come fast; the search path has the retries).
pub fn probe(config: &MeiliConfig) -> MeiliConfig {
    let mut probe = config.clone();
    probe.retry = meili::RetryPolicy { delays: Vec::new() };
    probe.call_timeout = probe.call_timeout.min(Duration::from_secs(2));
    probe
}
