//! A Meilisearch that answers searches, for the tests of what is done with
//! its answers (a real one is exercised by the gated tests in
//! meili_real.rs): it says every attribute is searchable, and answers each
//! query of a multi-search with the same hits, as many as the query asks
//! for. A count (a query asking for none) totals the hits that hold its
//! word as written in the fields it searches, so each count differs.

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
                let total = if limit == 0 {
                    self.holding(query)
                } else {
                    self.0.len()
                };
                json!({
                    "indexUid": query["indexUid"], "query": query["q"],
                    "hits": self.0.iter().take(limit).collect::<Vec<_>>(),
                    "processingTimeMs": 1, "limit": limit, "offset": 0,
                    "estimatedTotalHits": total
                })
            })
            .collect();
        ResponseTemplate::new(200).set_body_json(json!({ "results": results }))
    }
}

impl Answers {
    /// The hits holding `query`'s word (`"word"`; all of them for `""`)
    /// in its `attributesToSearchOn` (any field without).
    fn holding(&self, query: &Value) -> usize {
        let word = query["q"]
            .as_str()
            .unwrap_or("")
            .trim_matches('"')
            .to_lowercase();
        if word.is_empty() {
            return self.0.len();
        }
        let fields: Option<Vec<&str>> = query["attributesToSearchOn"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect());
        let holds = |text: &str| {
            text.split(|c: char| !c.is_alphanumeric())
                .any(|t| t.to_lowercase() == word)
        };
        self.0
            .iter()
            .filter(|hit| {
                hit.as_object().is_some_and(|doc| {
                    doc.iter()
                        .filter(|(name, _)| {
                            fields.as_ref().is_none_or(|f| f.contains(&name.as_str()))
                        })
                        .any(|(_, value)| value.as_str().is_some_and(holds))
                })
            })
            .count()
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
