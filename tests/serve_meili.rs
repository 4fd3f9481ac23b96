//! `serve` with a Meilisearch it answers from, and with nothing to answer
//! from at all. Driven over loopback; the Meilisearch here is a
//! fault-injection server answering one search (a real one is exercised
//! by the gated tests in meili_real.rs).

mod common;

use std::time::Duration;

use common::meili_answers::{mount_answers, mount_searchable};
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
    mount_answers(
        &meili,
        vec![
            json!({"id": "pdf", "skill_key": "s:o/r:skills/pdf/SKILL.md", "repo": "o/r",
                    "skill": "pdf", "skill_name": "pdf", "path": "skills/pdf/SKILL.md",
                    "kind": "skill", "url": "https://github.com/o/r/blob/c/skills/pdf/SKILL.md",
                    "_rankingScore": 0.9}),
        ],
    )
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
    // Ranked here: the best of the candidates scores 1.
    assert_eq!(body["results"][0]["score"], 1.0);
    assert_eq!(body["results"][0]["metadata"]["rankingScore"], 1.0);
}

/// `skills` built into `work/artifacts` (no vectors), for the embedded
/// engine to answer from.
fn built(work: &std::path::Path) -> common::GitRepo {
    let repo = common::repo_of(
        "https://github.com/o/skills.git",
        &[(
            "pdf",
            "Merge and split PDF files",
            "# Merge\n\nJoin PDFs.\n",
        )],
    );
    let out = common::run(
        work,
        &[
            "build",
            "--no-embed",
            "--source",
            repo.path().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    repo
}

#[tokio::test(flavor = "multi_thread")]
async fn a_meilisearch_that_hangs_on_search_leaves_time_for_the_embedded_engine() {
    let meili = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/health"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"status": "available"})))
        .mount(&meili)
        .await;
    // It answers health and index reads but never a search.
    mount_searchable(&meili).await;
    Mock::given(method("POST"))
        .and(path("/multi-search"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(60)))
        .mount(&meili)
        .await;
    let work = tempfile::tempdir().unwrap();
    let _repo = built(work.path());
    let uri = meili.uri();
    let answers = tokio::task::spawn_blocking(move || {
        let store = work.path().join("artifacts");
        let state = work.path().join("loaded.json");
        let served = Server::start_with(
            work.path(),
            &work.path().join("cache"),
            &[
                "--store",
                store.to_str().unwrap(),
                "--state",
                state.to_str().unwrap(),
                "--request-timeout",
                "4",
            ],
            &[("MEILI_URL", &uri)],
        );
        (0..5)
            .map(|_| {
                let started = std::time::Instant::now();
                let (status, _, body) = served.json("/search?q=merge+pdf");
                (status, body, started.elapsed())
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (status, body, took) in &answers {
        assert_eq!(*status, 200, "{body}");
        assert_eq!(body["engine"], "embedded", "{body}");
        assert_eq!(body["results"][0]["displayName"], "pdf");
        assert!(*took < Duration::from_secs(4), "{took:?}");
    }
    assert!(
        answers[0].1["notice"]
            .as_str()
            .unwrap()
            .contains("no answer within 2.0 s"),
        "{}",
        answers[0].1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_query_meilisearch_refuses_does_not_mark_it_down() {
    let meili = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/health"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"status": "available"})))
        .mount(&meili)
        .await;
    mount_searchable(&meili).await;
    Mock::given(method("POST"))
        .and(path("/multi-search"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "message": "Inside `.queries[0]`: Attribute `source` is not filterable.", "code": "invalid_search_filter",
            "type": "invalid_request", "link": ""
        })))
        .mount(&meili)
        .await;
    let work = tempfile::tempdir().unwrap();
    let _repo = built(work.path());
    let uri = meili.uri();
    let (first, engine_after) = tokio::task::spawn_blocking(move || {
        let served = start(work.path(), Some(&uri));
        for _ in 0..50 {
            if served.json("/").2["engine"] == "meilisearch" {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let (_, _, first) = served.json("/search?q=merge+pdf&source=o-skills");
        let (_, _, about) = served.json("/");
        (first, about["engine"].clone())
    })
    .await
    .unwrap();
    assert_eq!(first["engine"], "embedded", "{first}");
    assert!(
        first["notice"].as_str().unwrap().contains("not filterable"),
        "{first}"
    );
    assert_eq!(engine_after, "meilisearch", "a refused query leaves it up");
}
