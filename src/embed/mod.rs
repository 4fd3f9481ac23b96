//! Embed stage: one sentence-embedding vector per document, computed in
//! process (candle), cached by text digest so only new text is embedded,
//! and shipped in the NDJSON as Meilisearch's own `_vectors` field with
//! `regenerate: false`, so the serving side embeds only queries.

mod cache;
pub mod hub;
mod locate;
mod model;
pub mod share;
mod threads;

use std::path::PathBuf;

use std::sync::atomic::Ordering;

use rayon::prelude::*;
use serde_json::{json, Value};

use agentfinder_skills_reader::contract::{Document, EmbedderInfo, KIND_SKILL};

pub use cache::{cache_key, text_digest, VectorCache};
use locate::model_dir;
pub use locate::{model_on_disk, tool_model_dir, user_model_dir, user_models_dir, MODELS_ENV};
pub use model::{ModelError, SentenceModel};
pub use threads::{one_thread_per_pass, PassThreads};

/// Name of the embedder in `_vectors` and in Meilisearch's settings.
pub const EMBEDDER_NAME: &str = "default";

/// Text embedded for a `skill` document.
pub const SKILL_TEMPLATE: &str = "{skill_name}: {skill_description}";
/// Text embedded for a `skill_section` document (truncated to the model's window).
pub const SECTION_TEMPLATE: &str = "{skill_name} > {heading_path}\n{content}";

/// The text a document is embedded from.
pub fn embedding_text(doc: &Document) -> String {
    if doc.kind == KIND_SKILL {
        agentfinder_skills_reader::contract::skill_card(&doc.skill_name, &doc.skill_description)
    } else {
        format!(
            "{} > {}\n{}",
            doc.skill_name,
            doc.heading_path.join(" > "),
            doc.content
        )
    }
}

/// Meilisearch's `_vectors` value for a vector computed here.
pub fn vectors_field(vector: &[f32]) -> Value {
    json!({ EMBEDDER_NAME: { "embeddings": vector, "regenerate": false } })
}

/// Meilisearch's `_vectors` value for a document left without a vector:
/// its opt-out (a user-provided embedder refuses a document with none).
pub fn no_vector_field() -> Value {
    json!({ EMBEDDER_NAME: null })
}

/// Which of `docs` get a vector when at most `sections_per_skill` sections
/// of a skill may (0: all of them): every `skill` document, and of each
/// skill's sections those with the most text (ties: the earlier first).
/// A skill's sections are told apart by `skill_key`, wherever they are in
/// `docs`. A section's vector is what finds a detail of its body; a title
/// alone or a two-line section says little its skill's vector does not.
pub fn chosen_for_vectors(docs: &[Document], sections_per_skill: usize) -> Vec<bool> {
    if sections_per_skill == 0 {
        return vec![true; docs.len()];
    }
    let mut chosen = vec![false; docs.len()];
    let mut sections: std::collections::HashMap<&str, Vec<usize>> = Default::default();
    for (i, doc) in docs.iter().enumerate() {
        if doc.kind == KIND_SKILL {
            chosen[i] = true;
        } else {
            sections.entry(doc.skill_key.as_str()).or_default().push(i);
        }
    }
    for mut rows in sections.into_values() {
        rows.sort_by_key(|&i| (std::cmp::Reverse(docs[i].content.len()), i));
        for &i in rows.iter().take(sections_per_skill) {
            chosen[i] = true;
        }
    }
    chosen
}

/// The embedder could not be set up or run.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// No model files where they were looked for.
    #[error("no model files for {model}@{revision}: looked in {looked}; set [embed].model_dir (scripts/fetch-model.sh unpacks one), or build with --no-embed")]
    ModelMissing {
        /// Hub id.
        model: String,
        /// Revision.
        revision: String,
        /// Folders tried.
        looked: String,
    },
    /// The device asked for is not there.
    #[error("[embed].device = \"cuda\": {0}")]
    Device(String),
    /// Loading or running the model failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The cache could not be read or written.
    #[error("embedding cache {path}: {error}")]
    Cache {
        /// The cache file's folder.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// Told to stop ([`Embedder::stop_when`]), it did between two slices
    /// of its work, after writing the vectors of those done to the cache.
    #[error("embedding stopped: {embedded} new vectors were written to the cache {path}, {left} texts were left")]
    Stopped {
        /// The cache file.
        path: String,
        /// Texts embedded (and cached) by the call that stopped.
        embedded: usize,
        /// Texts it left.
        left: usize,
    },
}

/// Forward passes a slice of [`Embedder::embed_documents`]'s work holds per
/// thread: the vectors are written to the cache, and a stop is looked for,
/// after each slice (a few seconds of work on a CPU).
const PASSES_PER_SLICE: usize = 2;

/// `[embed].device`: where the model runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedDevice {
    /// The first CUDA GPU when the binary was built with the `cuda` feature
    /// and one is present, else the CPU.
    Auto,
    /// The CPU.
    Cpu,
    /// The first CUDA GPU; an error when there is none.
    Cuda,
}

