//! How much the shortlist (sign bits, then 8-bit codes) loses, and what it
//! saves, on a built local index (prints numbers, checks nothing):
//!
//! ```sh
//! cargo bench -p agentfinder-skills-engine --bench shortlist -- <local index folder> [QUERIES] [SHORTLIST]
//! ```
//!
//! The queries are the vectors of evenly spaced rows (real vectors of the
//! artifact's model), each row left out of its own answer. For each, the
//! exact scan's top 10 and top [`CANDIDATES`] are compared with the
//! shortlisted search's: recall is the share of the exact rows it finds.

use std::time::Instant;

use agentfinder_skills_engine::nearest::{nearest, Vectors};
use agentfinder_skills_engine::search::{CANDIDATES, SHORTLIST};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(dir) = args.first().map(std::path::PathBuf::from) else {
        eprintln!("usage: shortlist <local index folder> [QUERIES] [SHORTLIST]");
        std::process::exit(2);
    };
    let queries: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(200);
    let shortlist: usize = args
        .get(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(SHORTLIST);
    let read = |name: &str| {
        std::fs::read(dir.join(name)).unwrap_or_else(|e| {
            eprintln!("{}/{name}: {e}", dir.display());
            std::process::exit(1)
        })
    };
    let meta: serde_json::Value = serde_json::from_slice(&read("meta.json")).unwrap_or_default();
    let dimensions = meta["dimensions"].as_u64().unwrap_or(0) as usize;
    if dimensions == 0 {
        eprintln!("the index has no vectors");
        std::process::exit(1);
    }
    let vector_bytes = read("vectors.f32");
    let sign_bytes = read("vectors.sign");
    let vectors: Vec<f32> = vector_bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let signs: Vec<u64> = sign_bytes
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
        .collect();
    let codes: Vec<i8> = read("vectors.i8").into_iter().map(|b| b as i8).collect();
    let scales: Vec<f32> = read("vectors.scale")
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let encoded = Vectors {
        dimensions,
        exact: &vectors,
        codes: &codes,
        scales: &scales,
        signs: &signs,
    };
    let rows = vectors.len() / dimensions;
    let step = (rows / queries.max(1)).max(1);
    let (mut exact_s, mut short_s) = (0f64, 0f64);
    let (mut found10, mut wanted10, mut found_all, mut wanted_all) = (0, 0, 0, 0);
    let mut asked = 0;
    for q in (0..rows).step_by(step).take(queries) {
        let query = &vectors[q * dimensions..(q + 1) * dimensions];
        if query.iter().all(|x| *x == 0.0) {
            continue;
        }
        let keep = |row: u32| row as usize != q;
        let started = Instant::now();
        let exact = nearest(&vectors, dimensions, query, CANDIDATES, keep);
        exact_s += started.elapsed().as_secs_f64();
        let started = Instant::now();
        let short = encoded.nearest_shortlisted(query, CANDIDATES, shortlist, Some(&keep));
        short_s += started.elapsed().as_secs_f64();
        let rows_of = |hits: &[(u32, f32)]| hits.iter().map(|h| h.0).collect::<Vec<_>>();
        let (exact, short) = (rows_of(&exact), rows_of(&short));
        wanted10 += exact.len().min(10);
        found10 += exact
            .iter()
            .take(10)
            .filter(|r| short[..short.len().min(10)].contains(r))
            .count();
        wanted_all += exact.len();
        found_all += exact.iter().filter(|r| short.contains(r)).count();
        asked += 1;
    }
    let per = |s: f64| 1000.0 * s / asked.max(1) as f64;
    println!(
        "shortlist: rows={rows} dimensions={dimensions} queries={asked} shortlist={shortlist} recall@10={:.3} recall@{CANDIDATES}={:.3} exact_ms={:.2} shortlisted_ms={:.2}",
        found10 as f64 / wanted10.max(1) as f64,
        found_all as f64 / wanted_all.max(1) as f64,
        per(exact_s),
        per(short_s),
    );
}
