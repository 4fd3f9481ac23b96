//! First-embed throughput on real text: the distinct embedding texts of a
//! built artifact, embedded as the embed stage does (batches of similar
//! length on all cores), under several orderings and batch sizes, with
//! the token counts that explain the cost.
//!
//! ```sh
//! cargo bench --bench embed_throughput -- DOCUMENTS.ndjson [--every K] [--batch B]... [--max-tokens N] [--sections-per-skill N]
//! ```
//!
//! DOCUMENTS.ndjson is an artifact's `hf-skills.ndjson`; `--every K` takes
//! every K-th distinct text (default 50); `--sections-per-skill N` takes
//! only the texts `[embed] sections_per_skill = N` embeds. Each pass runs
//! on one core, as in the binary (`embed::one_thread_per_pass`); set
//! `CANDLE_NUM_THREADS=2` (the cores) for candle's default, each pass
//! split across the cores. The model comes from
//! `$AGENTFINDER_MODEL_DIR`, else this user's models
//! (where scripts/fetch-model.sh puts them).

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

use agentfinder_skills::embed::{chosen_for_vectors, embedding_text, SentenceModel};
use agentfinder_skills_reader::contract::Document;
use candle_core::Device;
use rayon::prelude::*;

/// A text's sort key, by its index.
type SortKey<'a> = Box<dyn Fn(usize) -> usize + 'a>;

fn fail(message: String) -> ! {
    eprintln!("embed_throughput: {message}");
    std::process::exit(2)
}

fn main() {
    println!(
        "model passes: {:?}",
        agentfinder_skills::embed::one_thread_per_pass()
    );
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let mut file = None;
    let mut every = 50usize;
    let mut batches = Vec::new();
    let mut max_tokens = 256usize;
    let mut sections_per_skill = 0usize;
    while let Some(arg) = args.next() {
        let mut number = |what: &str| -> usize {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| fail(format!("{what} takes a number")))
        };
        match arg.as_str() {
            "--every" => every = number("--every").max(1),
            "--batch" => batches.push(number("--batch").max(1)),
            "--max-tokens" => max_tokens = number("--max-tokens").max(1),
            "--sections-per-skill" => sections_per_skill = number("--sections-per-skill"),
            _ if file.is_none() => file = Some(PathBuf::from(arg)),
            _ => fail(format!("unexpected argument {arg}")),
        }
    }
    let Some(file) = file else {
        fail("usage: cargo bench --bench embed_throughput -- DOCUMENTS.ndjson [--every K] [--batch B]... [--max-tokens N]".into())
    };
    if batches.is_empty() {
        batches = vec![8, 32];
    }
    let bytes = std::fs::read(&file).unwrap_or_else(|e| fail(format!("{}: {e}", file.display())));
    let docs: Vec<Document> = bytes
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(|line| serde_json::from_slice::<Document>(line).ok())
        .collect();
    let documents = docs.len();
    let chosen = chosen_for_vectors(&docs, sections_per_skill);
    let mut seen = HashSet::new();
    let texts: Vec<String> = docs
        .iter()
        .zip(chosen)
        .filter(|(_, chosen)| *chosen)
        .map(|(doc, _)| embedding_text(doc))
        .filter(|text| seen.insert(text.clone()))
        .collect();
    drop(docs);
    let distinct = texts.len();
    let texts: Vec<String> = texts.into_iter().step_by(every).collect();
    let dir = agentfinder_skills::embed::tool_model_dir("sentence-transformers/all-MiniLM-L6-v2")
        .unwrap_or_else(|| PathBuf::from(".cache/models/all-MiniLM-L6-v2"));
    let model = SentenceModel::load(&dir, max_tokens, Device::Cpu)
        .unwrap_or_else(|e| fail(format!("{}: {e}", dir.display())));
    let lengths = model
        .token_lengths(&texts)
        .unwrap_or_else(|e| fail(e.to_string()));
    let tokens: usize = lengths.iter().sum();
    let mut sorted = lengths.clone();
    sorted.sort_unstable();
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q) as usize];
    println!(
        "{documents} documents, {distinct} distinct texts to embed (sections a skill: {}); sample of {} (every {every}th), window {max_tokens}",
        if sections_per_skill == 0 { "all".to_string() } else { sections_per_skill.to_string() },
        texts.len()
    );
    println!(
        "tokens a text: mean {:.0}, p50 {}, p90 {}, at the window {:.1}%",
        tokens as f64 / texts.len() as f64,
        at(0.5),
        at(0.9),
        100.0 * sorted.iter().filter(|&&n| n >= max_tokens).count() as f64 / texts.len() as f64
    );
    let orders: [(&str, SortKey); 2] = [
        ("bytes", Box::new(|i| texts[i].len())),
        ("tokens", Box::new(|i| lengths[i])),
    ];
    for (name, key) in &orders {
        for &batch in &batches {
            let mut order: Vec<usize> = (0..texts.len()).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(key(i)));
            let chunks: Vec<&[usize]> = order.chunks(batch).collect();
            let padded: usize = chunks
                .iter()
                .map(|c| c.len() * c.iter().map(|&i| lengths[i]).max().unwrap_or(0))
                .sum();
            let started = Instant::now();
            chunks.par_iter().for_each(|chunk| {
                let inputs: Vec<String> = chunk.iter().map(|&i| texts[i].clone()).collect();
                model.embed(&inputs).unwrap_or_else(|e| fail(e.to_string()));
            });
            let seconds = started.elapsed().as_secs_f64();
            println!(
                "sorted by {name:<6} batch {batch:>3}: {:>6.1} texts/s, {:>6.0} tokens/s, padding {:>4.1}% of the tokens run; {distinct} distinct texts would take {:.0} min",
                texts.len() as f64 / seconds,
                tokens as f64 / seconds,
                100.0 * (padded - tokens) as f64 / padded as f64,
                distinct as f64 / (texts.len() as f64 / seconds) / 60.0
            );
        }
    }
}