/// Where the model comes from and how it is used.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbedSettings {
    /// Hub id, e.g. `sentence-transformers/all-MiniLM-L6-v2`.
    pub model: String,
    /// Pinned revision (a commit of the model repository).
    pub revision: String,
    /// A local folder with `config.json`, `tokenizer.json`, `model.safetensors`.
    pub model_dir: Option<PathBuf>,
    /// Where vectors are cached.
    pub cache_dir: PathBuf,
    /// Download the model into the Hub cache when it is on disk nowhere.
    pub download: bool,
    /// Where the model runs.
    pub device: EmbedDevice,
    /// Longest input in tokens (the model's window).
    pub max_tokens: usize,
    /// Texts per forward pass.
    pub batch_size: usize,
    /// Most sections of a skill embedded (0: all); see [`chosen_for_vectors`].
    pub sections_per_skill: usize,
    /// Embed only the texts of this shard (`build --embed-shard`).
    pub shard: Option<crate::shard::Shard>,
}

/// A loaded embedder with its cache, counting what it embedded and reused.
pub struct Embedder {
    model: SentenceModel,
    cache: VectorCache,
    settings: EmbedSettings,
    /// Texts embedded by the model in this run.
    pub embedded: u64,
    /// Texts found in the cache.
    pub cached: u64,
    /// Texts left to other shards (`build --embed-shard`).
    pub other_shards: u64,
    /// Seconds spent in the model.
    pub model_seconds: f64,
    /// Set when the embedder must stop between slices of its work.
    stop: Option<&'static std::sync::atomic::AtomicBool>,
}

impl Embedder {
    /// Loads the model (from `model_dir`, else the Hugging Face Hub cache) and opens the cache.
    pub fn open(settings: &EmbedSettings) -> Result<Self, EmbedError> {
        let dir = model_dir(settings)?;
        let device = select_device(settings.device)?;
        let model = SentenceModel::load(&dir, settings.max_tokens, device)?;
        let key = cache_key(&settings.model, &settings.revision, settings.max_tokens);
        let cache =
            VectorCache::open(&settings.cache_dir, &key, model.dimensions).map_err(|error| {
                EmbedError::Cache {
                    path: settings.cache_dir.display().to_string(),
                    error,
                }
            })?;
        Ok(Self {
            model,
            cache,
            settings: settings.clone(),
            embedded: 0,
            cached: 0,
            other_shards: 0,
            model_seconds: 0.0,
            stop: None,
        })
    }

    /// Makes [`Embedder::embed_documents`] stop between slices of its
    /// work once `flag` is set (a signal asked the process to stop),
    /// with [`EmbedError::Stopped`], after writing what it embedded.
    pub fn stop_when(&mut self, flag: &'static std::sync::atomic::AtomicBool) {
        self.stop = Some(flag);
    }

