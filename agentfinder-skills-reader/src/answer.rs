//! The one search path of the long-running front doors (`serve`'s HTTP
//! endpoints and the `mcp` tools): Meilisearch when it is configured and
//! up, else (or when a search of it fails) the in-process engine the binary
//! provides, with the reason in a notice. A background refresh syncs
//! Meilisearch and the in-process engine; searches never wait for it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::local::{LocalEngine, LocalQuery};
use crate::meili::{self, MeiliConfig, SearchOptions, SearchResponse, SyncOptions};
use crate::store::{Store, StoreOptions};

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
}

/// A search's answer, and who gave it.
#[derive(Debug, Clone)]
pub struct Found {
    /// `meilisearch` or the in-process engine's name.
    pub engine: &'static str,
    /// The hits.
    pub response: SearchResponse,
    /// Why the answer is not the usual one (Meilisearch down, keywords
    /// only), when it is not.
    pub notice: Option<String>,
}

/// The search path (see the module's documentation).
pub struct Searcher {
    /// What is searched.
    pub settings: SearchSettings,
    /// The binary's in-process engine, if it has one.
    pub engine: Option<LocalEngine>,
    meili_up: AtomicBool,
}

impl Searcher {
    /// A searcher over `settings`, with `engine` behind Meilisearch.
    pub fn new(settings: SearchSettings, engine: Option<LocalEngine>) -> Self {
        Self {
            meili_up: AtomicBool::new(settings.meili.is_some()),
            settings,
            engine,
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

    /// Which engine answers now: `meilisearch`, the in-process engine's
    /// name, or `none`.
    pub fn engine_name(&self) -> &'static str {
        match &self.engine {
            _ if self.settings.meili.is_some() && self.meili_up() => "meilisearch",
            Some(engine) => engine.0.name(),
            None => "none",
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
        sections: usize,
        arrived: Instant,
    ) -> Result<Found, String> {
        let settings = &self.settings;
        let ratio = settings.semantic_ratio;
        let mut notice = None;
        if let (Some(config), true) = (&settings.meili, self.meili_up()) {
            let options = SearchOptions {
                index: settings.index.clone(),
                limit,
                filter: crate::cli::source_filter(None, source),
                all_sections: false,
                hybrid: Some(("default".to_string(), ratio)),
            };
            match meili::search_detailed(config, q, &options).await {
                Ok(response) => {
                    return Ok(Found {
                        engine: "meilisearch",
                        notice: response.fallback.clone(),
                        response,
                    })
                }
                Err(e) => {
                    self.set_meili_up(false);
                    notice = Some(format!(
                        "Meilisearch failed ({}); answered by the embedded engine",
                        config.scrub(&e.to_string())
                    ));
                }
            }
        } else if settings.meili.is_some() {
            notice = Some("Meilisearch is down; answered by the embedded engine".to_string());
        }
        let Some(engine) = &self.engine else {
            return Err(match &settings.meili {
                Some(_) => "Meilisearch is down and this binary has no embedded engine",
                None => "no Meilisearch is configured and this binary has no embedded engine",
            }
            .to_string());
        };
        let query = LocalQuery {
            text: q.to_string(),
            limit,
            source: source.map(str::to_string),
            semantic_ratio: Some(ratio),
            sections,
            // The store this service was given, not the binary's default.
            store: Some(settings.store.clone()),
            // A search that cannot start within three quarters of the
            // request's time is refused (busy) rather than left to time
            // out: the rest is for the search itself.
            start_by: arrived.checked_add(settings.request_timeout * 3 / 4),
        };
        let response = engine.0.search(&query).await?;
        Ok(Found {
            engine: engine.0.name(),
            notice: notice.or_else(|| response.fallback.clone()),
            response,
        })
    }

    /// Has the in-process engine look at the store again, logging why
    /// when it cannot (it keeps answering from what it has).
    pub async fn refresh_engine(&self, log_prefix: &str) {
        if let Some(engine) = &self.engine {
            if let Err(e) = engine.0.refresh(Some(&self.settings.store)).await {
                eprintln!("{log_prefix}: {} engine: {e}", engine.0.name());
            }
        }
    }

    /// Syncs Meilisearch with the store and refreshes the in-process
    /// engine, logging what happened (searches go on meanwhile).
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
                "{log_prefix}: Meilisearch at {} is down; {}",
                config.display_url(),
                match &self.engine {
                    Some(engine) => format!("answering from the {} engine", engine.0.name()),
                    None => "no other engine in this binary: answering 503".to_string(),
                }
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
                crate::cli::describe_sync(&report, config)
            ),
            Err(e) => eprintln!("{log_prefix}: sync: {}", config.scrub(&e.to_string())),
        }
    }
}

/// Keeps `searcher` current without syncing Meilisearch: readies the
/// in-process engine at once (its local index, its model) and looks at the
/// store again every `refresh` seconds (0: only at start), and checks
/// whether Meilisearch answers.
pub async fn watch(searcher: std::sync::Arc<Searcher>, refresh: u64) {
    let settings = &searcher.settings;
    if let Some(engine) = &searcher.engine {
        engine.0.prepare(Some(&settings.store)).await;
    }
    loop {
        if let Some(config) = &settings.meili {
            searcher.set_meili_up(meili::ping(&probe(config)).await.is_ok());
        }
        if refresh == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_secs(refresh)).await;
        searcher.refresh_engine("mcp").await;
    }
}

/// `config` for a health probe: one attempt, two seconds (a health
/// answer must come fast; the search path has the retries).
pub fn probe(config: &MeiliConfig) -> MeiliConfig {
    let mut probe = config.clone();
    probe.retry = meili::RetryPolicy { delays: Vec::new() };
    probe.call_timeout = probe.call_timeout.min(Duration::from_secs(2));
    probe
}
