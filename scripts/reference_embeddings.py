#!/usr/bin/env python3
"""Reference sentence embeddings for all-MiniLM-L6-v2, computed independently
of the Rust code: a plain numpy BERT forward pass over the model's safetensors
(what sentence-transformers runs: 6 layers, mean pooling over the attention
mask, L2 normalisation), tokenized with the model's own tokenizer.json.

  pip install numpy safetensors tokenizers
  python3 scripts/reference_embeddings.py MODEL_DIR > fixtures/embeddings/reference.json

torch (and so sentence-transformers itself) cannot be installed on the
project's machines; this reimplementation is the reference instead, and the
Rust embedder must agree with it within 1e-3 per component.
"""
import json
import math
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

SENTENCES = [
    "This framework generates embeddings for each input sentence",
    "Sentences are passed as a list of string.",
    "The quick brown fox jumps over the lazy dog.",
    "pdf-tools: Extract text and tables from PDF files, fill PDF forms, and merge or split documents.",
    "gif-maker > GIF maker > Frames\nDraw 8 to 12 frames and loop them.",
    "A tiny looping animation to use as a custom reaction in our team chat",
    "Über naïve café — 日本語のテキスト",
    "x",
]


def layer_norm(x, w, b, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def embed(weights, config, ids, types, mask):
    n_heads = config["num_attention_heads"]
    hidden = config["hidden_size"]
    head = hidden // n_heads
    pos = np.arange(len(ids))
    x = weights["embeddings.word_embeddings.weight"][ids] \
        + weights["embeddings.position_embeddings.weight"][pos] \
        + weights["embeddings.token_type_embeddings.weight"][types]
    x = layer_norm(x, weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"])
    bias = (1.0 - mask)[None, None, :] * np.finfo(np.float64).min
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."
        lin = lambda t, name: t @ weights[p + name + ".weight"].T + weights[p + name + ".bias"]
        q, k, v = (lin(x, f"attention.self.{n}").reshape(len(ids), n_heads, head).transpose(1, 0, 2)
                   for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(head) + bias
        scores = scores - scores.max(-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(len(ids), hidden)
        x = layer_norm(lin(ctx, "attention.output.dense") + x,
                       weights[p + "attention.output.LayerNorm.weight"], weights[p + "attention.output.LayerNorm.bias"])
        inter = gelu(lin(x, "intermediate.dense"))
        x = layer_norm(lin(inter, "output.dense") + x,
                       weights[p + "output.LayerNorm.weight"], weights[p + "output.LayerNorm.bias"])
    pooled = (x * mask[:, None]).sum(0) / max(mask.sum(), 1e-9)
    return pooled / max(np.linalg.norm(pooled), 1e-12)


def main():
    model_dir = sys.argv[1]
    config = json.load(open(f"{model_dir}/config.json"))
    weights = {k: v.astype(np.float64) for k, v in load_file(f"{model_dir}/model.safetensors").items()}
    tokenizer = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tokenizer.enable_truncation(256)
    vectors = []
    for sentence in SENTENCES:
        enc = tokenizer.encode(sentence)
        vec = embed(weights, config, np.array(enc.ids), np.array(enc.type_ids), np.array(enc.attention_mask, dtype=np.float64))
        vectors.append([round(float(v), 7) for v in vec])
    json.dump({"model": "sentence-transformers/all-MiniLM-L6-v2", "sentences": SENTENCES, "vectors": vectors}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
