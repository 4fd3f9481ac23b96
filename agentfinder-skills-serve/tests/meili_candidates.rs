//! Meilisearch's candidates through the results pipeline, against an HTTP
//! test server that plays Meilisearch and answers what a real one would
//! in the cases a real one is hard to bring about (an index without an
//! embedder, a server that predates search-time `distinct`).

use std::time::Duration;

use agentfinder_skills_reader::meili::{MeiliConfig, RetryPolicy, Secret};
use agentfinder_skills_serve::pipeline::{self, Asked, Engine, COPIES_FETCHED};
use agentfinder_skills_serve::present::agentfinder::SearchResult;
use agentfinder_skills_serve::present::present;
use serde_json::json;
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const INDEX: &str = "hf_skills";

fn config(server: &MockServer) -> MeiliConfig {
    MeiliConfig {
        api_key: Some(Secret::new("test-master-key-123")),
        call_timeout: Duration::from_millis(500),
        retry: RetryPolicy::exponential(Duration::from_millis(20), 3),
        ..MeiliConfig::new(server.uri())
    }
}

/// `asked` of the server's index: its results, and its notice.
async fn search(server: &MockServer, asked: Asked) -> (Vec<SearchResult>, Option<String>) {
    let config = config(server);
    let engine = Engine::Meili {
        config: &config,
        index: INDEX,
    };
    let answer = present(pipeline::run(engine, &asked).await.unwrap(), None);
    (SearchResult::all(&answer), answer.notice)
}

#[tokio::test]
async fn hybrid_search_falls_back_to_keywords_when_the_index_has_no_embedder() {
    let server = MockServer::start().await;
    Mock::given(method("POST")).and(path("/indexes/hf_skills/search")).and(body_string_contains("hybrid"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "message": "Cannot find embedder with name `default`.", "code": "invalid_search_embedder",
            "type": "invalid_request", "link": ""
        })))
        .mount(&server).await;
    Mock::given(method("POST")).and(path("/indexes/hf_skills/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "hits": [{"id": "x", "repo": "o/r", "skill": "gif", "kind": "skill", "_rankingScore": 0.8}],
            "query": "q", "processingTimeMs": 1, "limit": 5, "offset": 0, "estimatedTotalHits": 1
        })))
        .mount(&server).await;
    let asked = Asked {
        text: "looping gif".into(),
        limit: 5,
        semantic_ratio: Some(0.5),
        ..Asked::default()
    };
    let (results, notice) = search(&server, asked).await;
    assert!(
        notice.as_deref().is_some_and(|r| r.contains("embedder")),
        "{notice:?}"
    );
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].metadata.ranking_score, 0.8);
    let bodies: Vec<String> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    assert!(
        bodies[0].contains("\"semanticRatio\":0.5")
            && bodies[0].contains("\"showRankingScore\":true"),
        "{}",
        bodies[0]
    );
    assert!(!bodies[1].contains("hybrid"));
}

/// A server before v1.14 rejects search-time `distinct`: the search is sent
/// again without it, asking for more hits, and grouped here, one per SKILL.md
/// (two skills sharing a folder name stay two).
#[tokio::test]
async fn a_server_without_search_time_distinct_is_grouped_in_the_client() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/indexes/hf_skills/search"))
        .and(body_string_contains("distinct"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "message": "Unknown field `distinct`: expected one of `q`, `offset`, `limit`",
            "code": "bad_request", "type": "invalid_request", "link": ""
        })))
        .mount(&server)
        .await;
    let hit = |id: &str, path: &str, score: f64| {
        json!({"id": id, "repo": "o/r", "skill": "pdf", "path": path, "kind": "skill_section",
               "skill_key": format!("o/r:{path}"), "_rankingScore": score})
    };
    Mock::given(method("POST"))
        .and(path("/indexes/hf_skills/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "hits": [
                hit("a1", "skills/pdf/SKILL.md", 0.9),
                hit("a2", "skills/pdf/SKILL.md", 0.8),
                hit("b1", "plugins/x/skills/pdf/SKILL.md", 0.7),
                hit("a3", "skills/pdf/SKILL.md", 0.6),
            ],
            "query": "q", "processingTimeMs": 1, "limit": 20, "offset": 0, "estimatedTotalHits": 4
        })))
        .mount(&server)
        .await;
    let asked = Asked {
        text: "merge pdf".into(),
        limit: 2,
        ..Asked::default()
    };
    let (results, _) = search(&server, asked).await;
    let ids: Vec<&str> = results.iter().map(|r| r.identifier.as_str()).collect();
    assert_eq!(ids, ["o-r:a1", "o-r:b1"]);
    let bodies: Vec<serde_json::Value> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["distinct"], "skill_key");
    assert!(bodies[1].get("distinct").is_none());
    // Hits for copies to fold into (4 a result), ten times over to group.
    let asked = 2 * COPIES_FETCHED * 10;
    assert_eq!(bodies[1]["limit"], asked, "more hits asked for, to group");
    assert_eq!(bodies[0]["limit"], 2 * COPIES_FETCHED);
}
