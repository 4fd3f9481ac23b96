//! What a search query's vector costs: the eval set's queries (varied, each
//! embedded once per pass, no cache), embedded one at a time and in the
//! batches `serve` forms when queries arrive together, on all cores.
//!
//! ```sh
//! cargo bench --bench query_embed -- [QUERIES.json] [--rounds N] [--workers W]
//! ```
//!
//! `--workers W` runs W forward passes at once, each on its own thread (as
//! `serve` does with W query workers). Each pass runs on one core, as in
//! the binary (`embed::one_thread_per_pass`); set `CANDLE_NUM_THREADS=2`
//! (the cores) to split each pass across the cores, candle's default.
//!
//! QUERIES.json is an eval query set (default `fixtures/eval/queries.json`).
//! The model comes from `$AGENTFINDER_MODEL_DIR`, else this user's models
//! (where scripts/fetch-model.sh puts them). Prints queries/s and milliseconds a
//! forward pass per batch size; the floor under a hybrid search's latency
//! when every query is new.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use agentfinder_skills::embed::SentenceModel;
use candle_core::Device;

fn fail(message: String) -> ! {
    eprintln!("query_embed: {message}");
    std::process::exit(2)
}

fn main() {
    println!(
        "model passes: {:?}",
        agentfinder_skills::embed::one_thread_per_pass()
    );
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let mut file = PathBuf::from("fixtures/eval/queries.json");
    let mut rounds = 3usize;
    let mut workers = 1usize;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| fail("--rounds takes a number".into()))
            }
            "--workers" => {
                workers = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|&w: &usize| w > 0)
                    .unwrap_or_else(|| fail("--workers takes a number above 0".into()))
            }
            _ => file = PathBuf::from(arg),
        }
    }
    let bytes = std::fs::read(&file).unwrap_or_else(|e| fail(format!("{}: {e}", file.display())));
    let set: serde_json::Value =
        serde_json::from_slice(&bytes).unwrap_or_else(|e| fail(format!("{}: {e}", file.display())));
    let queries: Vec<String> = set["queries"]
        .as_array()
        .map(|qs| {
            qs.iter()
                .filter_map(|q| q["query"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if queries.is_empty() {
        fail(format!("{}: no queries", file.display()));
    }
    let dir = agentfinder_skills::embed::tool_model_dir("sentence-transformers/all-MiniLM-L6-v2")
        .unwrap_or_else(|| PathBuf::from(".cache/models/all-MiniLM-L6-v2"));
    let model = SentenceModel::load(&dir, 256, Device::Cpu)
        .unwrap_or_else(|e| fail(format!("{}: {e}", dir.display())));
    let lengths = model
        .token_lengths(&queries)
        .unwrap_or_else(|e| fail(e.to_string()));
    println!(
        "{} queries, {:.1} tokens a query (with [CLS] and [SEP])",
        queries.len(),
        lengths.iter().sum::<usize>() as f64 / queries.len() as f64
    );
    // One pass to warm the allocator and the thread pool.
    model
        .embed(&queries[..queries.len().min(16)])
        .unwrap_or_else(|e| fail(e.to_string()));
    for batch in [1usize, 4, 16] {
        let chunks: Vec<&[String]> = (0..rounds).flat_map(|_| queries.chunks(batch)).collect();
        let next = AtomicUsize::new(0);
        let started = Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    while let Some(chunk) = chunks.get(next.fetch_add(1, Ordering::Relaxed)) {
                        model.embed(chunk).unwrap_or_else(|e| fail(e.to_string()));
                    }
                });
            }
        });
        let seconds = started.elapsed().as_secs_f64();
        let passes = chunks.len();
        println!(
            "batch {batch:>2}, {workers} worker(s): {:>6.1} queries/s, {:>6.2} ms a forward pass",
            (queries.len() * rounds) as f64 / seconds,
            1000.0 * seconds * workers as f64 / passes as f64
        );
    }
}