    /// What the manifest records about this embedder.
    pub fn info(&self) -> EmbedderInfo {
        EmbedderInfo {
            name: EMBEDDER_NAME.to_string(),
            model: self.settings.model.clone(),
            revision: self.settings.revision.clone(),
            dimensions: self.model.dimensions,
            pooling: "mean".to_string(),
            normalization: "l2".to_string(),
            max_tokens: self.settings.max_tokens,
            templates: [
                ("skill", SKILL_TEMPLATE),
                ("skill_section", SECTION_TEMPLATE),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            sections_per_skill: (self.settings.sections_per_skill > 0)
                .then_some(self.settings.sections_per_skill),
        }
    }

    /// The model and revision it runs.
    pub fn model_id(&self) -> (&str, &str) {
        (&self.settings.model, &self.settings.revision)
    }

    /// Sets `_vectors` on every document: a vector for those
    /// [`chosen_for_vectors`], embedding only texts not cached, and
    /// [`no_vector_field`] on the others.
    pub fn embed_documents(&mut self, docs: &mut [Document]) -> Result<(), EmbedError> {
        let chosen = chosen_for_vectors(docs, self.settings.sections_per_skill);
        let texts: Vec<String> = docs.iter().map(embedding_text).collect();
        let digests: Vec<[u8; 32]> = texts.iter().map(|t| text_digest(t)).collect();
        // Each distinct text once: near-copies of a skill share sections,
        // and a copy counts as taken from the cache.
        let mut distinct = std::collections::HashSet::new();
        let shard = self.settings.shard;
        let mut other_shards = std::collections::HashSet::new();
        let missing: Vec<usize> = (0..docs.len())
            .filter(|&i| {
                chosen[i] && !self.cache.contains(&digests[i]) && distinct.insert(digests[i])
            })
            .filter(|&i| match shard {
                Some(shard) if !shard.owns_digest(&digests[i]) => {
                    other_shards.insert(digests[i]);
                    false
                }
                _ => true,
            })
            .collect();
        // A batch is padded to its longest text: batching texts of the same
        // length in tokens wastes the least work on padding (vectors do not
        // change). Sorted by bytes, 10.6% of the tokens run on AgentWorkers
        // were padding; by tokens, 0.3% (`cargo bench --bench embed_throughput`).
        let inputs: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
        let lengths = self.model.token_lengths(&inputs)?;
        let mut by_length: Vec<(usize, usize)> = lengths.into_iter().zip(missing).collect();
        by_length.sort_by_key(|&(tokens, i)| (std::cmp::Reverse(tokens), i));
        let missing: Vec<usize> = by_length.into_iter().map(|(_, i)| i).collect();
        let wanted = chosen.iter().filter(|&&c| c).count();
        self.other_shards += other_shards.len() as u64;
        self.cached += wanted.saturating_sub(missing.len() + other_shards.len()) as u64;
        let started = std::time::Instant::now();
        let batch_size = self.settings.batch_size.max(1);
        let slice = batch_size * rayon::current_num_threads().max(1) * PASSES_PER_SLICE;
        let mut done = 0;
        for slice in missing.chunks(slice) {
            if self.stop.is_some_and(|stop| stop.load(Ordering::SeqCst)) {
                self.model_seconds += started.elapsed().as_secs_f64();
                return Err(EmbedError::Stopped {
                    path: self.cache.path().display().to_string(),
                    embedded: done,
                    left: missing.len() - done,
                });
            }
            // Batches run on all cores: one forward pass keeps about one busy.
            let batches: Vec<&[usize]> = slice.chunks(batch_size).collect();
            let model = &self.model;
            let computed: Vec<Result<Vec<Vec<f32>>, ModelError>> = batches
                .par_iter()
                .map(|batch| {
                    let inputs: Vec<String> = batch.iter().map(|&i| texts[i].clone()).collect();
                    model.embed(&inputs)
                })
                .collect();
            for (batch, vectors) in batches.iter().zip(computed) {
                for (&i, vector) in batch.iter().zip(vectors?) {
                    self.cache.insert(digests[i], vector);
                }
                self.embedded += batch.len() as u64;
            }
            // Written after each slice: a build stopped now keeps them.
            self.flush()?;
            done += slice.len();
            crate::failpoint::failpoint("embed-after-slice");
        }
        self.model_seconds += started.elapsed().as_secs_f64();
        for ((doc, digest), chosen) in docs.iter_mut().zip(&digests).zip(chosen) {
            doc.vectors = if chosen {
                let vector = self.cache.get(digest).map_err(|e| self.cache_error(e))?;
                vector.as_deref().map(vectors_field)
            } else {
                Some(no_vector_field())
            };
        }
        // Written now, so memory holds one batch of new vectors at most.
        self.flush()
    }

    /// Writes new vectors to the cache file.
    pub fn flush(&mut self) -> Result<(), EmbedError> {
        self.cache.flush().map_err(|e| self.cache_error(e))
    }

    fn cache_error(&self, error: std::io::Error) -> EmbedError {
        EmbedError::Cache {
            path: self.cache.path().display().to_string(),
            error,
        }
    }
}

/// The model alone, for search queries: no vector cache, and shared by
/// threads without a lock ([`QueryEmbedder::embed`] takes `&self`). A lock
/// held across a forward pass is what hung `serve`: the pass runs rayon
/// work, and a thread waiting on it may pick up another search.
pub struct QueryEmbedder {
    model: SentenceModel,
}

impl QueryEmbedder {
    /// Loads the model as [`Embedder::open`] does.
    pub fn open(settings: &EmbedSettings) -> Result<Self, EmbedError> {
        let dir = model_dir(settings)?;
        let device = select_device(settings.device)?;
        let model = SentenceModel::load(&dir, settings.max_tokens, device)?;
        Ok(Self { model })
    }

    /// The vector of a search query.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut vectors = self.model.embed(&[text.to_string()])?;
        Ok(vectors.pop().unwrap_or_default())
    }

    /// The vectors of several queries, in one forward pass (the same
    /// vectors as one by one: padding never changes a vector).
    pub fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(self.model.embed(texts)?)
    }
}

/// The vector cache, for sharing it through the store.
impl AsMut<VectorCache> for Embedder {
    fn as_mut(&mut self) -> &mut VectorCache {
        &mut self.cache
    }
}

/// The device `choice` names. `auto` falls back to the CPU (with a warning
/// when the binary has CUDA but no GPU answered).
fn select_device(choice: EmbedDevice) -> Result<candle_core::Device, EmbedError> {
    use candle_core::Device;
    let cuda = || {
        if !candle_core::utils::cuda_is_available() {
            return Err("this binary was built without the `cuda` feature".to_string());
        }
        Device::new_cuda(0).map_err(|e| e.to_string())
    };
    match choice {
        EmbedDevice::Cpu => Ok(Device::Cpu),
        EmbedDevice::Cuda => cuda().map_err(EmbedError::Device),
        EmbedDevice::Auto => Ok(match cuda() {
            Ok(device) => device,
            Err(why) => {
                if candle_core::utils::cuda_is_available() {
                    crate::logging::global()
                        .warn("embed", format!("no CUDA GPU ({why}); on the CPU"));
                }
                Device::Cpu
            }
        }),
    }
}
