//! The reader binary's `serve`: the same service as the builder's, over
//! Meilisearch only. Without Meilisearch it says so with a 503 (TopGun's
//! `unavailable` for `format=topgun`); with one it answers from it.
//! Driven over loopback; the Meilisearch here is a fault-injection server
//! answering one search (a real one is exercised by the builder's tests).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// `agentfinder-skills-reader serve` on a free port; killed when dropped.
struct Served(Child, String);

impl Served {
    fn start(store: &std::path::Path, meili: Option<&str>) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_agentfinder-skills-reader"));
        command
            .args([
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--refresh",
                "0",
                "--store",
            ])
            .arg(store)
            .arg("--state")
            .arg(store.join("loaded.json"))
            .env_remove("MEILI_URL")
            .env_remove("MEILI_MASTER_KEY")
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(url) = meili {
            command.env("MEILI_URL", url);
        }
        let mut child = command.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        Self(child, addr)
    }

    /// `GET target`: the status and the JSON body.
    fn get(&self, target: &str) -> (u16, Value) {
        let mut stream = TcpStream::connect(&self.1).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        write!(
            stream,
            "GET {target} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
        let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("{target}: {e}: {body}"));
        (status, body)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
    }
}

#[test]
fn without_meilisearch_the_reader_serves_clear_unavailability() {
    let store = tempfile::tempdir().unwrap();
    let served = Served::start(store.path(), None);
    let (status, body) = served.get("/");
    assert_eq!((status, &body["engine"]), (200, &json!("none")), "{body}");
    let (status, body) = served.get("/search?q=merge+pdf");
    assert_eq!(status, 503, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("no Meilisearch is configured and this binary has no embedded engine"),
        "{body}"
    );
    let (status, body) = served.get("/search?q=merge+pdf&format=topgun");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "unavailable");
    assert_eq!(body["results"], json!([]));
    let (status, body) = served.get("/health");
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["answering"], false);
    assert_eq!(body["embedded"]["ready"], false);
    let (status, body) = served.get("/search?limit=3");
    assert_eq!(status, 400, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_meilisearch_the_reader_serves_its_answers() {
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
    let store = tempfile::tempdir().unwrap();
    let uri = meili.uri();
    let (status, body) = tokio::task::spawn_blocking(move || {
        let served = Served::start(store.path(), Some(&uri));
        // The start-up ping decides the engine; give it its moment.
        for _ in 0..50 {
            if served.get("/").1["engine"] == "meilisearch" {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        served.get("/search?q=merge+pdf")
    })
    .await
    .unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["engine"], "meilisearch");
    assert_eq!(body["results"][0]["displayName"], "pdf");
    assert_eq!(body["results"][0]["score"], 0.9);
}
