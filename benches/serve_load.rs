//! Load on a running `serve`: N clients (16) for S seconds (30) over
//! loopback, each sending the next query of a list as soon as the last one
//! was answered; prints requests per second and latency percentiles.
//!
//! ```sh
//! agentfinder-skills serve --addr 127.0.0.1:8080 &
//! cargo bench --bench serve_load -- 127.0.0.1:8080 [CLIENTS] [SECONDS] [QUERIES.json]
//! ```
//!
//! The queries default to those of `fixtures/eval/queries.json`. Every
//! request is a query never asked before (a query of the list, a word of
//! another and a number), as users send them: a repeated query is answered
//! from the server's cache of query vectors, and a benchmark of repeats hid
//! a deadlock that only new queries reach. A bounded generator: each client
//! has one request in flight, so the server is never asked more than
//! CLIENTS at once.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(addr) = args.first().cloned() else {
        eprintln!("usage: serve_load ADDR [CLIENTS] [SECONDS] [QUERIES.json]");
        return;
    };
    let clients: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(16);
    let seconds: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(30);
    let file = args.get(3).cloned().unwrap_or_else(|| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/eval/queries.json").to_string()
    });
    let text = std::fs::read_to_string(&file).expect("queries file");
    let parsed: serde_json::Value = serde_json::from_str(&text).expect("queries JSON");
    let queries: Vec<String> = parsed["queries"]
        .as_array()
        .expect("queries array")
        .iter()
        .filter_map(|q| q["query"].as_str())
        .map(|q| q.split_whitespace().collect::<Vec<_>>().join("+"))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let workers: Vec<_> = (0..clients)
        .map(|n| {
            let (addr, queries) = (addr.clone(), queries.clone());
            std::thread::spawn(move || {
                let mut latencies = Vec::new();
                let mut errors = 0u64;
                let mut i = n;
                let mut k = 0usize;
                while Instant::now() < deadline {
                    let q = &queries[i % queries.len()];
                    let other = &queries[(i * 7 + 3) % queries.len()];
                    let word = other.split('+').nth(k % 3).unwrap_or("skill");
                    // Unseen: no two requests of the run share their text.
                    let q = format!("{q}+{word}+{n}x{k}");
                    i += clients;
                    k += 1;
                    let t = Instant::now();
                    match get(&addr, &format!("/search?q={q}&limit=10")) {
                        Some(200) => latencies.push(t.elapsed()),
                        _ => errors += 1,
                    }
                }
                (latencies, errors)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut errors = 0;
    for worker in workers {
        let (latencies, failed) = worker.join().expect("client thread");
        all.extend(latencies);
        errors += failed;
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort();
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    println!(
        "serve_load: unseen queries, clients={clients} seconds={elapsed:.1} requests={} errors={errors} rps={:.1} p50_ms={:.2} p90_ms={:.2} p99_ms={:.2} max_ms={:.2}",
        all.len(),
        all.len() as f64 / elapsed,
        pct(0.50),
        pct(0.90),
        pct(0.99),
        pct(1.0),
    );
}

/// One GET; the status, or `None` when the connection failed.
fn get(addr: &str, target: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).ok()?;
    let head = std::str::from_utf8(&response[..response.len().min(64)]).ok()?;
    head.split_whitespace().nth(1)?.parse().ok()
}
