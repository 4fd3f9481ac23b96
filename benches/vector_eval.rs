//! The semantic half of hybrid search, measured without Meilisearch: for
//! each query of an `eval` query file, skills ranked by the best cosine
//! similarity of any of their documents to the query's vector (what
//! Meilisearch ranks with `semanticRatio: 1.0` and `distinct: skill`), scored
//! by top-1, top-3 and MRR like `eval`. Also measures embedding throughput by
//! re-embedding the corpus, optionally with other windows (`--max-tokens`).
//!
//! ```sh
//! cargo bench --bench vector_eval -- ARTIFACT_DIR [QUERIES] [--max-tokens N]...
//! ```
//!
//! ARTIFACT_DIR is a built `commits/<sha>/` or `latest/` with vectors;
//! QUERIES defaults to fixtures/eval/queries.json. The model comes from
//! `$AGENTFINDER_MODEL_DIR`, else this user's models
//! (where scripts/fetch-model.sh puts them).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use agentfinder_skills::embed::{embedding_text, SentenceModel};
use agentfinder_skills_reader::contract::{Document, Manifest, DOCUMENTS_FILE};
use agentfinder_skills_serve::eval::{scores, EvalQuery, EvalScores};
use candle_core::Device;

#[derive(serde::Deserialize)]
struct QueryFile {
    queries: Vec<EvalQuery>,
}

fn fail(message: String) -> ! {
    eprintln!("vector_eval: {message}");
    std::process::exit(2)
}

fn read_documents(dir: &Path) -> (Manifest, Vec<Document>) {
    let read = |name: &str| {
        std::fs::read(dir.join(name)).unwrap_or_else(|e| fail(format!("{}: {e}", name)))
    };
    let manifest: Manifest = serde_json::from_slice(&read("manifest.json"))
        .unwrap_or_else(|e| fail(format!("manifest.json: {e}")));
    let documents = read(DOCUMENTS_FILE)
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_slice(line).unwrap_or_else(|e| fail(format!("line {}: {e}", i + 1)))
        })
        .collect();
    (manifest, documents)
}

