//! The JSON Schemas in docs/schemas describe what the code writes: outputs
//! of the TopGun contract are validated against them, and the schemas reject
//! what the contract forbids.

mod common;

use agentfinder_skills_serve::present::topgun::{
    normalize, AdapterResponse, Candidate, Details, FindOutput, RegistryStatus,
};
use serde_json::{json, Value};

fn schema(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/schemas")
        .join(name);
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// A validator for `name`, its `$ref`s to the unified result schema (the
/// only file the schemas refer to) replaced by that schema.
fn validator(name: &str) -> jsonschema::Validator {
    let mut result = schema("topgun-unified-result.schema.json");
    result.as_object_mut().unwrap().remove("$id");
    result.as_object_mut().unwrap().remove("$schema");
    let mut root = schema(name);
    inline_refs(&mut root, &result);
    jsonschema::validator_for(&root).unwrap()
}

fn inline_refs(value: &mut Value, result: &Value) {
    match value {
        Value::Object(map)
            if map.get("$ref") == Some(&json!("topgun-unified-result.schema.json")) =>
        {
            *value = result.clone();
        }
        Value::Object(map) => map.values_mut().for_each(|v| inline_refs(v, result)),
        Value::Array(items) => items.iter_mut().for_each(|v| inline_refs(v, result)),
        _ => {}
    }
}

fn assert_valid(validator: &jsonschema::Validator, value: &Value) {
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{value:#}");
}

fn answer() -> (AdapterResponse, usize) {
    let candidates = vec![
        Candidate {
            name: Some("pdf".into()),
            source_registry: None,
            details: Details {
                description: Some("Merge PDFs".into()),
                last_updated: Some("2026-01-02T03:04:05Z".into()),
                content_sha: Some("a".repeat(64)),
                ..Details::default()
            },
            install_url: Some("http://insecure.example/pdf".into()),
            raw_metadata: json!({"license": "MIT"}).as_object().cloned().unwrap(),
        },
        Candidate {
            name: Some("gif".into()),
            install_url: Some("https://example.org/gif".into()),
            ..Candidate::default()
        },
    ];
    let normalized = normalize("hf", candidates, &mut |_| {});
    (
        AdapterResponse {
            registry: "hf".into(),
            status: RegistryStatus::Ok,
            reason: None,
            results: normalized.results,
            latency_ms: 7,
        },
        normalized.dedup_removed,
    )
}

#[test]
fn adapter_responses_and_find_outputs_match_their_schemas() {
    let (response, removed) = answer();
    let adapter = validator("topgun-adapter-response.schema.json");
    assert_valid(&adapter, &serde_json::to_value(&response).unwrap());
    let down = AdapterResponse {
        registry: "meili".into(),
        status: RegistryStatus::Unavailable,
        reason: Some("Meilisearch at http://127.0.0.1:7700 is unreachable".into()),
        results: Vec::new(),
        latency_ms: 8000,
    };
    assert_valid(&adapter, &serde_json::to_value(&down).unwrap());
    let output = FindOutput::gather(
        "merge pdfs",
        "2026-12-01T00:00:00Z".into(),
        15,
        vec![(response, removed), (down, 0)],
    );
    assert_valid(
        &validator("findskills-output.schema.json"),
        &serde_json::to_value(&output).unwrap(),
    );
}

#[test]
fn the_schemas_reject_what_the_contract_forbids() {
    let (response, _) = answer();
    let mut value = serde_json::to_value(&response.results[0]).unwrap();
    let result = validator("topgun-unified-result.schema.json");
    assert_valid(&result, &value);
    value["install_url"] = json!("http://insecure.example");
    assert!(!result.is_valid(&value), "plain http install_url");
    value["install_url"] = Value::Null;
    value["extra"] = json!(1);
    assert!(!result.is_valid(&value), "an eleventh field");
    value.as_object_mut().unwrap().remove("extra");
    value["raw_metadata"] = json!({"license": "MIT"});
    assert!(!result.is_valid(&value), "metadata outside the envelope");
}

/// `search --format topgun`, run as a TopGun adapter would: the object it
/// prints matches the schema when Meilisearch is down and when it answers.
#[tokio::test]
async fn search_in_topguns_format_matches_the_schema_up_or_down() {
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let adapter = validator("topgun-adapter-response.schema.json");
    let state = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let store = empty.path().join("artifacts");
    let search = |url: Option<&str>| {
        let mut command = common::binary();
        command
            .args([
                "search",
                "merge pdfs",
                "--format",
                "topgun",
                "--retries",
                "0",
                "--store",
                store.to_str().unwrap(),
            ])
            .current_dir(empty.path())
            .env("XDG_STATE_HOME", state.path())
            .env("XDG_CACHE_HOME", state.path())
            .env_remove("MEILI_URL")
            .env_remove("MEILI_MASTER_KEY");
        if let Some(url) = url {
            command.env("MEILI_URL", url);
        }
        let out = command.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };

    // No Meilisearch: the embedded engine, with nothing built to search.
    let unset = search(None);
    assert_valid(&adapter, &unset);
    assert_eq!(unset["status"], "unavailable", "{unset}");
    assert!(
        unset["reason"].as_str().unwrap().contains("artifact"),
        "{unset}"
    );
    let down = search(Some("http://127.0.0.1:1"));
    assert_valid(&adapter, &down);
    assert_eq!(down["status"], "unavailable");

    let server = MockServer::start().await;
    let hit = json!({"id": "a", "repo": "o/r", "skill": "pdf", "skill_name": "pdf", "skill_description": "Merge PDFs",
                     "path": "s/pdf/SKILL.md", "skill_key": "o/r:s/pdf/SKILL.md", "kind": "skill",
                     "url": "http://insecure.example/s/pdf/SKILL.md", "content_sha": "b".repeat(64),
                     "skill_meta": {"license": "MIT"}, "_rankingScore": 0.9});
    common::meili_answers::mount_answers(&server, vec![hit]).await;
    // A server that never answers: unavailable within the deadline, not after the retries.
    let hanging = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(200).set_delay(std::time::Duration::from_secs(30)))
        .mount(&hanging)
        .await;
    let started = std::time::Instant::now();
    let mut slow = common::binary();
    let out = slow
        .args(["search", "q", "--format", "topgun", "--deadline", "1"])
        .current_dir(empty.path())
        .env("XDG_STATE_HOME", state.path())
        .env("MEILI_URL", hanging.uri())
        .output()
        .unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let timed_out: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid(&adapter, &timed_out);
    assert_eq!(timed_out["status"], "unavailable");
    assert!(
        timed_out["reason"]
            .as_str()
            .unwrap()
            .contains("no answer within 1.0 s"),
        "{timed_out}"
    );

    let up = search(Some(&server.uri()));
    assert_valid(&adapter, &up);
    assert_eq!(up["status"], "ok");
    let result = &up["results"][0];
    assert_eq!(result["name"], "pdf");
    assert_eq!(result["source_registry"], "agentfinder-skills");
    assert_eq!(result["install_url"], Value::Null, "http is dropped");
    assert_eq!(result["raw_metadata"]["data"]["license"], "MIT");
}
