//! A sentence-embedding model run in process with candle: BERT, mean
//! pooling over the attention mask, L2 normalisation, exactly as
//! sentence-transformers does for all-MiniLM-L6-v2.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// The model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A model file is missing or unreadable.
    #[error("model file {path}: {message}")]
    File {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// Inference failed.
    #[error("embedding failed: {0}")]
    Inference(String),
}

/// A loaded model and its tokenizer.
pub struct SentenceModel {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    /// Width of a vector.
    pub dimensions: usize,
}

impl SentenceModel {
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from
    /// `dir` onto `device`; inputs are truncated to `max_tokens` tokens (the
    /// model's window).
    pub fn load(dir: &Path, max_tokens: usize, device: Device) -> Result<Self, ModelError> {
        let file = |name: &str| {
            let path = dir.join(name);
            if path.is_file() {
                Ok(path)
            } else {
                Err(ModelError::File {
                    path: path.display().to_string(),
                    message: "not found".into(),
                })
            }
        };
        let file_error = |path: &Path, e: &dyn std::fmt::Display| ModelError::File {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        let config_path = file("config.json")?;
        let config: Config = serde_json::from_slice(
            &std::fs::read(&config_path).map_err(|e| file_error(&config_path, &e))?,
        )
        .map_err(|e| file_error(&config_path, &e))?;
        let tokenizer_path = file("tokenizer.json")?;
        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_path).map_err(|e| file_error(&tokenizer_path, &e))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..Default::default()
            }))
            .map_err(|e| file_error(&tokenizer_path, &e))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        let weights = file("model.safetensors")?;
        // SAFETY: the weights file is memory-mapped read-only and not changed while mapped.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &device) }
            .map_err(|e| file_error(&weights, &e))?;
        let model = BertModel::load(vb, &config).map_err(|e| file_error(&weights, &e))?;
        Ok(Self {
            model,
            tokenizer,
            device,
            dimensions: config.hidden_size,
        })
    }

    /// How many tokens of each text the model reads (after truncation to
    /// the window): what a forward pass costs, which the length in bytes
    /// only approximates (a CJK character is one to three tokens, an
    /// English word about one).
    pub fn token_lengths(&self, texts: &[String]) -> Result<Vec<usize>, ModelError> {
        let mut tokenizer = self.tokenizer.clone();
        tokenizer.with_padding(None);
        let encodings = tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| ModelError::Inference(e.to_string()))?;
        Ok(encodings.iter().map(|e| e.get_ids().len()).collect())
    }

    /// One normalised vector per text.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ModelError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let fail = |e: &dyn std::fmt::Display| ModelError::Inference(e.to_string());
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| fail(&e))?;
        let rows = |f: &dyn Fn(&tokenizers::Encoding) -> Vec<u32>| -> Result<Tensor, ModelError> {
            let rows: Vec<Tensor> = encodings
                .iter()
                .map(|e| Tensor::new(f(e).as_slice(), &self.device))
                .collect::<Result<_, _>>()
                .map_err(|e| fail(&e))?;
            Tensor::stack(&rows, 0).map_err(|e| fail(&e))
        };
        let ids = rows(&|e| e.get_ids().to_vec())?;
        let types = rows(&|e| e.get_type_ids().to_vec())?;
        let mask = rows(&|e| e.get_attention_mask().to_vec())?;
        let hidden = self
            .model
            .forward(&ids, &types, Some(&mask))
            .map_err(|e| fail(&e))?;
        // Mean over the real tokens only, so padding never changes a vector.
        let mask = mask
            .to_dtype(DType::F32)
            .and_then(|m| m.unsqueeze(2))
            .map_err(|e| fail(&e))?;
        let summed = hidden
            .broadcast_mul(&mask)
            .and_then(|h| h.sum(1))
            .map_err(|e| fail(&e))?;
        let counts = mask
            .sum(1)
            .and_then(|c| c.clamp(1e-9, f32::MAX))
            .map_err(|e| fail(&e))?;
        let mean = summed.broadcast_div(&counts).map_err(|e| fail(&e))?;
        let norms = mean
            .sqr()
            .and_then(|s| s.sum_keepdim(1))
            .and_then(|s| s.sqrt())
            .and_then(|n| n.clamp(1e-12, f32::MAX))
            .map_err(|e| fail(&e))?;
        let normalised = mean.broadcast_div(&norms).map_err(|e| fail(&e))?;
        normalised.to_vec2::<f32>().map_err(|e| fail(&e))
    }
}