fn artifact_vector(doc: &Document) -> Option<Vec<f32>> {
    let values = doc.vectors.as_ref()?["default"]["embeddings"].as_array()?;
    values
        .iter()
        .map(|v| v.as_f64().map(|f| f as f32))
        .collect()
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Skills by best cosine of any of their documents, best first.
fn rank(query: &[f32], docs: &[Document], vectors: &[Vec<f32>]) -> Vec<(String, f32)> {
    let mut best: BTreeMap<&str, f32> = BTreeMap::new();
    for (doc, vector) in docs.iter().zip(vectors) {
        let score = dot(query, vector);
        let entry = best.entry(doc.skill.as_str()).or_insert(f32::MIN);
        *entry = entry.max(score);
    }
    let mut ranked: Vec<(String, f32)> =
        best.into_iter().map(|(s, v)| (s.to_string(), v)).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    ranked
}

struct Outcome {
    overall: EvalScores,
    by_kind: BTreeMap<String, EvalScores>,
}

fn evaluate(
    queries: &[EvalQuery],
    query_vectors: &[Vec<f32>],
    docs: &[Document],
    vectors: &[Vec<f32>],
) -> Outcome {
    let mut ranks = Vec::new();
    let mut no_answer = Vec::new();
    let mut kinds: BTreeMap<String, Vec<Option<usize>>> = BTreeMap::new();
    for (query, vector) in queries.iter().zip(query_vectors) {
        let ranked = rank(vector, docs, vectors);
        if query.expect.is_empty() {
            no_answer.push(ranked.first().map_or(0.0, |r| f64::from(r.1)));
            continue;
        }
        let position = ranked
            .iter()
            .position(|(skill, _)| query.expect.contains(skill));
        ranks.push(position);
        kinds.entry(query.kind.clone()).or_default().push(position);
    }
    Outcome {
        overall: scores(&ranks, &no_answer, &Default::default()),
        by_kind: kinds
            .into_iter()
            .map(|(k, r)| (k, scores(&r, &[], &Default::default())))
            .collect(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mut positional = Vec::new();
    let mut windows = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "--max-tokens" {
            let value = iter.next().and_then(|v| v.parse().ok());
            windows.push(value.unwrap_or_else(|| fail("--max-tokens takes a number".into())));
        } else {
            positional.push(arg.clone());
        }
    }
    let Some(dir) = positional.first().map(PathBuf::from) else {
        fail(
            "usage: cargo bench --bench vector_eval -- ARTIFACT_DIR [QUERIES] [--max-tokens N]..."
                .into(),
        )
    };
    let queries_path = positional
        .get(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("fixtures/eval/queries.json"));
    let model_dir =
        agentfinder_skills::embed::tool_model_dir("sentence-transformers/all-MiniLM-L6-v2")
            .unwrap_or_else(|| PathBuf::from(".cache/models/all-MiniLM-L6-v2"));

    let (manifest, docs) = read_documents(&dir);
    let Some(embedder) = manifest.embedder.clone() else {
        fail(format!("{} was built without vectors", dir.display()))
    };
    let stored: Vec<Vec<f32>> = docs
        .iter()
        .map(|d| artifact_vector(d).unwrap_or_else(|| fail(format!("{} has no vector", d.id))))
        .collect();
    let file: QueryFile = serde_json::from_slice(
        &std::fs::read(&queries_path)
            .unwrap_or_else(|e| fail(format!("{}: {e}", queries_path.display()))),
    )
    .unwrap_or_else(|e| fail(format!("{}: {e}", queries_path.display())));
    let model = SentenceModel::load(&model_dir, embedder.max_tokens, Device::Cpu)
        .unwrap_or_else(|e| fail(e.to_string()));
    let texts: Vec<String> = file.queries.iter().map(|q| q.query.clone()).collect();
    let query_vectors = model.embed(&texts).unwrap_or_else(|e| fail(e.to_string()));

    let skills = docs
        .iter()
        .map(|d| d.skill.as_str())
        .collect::<std::collections::BTreeSet<_>>();
    let answerable = file.queries.iter().filter(|q| !q.expect.is_empty()).count();
    println!(
        "corpus: {} documents, {} skills; queries: {answerable} answerable, {} without an answer",
        docs.len(),
        skills.len(),
        file.queries.len() - answerable
    );
    println!(
        "{:<22} {:>9} {:>6} {:>6} {:>6} {:>18}",
        "vectors", "docs/s", "top-1", "top-3", "MRR", "no-answer top cos"
    );
    let row = |label: &str, rate: Option<f64>, outcome: &Outcome| {
        let s = outcome.overall;
        println!(
            "{label:<22} {:>9} {:>6.3} {:>6.3} {:>6.3} {:>18.3}",
            rate.map_or("-".to_string(), |r| format!("{r:.1}")),
            s.top1,
            s.top3,
            s.mrr,
            s.no_answer_top_score
        );
    };
    let artifact = evaluate(&file.queries, &query_vectors, &docs, &stored);
    row(
        &format!("artifact ({} tokens)", embedder.max_tokens),
        None,
        &artifact,
    );

    for window in windows {
        let model = SentenceModel::load(&model_dir, window, Device::Cpu)
            .unwrap_or_else(|e| fail(e.to_string()));
        let texts: Vec<String> = docs.iter().map(embedding_text).collect();
        // Longest first, in batches of 32, as the embed stage batches them.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
        let started = Instant::now();
        let mut vectors = vec![Vec::new(); texts.len()];
        for batch in order.chunks(32) {
            let inputs: Vec<String> = batch.iter().map(|&i| texts[i].clone()).collect();
            let computed = model.embed(&inputs).unwrap_or_else(|e| fail(e.to_string()));
            for (&i, vector) in batch.iter().zip(computed) {
                vectors[i] = vector;
            }
        }
        let rate = texts.len() as f64 / started.elapsed().as_secs_f64();
        let outcome = evaluate(&file.queries, &query_vectors, &docs, &vectors);
        row(
            &format!("re-embedded ({window} tokens)"),
            Some(rate),
            &outcome,
        );
    }

    println!("\nby kind (artifact vectors):");
    for (kind, s) in &artifact.by_kind {
        println!(
            "  {kind:<16} n={:<3} top-1 {:.3}  top-3 {:.3}  MRR {:.3}",
            s.queries, s.top1, s.top3, s.mrr
        );
    }
}
