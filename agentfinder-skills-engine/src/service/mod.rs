//! The embedded engine as a service: what `search`, `find`, `serve` and
//! `mcp` ask when no Meilisearch answers. Per store, one owner opens and
//! refreshes the engine ([`opener`]); searches never wait for a refresh
//! (the engine in use answers until the owner swaps the new one in), and
//! wait for a first open only up to their deadline.
//!
//! A query's vector is computed before its search takes its turn
//! ([`vectors`], in a batch with other queries), then the search runs in
//! its turn at the CPU ([`turns`]), one per core at a time, first come
//! first served.

pub mod batches;
pub mod opener;
pub mod turns;
pub mod vectors;
pub mod workers;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use agentfinder_skills_reader::results::{similarity_of_cosine, Candidates};
use agentfinder_skills_reader::rules::query::without_ruled_out;
use agentfinder_skills_reader::store::StoreOptions;

use crate::search::EngineQuery;
use opener::{Opener, Source};
use turns::Turns;
use vectors::{ModelLoader, NoVector, QueryVectors};

/// Longest the cards of a keyword answer may take to embed
/// ([`Embedded::card_similarity`]), and never more than half the time
/// left before the search's `start_by`: past it the answer is judged by
/// its words, and says so, rather than made late.
pub const CARDS_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

/// How the embedded engine is set up.
#[derive(Debug, Clone)]
pub struct EmbeddedOptions {
    /// The store searched when a query names none.
    pub store: String,
    /// How a remote store is reached.
    pub store_options: StoreOptions,
    /// Where local indexes are kept ([`crate::default_cache_dir`]).
    pub cache: PathBuf,
    /// Local index versions kept in `cache`.
    pub keep_versions: usize,
    /// The model that embeds queries (`None`: keywords only).
    pub model: Option<ModelLoader>,
}

/// What the embedded engine is asked.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Query {
    /// The words.
    pub text: String,
    /// Most skills.
    pub limit: usize,
    /// Only this source.
    pub source: Option<String>,
    /// Weight of vector ranking, 0 to 1; `None` for keywords only.
    pub semantic_ratio: Option<f32>,
    /// Best-matching sections to name per skill (0: none).
    pub sections: usize,
    /// The store, when not the default one.
    pub store: Option<String>,
    /// When the search must have started (and the engine been open): a
    /// search still waiting then is refused, saying why; `None`: whenever.
    pub start_by: Option<Instant>,
}

/// The embedded engine over the stores it is asked about.
pub struct Embedded {
    options: EmbeddedOptions,
    /// The owner of each store's engine, by store.
    owners: Mutex<HashMap<String, Arc<Opener>>>,
    queries: QueryVectors,
    /// Searches take turns at the CPU, in arrival order.
    turns: Turns,
}

impl std::fmt::Debug for Embedded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Embedded({})", self.options.store)
    }
}

impl Embedded {
    /// An engine over `options.store` (a query may name another).
    pub fn new(options: EmbeddedOptions) -> Self {
        Self {
            queries: QueryVectors::new(options.model.clone()),
            options,
            owners: Mutex::new(HashMap::new()),
            turns: Turns::for_this_machine(),
        }
    }

