//! What one search costs inside the engine, without HTTP or the model
//! (prints numbers, checks nothing):
//!
//! ```sh
//! cargo bench -p agentfinder-skills-engine --bench query -- <local index folder> <queries.json> [ROUNDS]
//! ```
//!
//! Each query of the file (`{"queries": [{"query": ...}]}`, as
//! `fixtures/eval/queries.json`) is searched keywords only, then hybrid
//! with the vector of an evenly spaced row standing in for the query's
//! (the artifact's model is not in this crate). Prints p50/p99 per mode.

use std::time::Instant;

use agentfinder_skills_engine::{Engine, EngineQuery};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let (Some(dir), Some(file)) = (args.first(), args.get(1)) else {
        eprintln!("usage: query <local index folder> <queries.json> [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(3);
    let fail = |what: String| -> ! {
        eprintln!("{what}");
        std::process::exit(1)
    };
    let engine =
        Engine::open_dir(std::path::Path::new(dir)).unwrap_or_else(|e| fail(format!("{dir}: {e}")));
    let listed: serde_json::Value = std::fs::read(file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_else(|| fail(format!("{file}: not a queries file")));
    let queries: Vec<String> = listed["queries"]
        .as_array()
        .map(|q| {
            q.iter()
                .filter_map(|q| q["query"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let dimensions = engine.dimensions();
    let vectors: Vec<f32> = if dimensions > 0 {
        std::fs::read(std::path::Path::new(dir).join("vectors.f32"))
            .unwrap_or_default()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    } else {
        Vec::new()
    };
    let rows = vectors.len() / dimensions.max(1);
    let vector_of = |i: usize| {
        let row = (i * 7919) % rows.max(1);
        vectors.get(row * dimensions..(row + 1) * dimensions)
    };
    for (mode, hybrid) in [("keywords", false), ("hybrid", true)] {
        if hybrid && rows == 0 {
            println!("query: mode=hybrid skipped (no vectors)");
            continue;
        }
        let mut times = Vec::new();
        let mut slowest: Vec<(f64, &str)> = Vec::new();
        for _ in 0..rounds {
            for (i, text) in queries.iter().enumerate() {
                let query = EngineQuery {
                    text,
                    vector: if hybrid { vector_of(i) } else { None },
                    source: None,
                    limit: 10,
                    semantic_ratio: if hybrid { 0.5 } else { 0.0 },
                    sections: 0,
                };
                let started = Instant::now();
                let found = engine.search(&query).map(|r| r.hits.len()).unwrap_or(0);
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                times.push(ms);
                slowest.push((ms, text));
                std::hint::black_box(found);
            }
        }
        times.sort_by(f64::total_cmp);
        let at = |p: f64| times[((times.len() as f64 * p) as usize).min(times.len() - 1)];
        println!(
            "query: mode={mode} documents={} searches={} p50_ms={:.2} p99_ms={:.2} mean_ms={:.2}",
            engine.documents(),
            times.len(),
            at(0.5),
            at(0.99),
            times.iter().sum::<f64>() / times.len() as f64
        );
        slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (ms, text) in slowest.iter().take(3) {
            println!("  slowest: {ms:.2} ms  {text}");
        }
    }
}
