//! What the serving commands are given: the store and index the
//! configuration names, and the embedded engine with the query model this
//! binary runs (candle, from the builder's embed stage).

use std::sync::Arc;

use agentfinder_skills::config::Config;
use agentfinder_skills::embed::{EmbedSettings, QueryEmbedder};
use agentfinder_skills_engine::service::vectors::{ModelLoader, QueryModel};
use agentfinder_skills_engine::{default_cache_dir, Embedded, EmbeddedOptions};
use agentfinder_skills_reader::cli::Defaults;
use agentfinder_skills_serve::ServingDefaults;

/// The serving commands' defaults under `config`.
pub fn defaults(config: &Config) -> ServingDefaults {
    let embedded = Embedded::new(EmbeddedOptions {
        store: config.output.store.clone(),
        store_options: config.store.clone(),
        cache: default_cache_dir(),
        keep_versions: config.engine.keep_versions,
        model: config.embed_settings().map(loader),
    });
    ServingDefaults {
        reader: Defaults {
            store: config.output.store.clone(),
            store_options: config.store.clone(),
            index: Some(config.output.index.clone()),
        },
        embedded: Arc::new(embedded),
    }
}

/// Loads `settings`' model from this machine only: a query never waits for
/// a download.
fn loader(settings: EmbedSettings) -> ModelLoader {
    let offline = EmbedSettings {
        download: false,
        ..settings.clone()
    };
    ModelLoader {
        model: settings.model,
        revision: settings.revision,
        load: Arc::new(move || {
            let model = QueryEmbedder::open(&offline).map_err(|e| e.to_string())?;
            Ok(Box::new(Model(model)) as Box<dyn QueryModel>)
        }),
    }
}

/// The builder's query embedder, as the engine's query model.
struct Model(QueryEmbedder);

impl QueryModel for Model {
    fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        self.0.embed_batch(texts).map_err(|e| e.to_string())
    }
}
