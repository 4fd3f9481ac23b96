//! `serve`, driven over loopback: the real binary, real HTTP requests (raw,
//! so a query string can hold what a client library would refuse to send).

mod common;

use std::time::Duration;

use common::server::Server;
use common::*;
use serde_json::Value;

fn built() -> (GitRepo, tempfile::TempDir, tempfile::TempDir) {
    let mut repo = GitRepo::with_origin("https://github.com/o/skills.git");
    for (folder, description) in [
        ("pdf", "Merge and split PDF files"),
        ("gif", "Make a looping animated GIF"),
        ("deploy", "Deploy a web service to the cloud"),
    ] {
        repo.write(
            &format!("skills/{folder}/SKILL.md"),
            skill(folder, description, "# Usage\n\nRun it.\n"),
        );
    }
    repo.commit("skills");
    let work = tempfile::tempdir().unwrap();
    let out = run(
        work.path(),
        &[
            "build",
            "--no-embed",
            "--source",
            repo.path().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    (repo, work, tempfile::tempdir().unwrap())
}

#[test]
fn serve_searches_the_store_it_is_given_not_its_folders_default() {
    let (_repo, work, cache) = built();
    let elsewhere = tempfile::tempdir().unwrap();
    let store = work.path().join("artifacts");
    let server = Server::start_with(
        elsewhere.path(),
        cache.path(),
        &["--store", store.to_str().unwrap()],
        &[],
    );
    let (status, _, body) = server.json("/search?q=animated+gif&limit=1");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"][0]["displayName"], "gif");
    let (_, _, health) = server.json("/health");
    assert_eq!(health["embedded"]["ready"], true, "{health:#}");
}

#[test]
fn search_health_and_bad_input_over_http() {
    let (_repo, work, cache) = built();
    let server = Server::start(work.path(), cache.path(), &[]);

    let (status, head, body) = server.json("/search?q=animated+gif&limit=2");
    assert_eq!(status, 200, "{body}");
    assert!(head.contains("x-search-engine: embedded"));
    assert_eq!(body["engine"], "embedded");
    let results = body["results"].as_array().unwrap();
    assert_eq!(results[0]["displayName"], "gif");
    assert_eq!(results[0]["mediaType"], "application/ai-skill");
    assert_eq!(results[0]["score"], results[0]["metadata"]["rankingScore"]);
    assert!(results.len() <= 2);

    let (status, _, body) = server.json("/search?q=pdf&source=nope");
    assert_eq!(
        (status, body["results"].as_array().unwrap().len()),
        (200, 0)
    );
    let (_, _, body) = server.json("/search?q=pdf&source=o-skills");
    assert_eq!(body["results"][0]["displayName"], "pdf");

    // How good the match is, on an absolute scale, beside the results.
    assert_eq!(body["no_good_match"], false, "{body:#}");
    let (_, _, weak) = server.json("/search?q=split+my+monthly+household+budget");
    assert_eq!(weak["no_good_match"], true, "{weak:#}");
    assert_eq!(
        weak["match"]["rule"],
        "keywords only, cards not compared (no model): the first result holds 25% of the query's words (under 50%)"
    );
    let (_, _, weak) = server.json("/search?q=split+my+monthly+household+budget&format=topgun");
    assert!(weak["results"].as_array().unwrap().is_empty(), "{weak:#}");
    assert!(
        weak["reason"]
            .as_str()
            .unwrap()
            .starts_with("no good match: keywords only"),
        "{weak:#}"
    );

    let (status, _, adapter) = server.json("/search?q=deploy&format=topgun");
    assert_eq!(status, 200);
    assert_eq!(
        adapter.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["latency_ms", "reason", "registry", "results", "status"]
    );
    assert_eq!(adapter["status"], "ok");
    assert_eq!(adapter["results"][0]["name"], "deploy");

    // Every bad input is a JSON error with a 4xx.
    let long = format!("/search?q={}", "a".repeat(10_000));
    for (target, expected) in [
        (b"/search".to_vec(), 400),
        (b"/search?q=".to_vec(), 400),
        (b"/search?q=%20%20".to_vec(), 400),
        (b"/search?q=pdf&limit=0".to_vec(), 400),
        (b"/search?q=pdf&limit=-3".to_vec(), 400),
        (b"/search?q=pdf&format=xml".to_vec(), 400),
        (b"/search?q=%FF%FEpdf".to_vec(), 400),
        (long.into_bytes(), 414),
        (b"/nowhere".to_vec(), 404),
    ] {
        let (status, _, body) = server.get(&target);
        assert_eq!(
            status,
            expected,
            "{}: {body}",
            String::from_utf8_lossy(&target[..target.len().min(40)])
        );
        let error: Value = serde_json::from_str(&body).unwrap();
        assert!(error["error"].is_string(), "{body}");
    }
    // 100 KB is past what the HTTP layer reads of a request line (64 KB):
    // refused with 414 before the service sees it.
    let (status, _, _) = server.get(format!("/search?q={}", "a".repeat(100_000)).as_bytes());
    assert_eq!(status, 414);
    // A huge limit is capped, not refused.
    let (status, _, body) = server.json("/search?q=skill&limit=100000");
    assert_eq!(status, 200);
    assert!(body["results"].as_array().unwrap().len() <= 100);

    let (status, _, health) = server.json("/health");
    assert_eq!(status, 200);
    assert_eq!(health["engine"], "embedded");
    assert_eq!(health["configured"], false);
    assert_eq!(health["embedded"]["documents"], 6);
    assert_eq!(health["embedded"]["sources"][0], "o-skills");
    let (_, _, about) = server.json("/");
    assert!(about["endpoints"]["GET /search"].is_object());

    let status = server.stop();
    assert!(status.success(), "{status:?}");
}

#[test]
fn meilisearch_down_is_answered_by_the_embedded_engine_and_no_secret_leaks() {
    let (_repo, work, cache) = built();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let url = format!("http://admin:hunter2pw@127.0.0.1:{port}");
    let server = Server::start(
        work.path(),
        cache.path(),
        &[
            ("MEILI_URL", &url),
            ("MEILI_MASTER_KEY", "sekret-master-key-42"),
        ],
    );
    std::thread::sleep(Duration::from_millis(500));
    for target in [
        "/search?q=pdf",
        "/search?q=pdf&format=topgun",
        "/health",
        "/",
    ] {
        let (status, head, body) = server.get(target.as_bytes());
        assert!(status == 200, "{target}: {status} {body}");
        for secret in ["hunter2pw", "sekret-master-key-42"] {
            assert!(
                !body.contains(secret) && !head.contains(secret),
                "{target} leaks: {body}"
            );
        }
    }
    let (_, head, body) = server.json("/search?q=pdf");
    assert!(head.contains("x-search-engine: embedded"));
    assert_eq!(body["engine"], "embedded");
    assert!(
        body["notice"].as_str().unwrap().contains("Meilisearch"),
        "{body}"
    );
    assert_eq!(body["results"][0]["displayName"], "pdf");
    let (_, _, health) = server.json("/health");
    assert_eq!(
        (health["configured"].clone(), health["reachable"].clone()),
        (Value::from(true), Value::from(false))
    );
    assert_eq!(health["engine"], "embedded");
    let mut server = server;
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status();
    let status = server.child.wait().unwrap();
    assert!(status.success(), "SIGTERM: {status:?}");
    // The reader thread has the rest once the pipe closes.
    let mut child_stderr = String::new();
    for _ in 0..50 {
        child_stderr = server.stderr.lock().unwrap().clone();
        if child_stderr.contains("serve: stopped") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(child_stderr.contains("Meilisearch"), "{child_stderr}");
    for secret in ["hunter2pw", "sekret-master-key-42"] {
        assert!(
            !child_stderr.contains(secret),
            "the log leaks: {child_stderr}"
        );
    }
}

/// The adapter file TopGun reads documents a request; that request, made
/// to a running `serve`, returns the adapter object it promises.
#[test]
fn the_topgun_adapter_file_describes_what_serve_returns() {
    let text = std::fs::read_to_string(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/topgun-adapter.md"),
    )
    .unwrap();
    let url = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("- **Request URL:** `"))
        .and_then(|rest| rest.strip_suffix('`'))
        .expect("a Request URL line");
    assert!(
        url.contains("{query}") && url.starts_with("http://127.0.0.1:8080/"),
        "{url}"
    );
    assert!(text.contains("- **Timeout:** 8 s"));
    assert!(text.contains("- **Registry name:** `agentfinder`"));
    let (_repo, work, cache) = built();
    let server = Server::start(work.path(), cache.path(), &[]);
    let target = url
        .replace("http://127.0.0.1:8080", "")
        .replace("{query}", "merge%20pdf%20files");
    let (status, _, adapter) = server.json(&target);
    assert_eq!(status, 200);
    assert_eq!(adapter["registry"], "agentfinder");
    assert_eq!(adapter["status"], "ok");
    let result = &adapter["results"][0];
    assert_eq!(result["name"], "pdf");
    assert_eq!(result.as_object().unwrap().len(), 10);
    assert_eq!(
        result["raw_metadata"]["envelope"],
        agentfinder_skills_serve::present::topgun::UNTRUSTED_OPEN
    );
}

/// A POST to `/mcp` of `payload` (a JSON-RPC message) in `session`; the
/// status, the headers and the body.
fn mcp_post(server: &Server, payload: &str, session: Option<&str>) -> (u16, String, String) {
    let mut request = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\n".to_string();
    if let Some(session) = session {
        request.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
    }
    request.push_str(&format!(
        "Content-Length: {}\r\n\r\n{payload}",
        payload.len()
    ));
    server.raw(request.as_bytes())
}

#[test]
fn sigterm_stops_serve_while_an_mcp_client_holds_a_stream_open() {
    let (_repo, work, cache) = built();
    let server = Server::start(work.path(), cache.path(), &[]);
    let (status, head, _) = mcp_post(
        &server,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        None,
    );
    assert_eq!(status, 200, "{head}");
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("a session id")
        .trim()
        .to_string();
    mcp_post(
        &server,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        Some(&session),
    );
    // The client's standalone stream: a GET held open.
    let mut stream = std::net::TcpStream::connect(&server.addr).unwrap();
    use std::io::Write;
    write!(
        stream,
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let started = std::time::Instant::now();
    let status = server.stop();
    assert!(status.success(), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    drop(stream);
}

#[test]
fn health_answers_from_what_serve_holds_without_reading_the_store() {
    let (_repo, work, cache) = built();
    let server = Server::start(work.path(), cache.path(), &[]);
    let (status, _, before) = server.json("/search?q=pdf");
    assert_eq!(status, 200, "{before}");
    let mut health = Value::Null;
    for _ in 0..100 {
        health = server.json("/health").2;
        if health["checked_seconds_ago"].is_u64() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(health["store_readable"], true, "{health:#}");
    // The store goes away: health still answers from what was checked and
    // opened, and searches go on.
    std::fs::rename(work.path().join("artifacts"), work.path().join("gone")).unwrap();
    for _ in 0..20 {
        let (status, _, now) = server.json("/health");
        assert_eq!(status, 200, "{now:#}");
        assert_eq!(now["store_readable"], true, "{now:#}");
        assert_eq!(now["embedded"]["ready"], true);
    }
    let (status, _, after) = server.json("/search?q=pdf");
    assert_eq!(
        (status, &after["results"][0]["displayName"]),
        (200, &before["results"][0]["displayName"])
    );
}
