//! What the commits of one run share: parse results by blob, and the embed
//! stage, loaded on the first commit that is actually built (a no-op rebuild
//! never touches the model or the vector cache) together with the vectors
//! shared through the store.

use std::sync::Arc;

use agentfinder_skills_reader::store::Store;

use super::BuildError;
use crate::assemble::SharedEmbedder;
use crate::config::Config;
use crate::embed::{share, EmbedSettings, Embedder};
use crate::logging::Reporter;
use crate::parse::read::ParseCache;
use crate::reuse::Base;

/// Parse results and the embedder, shared by the commits of one run.
#[derive(Clone)]
pub struct RunContext {
    /// Parse results by blob.
    pub parses: Arc<ParseCache>,
    /// The entries of the commit this run built last: the next one's base.
    base: Arc<std::sync::Mutex<Option<Base>>>,
    /// The run builds one commit: no later build reuses its entries.
    one_commit: bool,
    embed: Arc<EmbedSlot>,
}

struct EmbedSlot {
    settings: Option<EmbedSettings>,
    required: bool,
    share_cache: bool,
    /// How often a long run shares its new vectors.
    share_every: std::time::Duration,
    loaded: tokio::sync::OnceCell<Option<SharedEmbedder>>,
    /// When the vectors were last shared (or the run started).
    shared_at: std::sync::Mutex<std::time::Instant>,
}

impl RunContext {
    /// A run with `config`'s embed settings; `parses` is the parse cache to use.
    pub fn new(config: &Config, parses: ParseCache) -> Self {
        Self {
            parses: Arc::new(parses),
            base: Arc::default(),
            one_commit: false,
            embed: Arc::new(EmbedSlot {
                settings: config.embed_settings(),
                required: config.embed.required,
                share_cache: config.embed.share_cache,
                share_every: std::time::Duration::from_secs(config.embed.share_every_seconds),
                loaded: tokio::sync::OnceCell::new(),
                shared_at: std::sync::Mutex::new(std::time::Instant::now()),
            }),
        }
    }

    /// A run of one commit: its build sets each entry's catalog and
    /// findings aside on disk while it goes on (no later build of the run
    /// reuses them), and its entries sit beside none that promotion reads
    /// back.
    pub fn one_commit(mut self) -> Self {
        self.one_commit = true;
        self
    }

    /// Whether the run builds one commit ([`RunContext::one_commit`]).
    pub fn is_one_commit(&self) -> bool {
        self.one_commit
    }

    /// Takes the entries of the commit this run built last, if any: the
    /// next build moves the entries it reuses out of them (commits of a
    /// run are built one after another; a build that fails leaves the
    /// next one to start from `latest/`).
    pub fn take_base(&self) -> Option<Base> {
        self.base.lock().ok()?.take()
    }

    /// Keeps `base` for the next commit this run builds.
    pub fn set_base(&self, base: Base) {
        if let Ok(mut slot) = self.base.lock() {
            *slot = Some(base);
        }
    }

    /// Whether this run's documents will carry vectors: embedding is on and
    /// the model is loaded, or its files are on disk (checked without
    /// loading or downloading anything).
    pub fn expects_vectors(&self) -> bool {
        match self.embed.loaded.get() {
            Some(loaded) => loaded.is_some(),
            None => self
                .embed
                .settings
                .as_ref()
                .is_some_and(crate::embed::model_on_disk),
        }
    }

    /// The embedder, loaded on first use, with the store's shared vectors
    /// pulled into its cache; `None` when embedding is off, or when the
    /// model is missing and not required (a warning says so).
    pub async fn embedder(
        &self,
        store: &Store,
        reporter: &Reporter,
    ) -> Result<Option<SharedEmbedder>, BuildError> {
        let slot = &self.embed;
        let loaded = slot
            .loaded
            .get_or_try_init(|| async {
                let Some(settings) = slot.settings.clone() else {
                    return Ok(None);
                };
                let opened = tokio::task::spawn_blocking(move || Embedder::open(&settings))
                    .await
                    .map_err(|e| BuildError::Internal(e.to_string()))?;
                let embedder = match opened {
                    Ok(mut embedder) => {
                        // A signal stops it between slices, its vectors kept.
                        embedder.stop_when(super::interrupt::flag());
                        Arc::new(std::sync::Mutex::new(embedder))
                    }
                    Err(e) if !slot.required => {
                        reporter.warn("embed", format!("{e}; building without vectors"));
                        return Ok(None);
                    }
                    Err(e) => return Err(BuildError::Embed(e)),
                };
                if slot.share_cache {
                    match share::pull(store, &embedder).await {
                        Ok(pulled) => report_pull(reporter, &pulled),
                        Err(e) => reporter.warn("embed", format!("{e}; embedding without it")),
                    }
                }
                Ok(Some(embedder))
            })
            .await?;
        Ok(loaded.clone())
    }

    /// Shares the vectors when `[embed].share_every_seconds` have passed
    /// since they last were (or the run started).
    pub async fn share_vectors_if_due(&self, store: &Store, reporter: &Reporter) {
        let due = self
            .embed
            .shared_at
            .lock()
            .is_ok_and(|at| at.elapsed() >= self.embed.share_every);
        if due {
            self.share_vectors(store, reporter).await;
        }
    }

    /// Shares the vectors this run embedded through the store (when the
    /// embedder was loaded and sharing is on). Never fails the run: a
    /// failure is a warning, and the vectors stay in the local cache.
    pub async fn share_vectors(&self, store: &Store, reporter: &Reporter) {
        let Some(Some(embedder)) = self.embed.loaded.get() else {
            return;
        };
        if !self.embed.share_cache {
            return;
        }
        if let Ok(mut at) = self.embed.shared_at.lock() {
            *at = std::time::Instant::now();
        }
        match share::push(store, embedder).await {
            Ok(pushed) if pushed.vectors > 0 || pushed.merged > 0 => reporter.info(
                "embed",
                format!(
                    "shared {} new vectors through {}/{}",
                    pushed.vectors,
                    store.display,
                    share::PREFIX
                ) + &if pushed.merged > 0 {
                    format!("; merged {} segments into one", pushed.merged)
                } else {
                    String::new()
                },
            ),
            Ok(_) => {}
            Err(e) => reporter.warn("embed", format!("{e}; the vectors stay in the local cache")),
        }
    }
}

fn report_pull(reporter: &Reporter, pulled: &share::Pulled) {
    for skipped in &pulled.skipped {
        reporter.warn("embed", format!("shared vector cache: skipped {skipped}"));
    }
    if pulled.segments > 0 {
        reporter.info(
            "embed",
            format!(
                "pulled {} shared cache segments ({} new vectors)",
                pulled.segments, pulled.vectors
            ),
        );
    }
}
