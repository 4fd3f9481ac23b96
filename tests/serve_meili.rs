//! `serve` with a Meilisearch it answers from, and with nothing to answer
//! from at all. Driven over loopback; the Meilisearch here is a
//! fault-injection server answering one search (a real one is exercised
//! by the gated tests in meili_real.rs).

mod common;

use std::time::Duration;

use common::server::Server;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// `serve` over `store` (and Meilisearch at `meili`, when given), its
/// loaded-state file in the work folder.
fn start(work: &std::path::Path, meili: Option<&str>) -> Server {
    let store = work.join("artifacts");
    let state = work.join("loaded.json");
    let args = [
        "--store",
        store.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ];
    let env: Vec<(&str, &str)> = meili.map(|url| ("MEILI_URL", url)).into_iter().collect();
    Server::start_with(work, &work.join("cache"), &args, &env)
}

#[test]
fn with_nothing_built_and_no_meilisearch_every_answer_says_why() {
    let work = tempfile::tempdir().unwrap();
    let served = start(work.path(), None);
    let (status, _, body) = served.json("/search?q=merge+pdf");
    assert_eq!(status, 503, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("no engine can answer: "),
        "{body}"
    );
    let (status, _, body) = served.json("/search?q=merge+pdf&format=topgun");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "unavailable");
    assert_eq!(body["results"], json!([]));
    let (status, _, body) = served.json("/health");
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["answering"], false);
    assert_eq!(body["embedded"]["ready"], false);
    let (status, _, body) = served.json("/search?limit=3");
    assert_eq!(status, 400, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_meilisearch_serve_answers_from_it() {
    let meili = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/health"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"status": "available"})))
        .mount(&meili)
        .await;
    Mock::given(method("POST"))
        .and(path("/indexes/hf_skills/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "hits": [{"id": "pdf", "skill_key": "s:o/r:skills/pdf/SKILL.md", "repo": "o/r",
                      "skill": "pdf", "skill_name": "pdf", "path": "skills/pdf/SKILL.md",
                      "kind": "skill", "url": "https://github.com/o/r/blob/c/skills/pdf/SKILL.md",
                      "_rankingScore": 0.9}],
            "query": "q", "processingTimeMs": 1, "limit": 10, "offset": 0, "estimatedTotalHits": 1
        })))
        .mount(&meili)
        .await;
    let work = tempfile::tempdir().unwrap();
    let uri = meili.uri();
    let (status, body) = tokio::task::spawn_blocking(move || {
        let served = start(work.path(), Some(&uri));
        // The start-up ping decides the engine; give it its moment.
        for _ in 0..50 {
            if served.json("/").2["engine"] == "meilisearch" {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let (status, _, body) = served.json("/search?q=merge+pdf");
        (status, body)
    })
    .await
    .unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["engine"], "meilisearch");
    assert_eq!(body["results"][0]["displayName"], "pdf");
    assert_eq!(body["results"][0]["score"], 0.9);
    assert_eq!(body["results"][0]["metadata"]["rankingScore"], 0.9);
}
