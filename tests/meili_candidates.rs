//! Meilisearch's candidates through the results pipeline, against an HTTP
//! test server that answers what a real one would in the cases a real one
//! is hard to bring about (an index without an embedder), or answers every
//! query with the same hits, to see what the pipeline makes of them.

mod common;

use std::time::Duration;

use agentfinder_skills_reader::meili::{MeiliConfig, RetryPolicy, Secret};
use agentfinder_skills_serve::pipeline::{self, Asked, Engine, Ranked, SearchError};
use agentfinder_skills_serve::present::agentfinder::SearchResult;
use agentfinder_skills_serve::present::present;
use common::meili_answers::{mount_answers, mount_searchable, multi_searches};
use serde_json::{json, Value};
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A new index name for each search: what the pipeline remembers of an
/// index is kept per server and index, and wiremock hands out its
/// servers' addresses again from test to test.
fn index_name() -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("skills_{}_{n}", std::process::id())
}

fn config(server: &MockServer) -> MeiliConfig {
    MeiliConfig {
        api_key: Some(Secret::new("test-master-key-123")),
        call_timeout: Duration::from_millis(500),
        retry: RetryPolicy::exponential(Duration::from_millis(20), 3),
        ..MeiliConfig::new(server.uri())
    }
}

/// `asked` of `index`: its results, and its notice.
async fn search_in(
    server: &MockServer,
    index: &str,
    asked: Asked,
) -> (Vec<SearchResult>, Option<String>) {
    let answer = present(run_in(server, index, &asked).await.unwrap(), None);
    (
        SearchResult::all(&answer),
        answer.notice.map(|n| n.into_string()),
    )
}

/// `asked` of `index`, through the results pipeline.
async fn run_in(server: &MockServer, index: &str, asked: &Asked) -> Result<Ranked, SearchError> {
    let config = config(server);
    let engine = Engine::Meili {
        config: &config,
        index,
    };
    pipeline::run(engine, asked).await
}

/// `asked` of an index of its own.
async fn search(server: &MockServer, asked: Asked) -> (Vec<SearchResult>, Option<String>) {
    search_in(server, &index_name(), asked).await
}

fn hybrid(query: &Value) -> Option<&Value> {
    query.get("hybrid")
}

#[tokio::test]
async fn hybrid_search_falls_back_to_keywords_when_the_index_has_no_embedder() {
    let server = MockServer::start().await;
    mount_searchable(&server).await;
    Mock::given(method("POST"))
        .and(path("/multi-search"))
        .and(body_string_contains("hybrid"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "message": "Inside `.queries[3]`: Cannot find embedder with name `default`.",
            "code": "invalid_search_embedder", "type": "invalid_request", "link": ""
        })))
        .mount(&server)
        .await;
    mount_answers(
        &server,
        vec![
            json!({"id": "x", "repo": "o/r", "skill": "gif", "skill_name": "gif",
                    "content": "a looping gif", "kind": "skill", "_rankingScore": 0.8}),
        ],
    )
    .await;
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
    assert_eq!(results[0].display_name, "gif");
    let bodies = multi_searches(&server).await;
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    let nearest: Vec<&Value> = bodies[0]["queries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(hybrid)
        .collect();
    assert_eq!(
        nearest,
        [&json!({"embedder": "default", "semanticRatio": 1.0})]
    );
    assert!(bodies[1]["queries"]
        .as_array()
        .unwrap()
        .iter()
        .all(|q| hybrid(q).is_none()));
}

/// Meilisearch finds the candidates; they are ranked here by the words
/// they hold, one result per SKILL.md (two skills sharing a folder name
/// stay two).
#[tokio::test]
async fn candidates_are_ranked_by_their_words_one_result_per_skill_md() {
    let server = MockServer::start().await;
    let hit = |id: &str, path: &str, content: &str| {
        json!({"id": id, "repo": "o/r", "skill": "pdf", "skill_name": "pdf", "path": path,
               "kind": "skill_section", "content": content,
               "skill_key": format!("o/r:{path}"), "_rankingScore": 0.5})
    };
    mount_answers(
        &server,
        vec![
            hit("a1", "skills/pdf/SKILL.md", "pdf tools"),
            hit("a2", "skills/pdf/SKILL.md", "more pdf tools"),
            hit("b1", "plugins/x/skills/pdf/SKILL.md", "merge pdf files"),
            hit("a3", "skills/pdf/SKILL.md", "pdf"),
        ],
    )
    .await;
    let asked = Asked {
        text: "merge the pdf".into(),
        limit: 2,
        ..Asked::default()
    };
    let (results, _) = search(&server, asked).await;
    let ids: Vec<&str> = results.iter().map(|r| r.identifier.as_str()).collect();
    // Meilisearch listed a1 first; b1 holds both words, and a3 is the
    // section of the other SKILL.md where "pdf" weighs most (the shortest).
    assert_eq!(ids, ["o-r:b1", "o-r:a3"]);
    let bodies = multi_searches(&server).await;
    assert_eq!(bodies.len(), 1);
    let queries = bodies[0]["queries"].as_array().unwrap();
    let asked_for = |q: &str, counting: bool| {
        queries
            .iter()
            .filter(|x| x["q"] == q && (x["limit"] == 0) == counting)
            .count()
    };
    // Each word as written (not the stop word) and the whole query; the
    // documents in the index, and each word's holders in each group of
    // body fields.
    assert_eq!(asked_for("\"merge\"", false), 1);
    assert_eq!(asked_for("\"the\"", false), 0);
    assert_eq!(asked_for("merge the pdf", false), 1);
    assert_eq!(asked_for("", true), 1);
    assert_eq!(asked_for("\"pdf\"", true), 4);
    let fields: Vec<&Value> = queries
        .iter()
        .filter(|x| x["q"] == "\"pdf\"" && x["limit"] == 0)
        .map(|x| &x["attributesToSearchOn"])
        .collect();
    assert_eq!(
        fields[1],
        &json!(["skill_description", "marketplace_description"])
    );
    assert!(queries.iter().all(|q| q.get("distinct").is_none()));
}