    /// Its name in results, logs and health.
    pub fn name(&self) -> &'static str {
        crate::SOURCE_TYPE
    }

    /// The store a request names, else the default one.
    pub fn store<'a>(&'a self, store: Option<&'a str>) -> &'a str {
        store.unwrap_or(&self.options.store)
    }

    /// The owner of `store`'s engine (made on first use).
    fn owner(&self, store: Option<&str>) -> Arc<Opener> {
        let spec = self.store(store).to_string();
        let mut owners = self.owners.lock().unwrap_or_else(|p| p.into_inner());
        owners
            .entry(spec.clone())
            .or_insert_with(|| {
                Opener::new(Source {
                    spec,
                    options: self.options.store_options.clone(),
                    cache: self.options.cache.clone(),
                    keep_versions: self.options.keep_versions,
                })
            })
            .clone()
    }

    /// Answers `query`; the error is a message for the operator.
    pub async fn search(&self, query: &Query) -> Result<Candidates, String> {
        let engine = self
            .owner(query.store.as_deref())
            .engine(query.start_by)
            .await?;
        // The vector first (in a batch with other queries), then the
        // search in its turn; the vector of what the query wants, as the
        // keywords are.
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
        let mut found = self
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
            found.fallback = Some(format!("keywords only: {why}"));
        }
        Ok(found)
    }

    /// The best similarity ([`similarity_of_cosine`]'s scale) between
    /// `query` and `cards` (each a result's `"{name}: {description}"`, the
    /// text a skill document's vector is of), all embedded now by the
    /// query model in one wait: how well an answer that vectors did not
    /// rank matches. At most [`CARDS_WITHIN`] (and half the time left
    /// before `start_by`); the error says why not (no model, busy,
    /// failed).
    pub async fn card_similarity(
        &self,
        query: &str,
        cards: &[String],
        start_by: Option<Instant>,
    ) -> Result<f64, String> {
        if !self.queries.configured() {
            return Err("no model".into());
        }
        let wanted = without_ruled_out(query);
        let texts = std::iter::once(&*wanted).chain(cards.iter().map(String::as_str));
        let embedded =
            futures::future::join_all(texts.map(|text| self.queries.embed(text, start_by)));
        let within = start_by.map_or(CARDS_WITHIN, |by| {
            (by.saturating_duration_since(Instant::now()) / 2).min(CARDS_WITHIN)
        });
        let vectors = tokio::time::timeout(within, embedded)
            .await
            .map_err(|_| format!("the model was busy past {} ms", within.as_millis()))?;
        let mut vectors = vectors.into_iter().map(|v| {
            v.map_err(|e| match e {
                NoVector::Late(_) => "the model was busy".to_string(),
                // Why in full is `/health`'s (it names this machine's folders).
                NoVector::Unavailable(_) => "no model".to_string(),
            })
        });
        let query = vectors.next().ok_or("no query")??;
        let mut best: Option<f64> = None;
        for card in vectors {
            let card = card?;
            let similarity = similarity_of_cosine(crate::nearest::dot(&query, &card));
            best = Some(best.map_or(similarity, |b| b.max(similarity)));
        }
        best.ok_or_else(|| "no card".to_string())
    }

    /// Makes the engine ready to answer from `store` (the default one when
    /// `None`): opens its local index, building it the first time, and
    /// loads the query model. Waits as long as that takes, so a caller
    /// with a deadline can give the deadline to the search alone. A
    /// failure is left for `search` to report.
    pub async fn prepare(&self, store: Option<&str>) {
        let started = Instant::now();
        let Ok(engine) = self.owner(store).engine(None).await else {
            return;
        };
        if self.queries.configured() {
            // Loads the model (a vector is cached, so no work is lost): it
            // embeds queries, and the cards of keyword answers.
            let _ = self.queries.embed("", None).await;
        }
        let seconds = started.elapsed().as_secs_f64();
        if seconds >= 1.0 {
            eprintln!(
                "embedded engine: ready in {seconds:.1} s ({} documents; the local index is built once per artifact version, in {})",
                engine.documents(),
                engine.dir().display()
            );
        }
    }

    /// Whether queries of `store`'s engine would be embedded: `None` when
    /// they would (or the engine is not open yet), else why they are
    /// searched by keywords only.
    pub fn keywords_only(&self, store: Option<&str>) -> Option<String> {
        let engine = self.owner(store).current()?;
        if engine.embedder().is_none() {
            return Some("the store's artifacts have no vectors (built without the model)".into());
        }
        if !self.queries.configured() {
            return Some("[embed] is off".into());
        }
        self.queries
            .failure()
            .map(|why| format!("no model to embed queries: {why}"))
    }

    /// Looks at `store` again, so a new `latest/` is searched (a
    /// long-running service calls it on its timer).
    pub async fn refresh(&self, store: Option<&str>) -> Result<(), String> {
        self.owner(store).refresh().await
    }

    /// What health says of `store`'s engine, from what is held (no I/O):
    /// at least `ready`, and `problem` when something is wrong.
    pub fn status(&self, store: Option<&str>) -> serde_json::Value {
        let mut status = self.owner(store).status();
        if let Some(object) = status.as_object_mut() {
            object.insert("waiting".into(), self.turns.waiting().into());
            object.insert(
                "query_model".into(),
                match (self.queries.configured(), self.queries.failure()) {
                    (false, _) => "off".into(),
                    (true, None) => "ready".into(),
                    (true, Some(why)) => format!("unavailable: {why}").into(),
                },
            );
        }
        status
    }

    /// The sources `store`'s engine holds, once it is open.
    pub fn sources(&self, store: Option<&str>) -> Option<Vec<String>> {
        Some(self.owner(store).current()?.sources().to_vec())
    }

    /// Local indexes built for `store` by this process.
    pub fn builds(&self, store: Option<&str>) -> usize {
        self.owner(store).builds()
    }

    /// Every document of the skill `skill_key` (its skill document and
    /// its sections, in the artifact's order) in `store`'s artifacts;
    /// empty when no skill has that key. `start_by` as for a search.
    pub async fn skill_documents(
        &self,
        store: Option<&str>,
        skill_key: &str,
        start_by: Option<Instant>,
    ) -> Result<Vec<serde_json::Value>, String> {
        let engine = self.owner(store).engine(start_by).await?;
        let key = skill_key.to_string();
        self.turns
            .run(start_by, move || engine.skill_documents(&key))
            .await
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vectors::QueryModel;

    /// Texts about PDFs point one way, everything else the other.
    struct Topics;

    impl QueryModel for Topics {
        fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
            Ok(texts
                .iter()
                .map(|t| {
                    if t.to_lowercase().contains("pdf") {
                        vec![1.0, 0.0]
                    } else {
                        vec![0.0, 1.0]
                    }
                })
                .collect())
        }
    }

    fn embedded(model: Option<Result<(), String>>) -> Embedded {
        let model = model.map(|loads| ModelLoader {
            model: "m".into(),
            revision: "r".into(),
            load: Arc::new(move || match &loads {
                Ok(()) => Ok(Box::new(Topics) as Box<dyn QueryModel>),
                Err(why) => Err(why.clone()),
            }),
        });
        Embedded::new(EmbeddedOptions {
            store: "unused".into(),
            store_options: StoreOptions::default(),
            cache: std::env::temp_dir(),
            keep_versions: 1,
            model,
        })
    }

    #[tokio::test]
    async fn cards_are_compared_with_the_query_as_the_model_sees_them() {
        let engine = embedded(Some(Ok(())));
        let cards = ["gif: Make GIFs".to_string(), "pdf: Merge PDFs".to_string()];
        // The best of the cards, on Meilisearch's scale.
        let best = engine
            .card_similarity("merge pdf files", &cards, None)
            .await;
        assert_eq!(best, Ok(1.0));
        let none = engine
            .card_similarity("bake bread", &cards[1..], None)
            .await;
        assert_eq!(none, Ok(0.5));
        // What the query rules out is not compared.
        let ruled_out = engine
            .card_similarity("bake bread rather than a pdf", &cards[1..], None)
            .await;
        assert_eq!(ruled_out, Ok(0.5));
    }

    #[tokio::test]
    async fn cards_not_compared_say_why_in_a_few_words() {
        let cards = ["pdf: Merge PDFs".to_string()];
        let absent = embedded(None).card_similarity("pdf", &cards, None).await;
        assert_eq!(absent, Err("no model".to_string()));
        // A model that fails to load names this machine's folders: that is
        // `/health`'s to say, not the answer's.
        let failing = embedded(Some(Err("no files in /home/x/models".into())));
        let failed = failing.card_similarity("pdf", &cards, None).await;
        assert_eq!(failed, Err("no model".to_string()));
        // No time left: the words decide, and the search is not made late.
        let late = embedded(Some(Ok(())))
            .card_similarity("pdf", &cards, Some(Instant::now()))
            .await;
        assert!(
            late.as_ref().is_err_and(|why| why.contains("busy")),
            "{late:?}"
        );
    }
}
