//! A Meilisearch that answers searches, for the tests of what is done with
//! its answers (a real one is exercised by the gated tests in
//! meili_real.rs): it says every attribute is searchable, and answers each
//! query of a multi-search with the same hits, as many as the query asks
//! for (none for a count, whose total is the hits').

use serde_json::{json, Value};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The multi-search answers.
struct Answers(Vec<Value>);

impl Respond for Answers {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let queries = body["queries"].as_array().cloned().unwrap_or_default();
        let results: Vec<Value> = queries
            .iter()
            .map(|query| {
                let limit = query["limit"].as_u64().unwrap_or(20) as usize;
                json!({
                    "indexUid": query["indexUid"], "query": query["q"],
                    "hits": self.0.iter().take(limit).collect::<Vec<_>>(),
                    "processingTimeMs": 1, "limit": limit, "offset": 0,
                    "estimatedTotalHits": self.0.len()
                })
            })
            .collect();
        ResponseTemplate::new(200).set_body_json(json!({ "results": results }))
    }
}

/// Mounts on `server`: every index searches every attribute.
pub async fn mount_searchable(server: &MockServer) {
    Mock::given(method("GET"))
        .and(path_regex(
            "^/indexes/[^/]+/settings/searchable-attributes$",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!(["*"])))
        .mount(server)
        .await;
}

/// Mounts on `server`: searchable attributes, and multi-searches answered
/// with `hits`.
pub async fn mount_answers(server: &MockServer, hits: Vec<Value>) {
    mount_searchable(server).await;
    Mock::given(method("POST"))
        .and(path("/multi-search"))
        .respond_with(Answers(hits))
        .mount(server)
        .await;
}

/// The JSON bodies of the multi-searches `server` received.
pub async fn multi_searches(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter(|r| r.url.path() == "/multi-search")
        .filter_map(|r| serde_json::from_slice(&r.body).ok())
        .collect()
}