/// Counts are searches of their own: a word already counted in an index,
/// and the index's size and fields, are not asked again for a while; a
/// search refused for the fields it searched reads them again.
#[tokio::test]
async fn words_already_counted_are_not_counted_again() {
    let server = MockServer::start().await;
    mount_answers(
        &server,
        vec![
            json!({"id": "a", "repo": "o/r", "skill": "pdf", "skill_name": "pdf",
                    "content": "merge pdf files", "kind": "skill", "skill_key": "o/r:a"}),
        ],
    )
    .await;
    let ask = |text: &str| Asked {
        text: text.into(),
        limit: 3,
        ..Asked::default()
    };
    let counts = |body: &Value| -> Vec<String> {
        body["queries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|q| q["limit"] == 0)
            .map(|q| q["q"].as_str().unwrap().to_string())
            .collect()
    };
    let index = index_name();
    search_in(&server, &index, ask("merge pdf")).await;
    search_in(&server, &index, ask("merge pdf files")).await;
    let bodies = multi_searches(&server).await;
    assert_eq!(
        counts(&bodies[0]).len(),
        1 + 2 * 4,
        "{:?}",
        counts(&bodies[0])
    );
    assert_eq!(counts(&bodies[1]), ["\"files\""; 4]);
    let settings_read = || async {
        server
            .received_requests()
            .await
            .unwrap()
            .iter()
            .filter(|r| r.url.path().ends_with("/searchable-attributes"))
            .count()
    };
    assert_eq!(settings_read().await, 1);
    // Refused for the fields it counts in (the index changed): the fields
    // are read again and the search asked once more.
    Mock::given(method("POST"))
        .and(path("/multi-search"))
        .and(body_string_contains("refused"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "message": "Inside `.queries[9]`: Attribute `path` is not searchable.",
            "code": "invalid_search_attributes_to_search_on", "type": "invalid_request", "link": ""
        })))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    let (results, _) = search_in(&server, &index, ask("refused pdf")).await;
    assert_eq!(results.len(), 1);
    assert_eq!(settings_read().await, 2);
    let bodies = multi_searches(&server).await;
    assert_eq!(counts(bodies.last().unwrap()).len(), 1 + 2 * 4);
}

/// Fewer answers than searches is an error, not counts of zero; and only
/// a query's first 12 words are searched.
#[tokio::test]
async fn a_short_answer_is_an_error_and_long_queries_search_twelve_words() {
    let server = MockServer::start().await;
    mount_searchable(&server).await;
    Mock::given(method("POST"))
        .and(path("/multi-search"))
        .and(body_string_contains("short"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": []})))
        .with_priority(1)
        .mount(&server)
        .await;
    mount_answers(
        &server,
        vec![json!({"id": "a", "skill_name": "pdf", "content": "pdf"})],
    )
    .await;
    let index = index_name();
    let asked = |text: &str| Asked {
        text: text.into(),
        limit: 3,
        ..Asked::default()
    };
    let refused = run_in(&server, &index, &asked("short answer")).await;
    assert!(
        refused.is_err_and(|e| e.to_string().contains("0 answers to")),
        "a short answer is an error"
    );
    let long = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen";
    search_in(&server, &index, asked(long)).await;
    let bodies = multi_searches(&server).await;
    let words: Vec<&str> = bodies.last().unwrap()["queries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["limit"] != 0 && q["q"].as_str().is_some_and(|q| q.starts_with('"')))
        .filter_map(|q| q["q"].as_str())
        .collect();
    assert_eq!(words.len(), 12, "{words:?}");
    assert_eq!(words[11], "\"twelve\"");
}
