//! Fault injection: an HTTP test server plays Meilisearch and injects what a
//! real server rarely produces (429, 5xx, hangs, failed tasks). Every fault
//! must give the documented outcome and leave the live index untouched: no
//! swap, no sidecar.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agentfinder_skills_reader::meili::{
    sync, LoadOutcome, MeiliConfig, MeiliError, RetryPolicy, Secret, SyncError, SyncOptions,
};
use agentfinder_skills_reader::store::Store;
use serde_json::json;
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const INDEX: &str = "hf_skills";

fn task_info(uid: u32, kind: &str) -> ResponseTemplate {
    ResponseTemplate::new(202).set_body_json(json!({
        "taskUid": uid, "indexUid": INDEX, "status": "enqueued", "type": kind,
        "enqueuedAt": "2026-01-01T00:00:00Z"
    }))
}

fn stats(count: u64) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "numberOfDocuments": count, "numberOfEmbeddedDocuments": 0, "numberOfEmbeddings": 0,
        "rawDocumentDbSize": 0, "avgDocumentSize": 0, "isIndexing": false, "fieldDistribution": {}
    }))
}

fn not_found() -> ResponseTemplate {
    ResponseTemplate::new(404).set_body_json(json!({
        "message": "Index `hf_skills` not found.", "code": "index_not_found",
        "type": "invalid_request", "link": "https://docs.meilisearch.com/errors#index_not_found"
    }))
}

/// Answers GET /tasks/{uid}: succeeded, or failed for `failing` uids.
struct Tasks {
    failing: Vec<u32>,
}

impl Respond for Tasks {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let uid: u32 = request
            .url
            .path()
            .rsplit('/')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let mut body = json!({
            "uid": uid, "indexUid": INDEX, "status": "succeeded", "type": "documentAdditionOrUpdate",
            "details": {"receivedDocuments": 4, "indexedDocuments": 4}, "duration": "PT0.001S",
            "enqueuedAt": "2026-01-01T00:00:00Z", "startedAt": "2026-01-01T00:00:00Z",
            "finishedAt": "2026-01-01T00:00:00Z", "error": null, "canceledBy": null
        });
        if self.failing.contains(&uid) {
            body["status"] = json!("failed");
            body["error"] = json!({"message": "Document `x` has an invalid `id`.", "code": "invalid_document_id",
                                   "type": "invalid_request", "link": "https://docs.meilisearch.com/errors"});
        }
        ResponseTemplate::new(200).set_body_json(body)
    }
}

/// What the staging index's settings carried, and whether the two indexes
/// have been swapped (each swap exchanges them, as Meilisearch's does).
#[derive(Clone, Default)]
struct Indexes {
    staging_synonyms: Arc<std::sync::Mutex<serde_json::Value>>,
    swapped: Arc<std::sync::atomic::AtomicBool>,
}

/// PATCH settings of the staging index: remembers its synonyms.
struct CaptureSettings(Indexes);

impl Respond for CaptureSettings {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap_or_default();
        *self.0.staging_synonyms.lock().unwrap() = body["synonyms"].clone();
        task_info(3, "settingsUpdate")
    }
}

/// POST /swap-indexes: exchanges the indexes; the first answer can be lost
/// (delayed past the client's call timeout) after the swap was done.
struct Swap {
    indexes: Indexes,
    lose_first_answer: bool,
    calls: AtomicU32,
}

impl Respond for Swap {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        self.indexes.swapped.fetch_xor(true, Ordering::SeqCst);
        let first = self.calls.fetch_add(1, Ordering::SeqCst) == 0;
        let answer = task_info(5, "indexSwap");
        if first && self.lose_first_answer {
            answer.set_delay(Duration::from_secs(3))
        } else {
            answer
        }
    }
}

/// GET synonyms of the live or the staging index, following the swaps.
struct Synonyms {
    indexes: Indexes,
    live: bool,
}

impl Respond for Synonyms {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let holds_new = self.live == self.indexes.swapped.load(Ordering::SeqCst);
        let body = if holds_new {
            self.indexes.staging_synonyms.lock().unwrap().clone()
        } else {
            json!({})
        };
        ResponseTemplate::new(200).set_body_json(body)
    }
}

/// A server with a live index of 7 documents where everything succeeds;
/// `documents` answers the document upload.
async fn server(documents: ResponseTemplate, failing_tasks: Vec<u32>) -> MockServer {
    server_with(documents, failing_tasks, Indexes::default(), false).await
}

async fn server_with(
    documents: ResponseTemplate,
    failing_tasks: Vec<u32>,
    indexes: Indexes,
    lose_first_swap_answer: bool,
) -> MockServer {
    let server = MockServer::start().await;
    for live in [true, false] {
        let uid = if live {
            INDEX.to_string()
        } else {
            format!("{INDEX}_staging")
        };
        Mock::given(method("GET"))
            .and(path(format!("/indexes/{uid}/settings/synonyms")))
            .respond_with(Synonyms {
                indexes: indexes.clone(),
                live,
            })
            .mount(&server)
            .await;
    }
    Mock::given(method("GET"))
        .and(path("/health"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"status": "available"})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/indexes/{INDEX}/stats")))
        .respond_with(stats(7))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/indexes/{INDEX}_staging/stats")))
        .respond_with(stats(4))
        .mount(&server)
        .await;
    Mock::given(method("DELETE"))
        .and(path_regex(r"^/indexes/.*"))
        .respond_with(task_info(1, "indexDeletion"))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/indexes"))
        .respond_with(task_info(2, "indexCreation"))
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path(format!("/indexes/{INDEX}_staging/settings")))
        .respond_with(CaptureSettings(indexes.clone()))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("/indexes/{INDEX}_staging/documents")))
        .respond_with(documents)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/swap-indexes"))
        .respond_with(Swap {
            indexes,
            lose_first_answer: lose_first_swap_answer,
            calls: AtomicU32::new(0),
        })
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex(r"^/tasks/\d+$"))
        .respond_with(Tasks {
            failing: failing_tasks,
        })
        .mount(&server)
        .await;
    server
}

fn config(server: &MockServer) -> MeiliConfig {
    MeiliConfig {
        api_key: Some(Secret::new("test-master-key-123")),
        call_timeout: Duration::from_millis(500),
        task_timeout: Duration::from_secs(5),
        poll_interval: Duration::from_millis(5),
        retry: RetryPolicy::exponential(Duration::from_millis(20), 3),
        ..MeiliConfig::new(server.uri())
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    store: Store,
    options: SyncOptions,
}

fn artifact() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    agentfinder_skills_reader::testing::write_artifact(
        dir.path(),
        "latest",
        "c1",
        INDEX,
        &agentfinder_skills_reader::testing::sample_docs("c1"),
    )
    .unwrap();
    let store = Store::open(dir.path().join("").to_str().unwrap()).unwrap();
    let options = SyncOptions {
        artifact_attempts: 1,
        ..SyncOptions::latest(dir.path().join("state.json"))
    };
    Setup {
        _dir: dir,
        store,
        options,
    }
}

/// Syncs `setup`'s artifact and checks that it was loaded.
async fn sync_loads(
    server: &MockServer,
    setup: &Setup,
) -> agentfinder_skills_reader::meili::LoadReport {
    let report = sync(&setup.store, &config(server), &setup.options)
        .await
        .unwrap();
    assert!(
        matches!(report.outcome, LoadOutcome::Loaded(_)),
        "{report:?}"
    );
    report
}

async fn requests_to(server: &MockServer, verb: &str, route: &str) -> usize {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method.as_str() == verb && r.url.path() == route)
        .count()
}

async fn assert_live_untouched(server: &MockServer, setup: &Setup) {
    assert_eq!(
        requests_to(server, "POST", "/swap-indexes").await,
        0,
        "no swap may happen"
    );
    assert_eq!(
        requests_to(server, "DELETE", &format!("/indexes/{INDEX}")).await,
        0,
        "live index never deleted"
    );
    assert!(
        !setup.options.state_path.exists(),
        "no loaded state recorded"
    );
}

#[tokio::test]
async fn the_happy_path_swaps_and_records_state() {
    let server = server(task_info(4, "documentAdditionOrUpdate"), vec![]).await;
    let setup = artifact();
    let report = sync_loads(&server, &setup).await;
    assert_eq!(report.documents, 4);
    assert_eq!(requests_to(&server, "POST", "/swap-indexes").await, 1);
    let state = std::fs::read_to_string(&setup.options.state_path).unwrap();
    assert!(
        state.contains("\"c1\"") && !state.contains("test-master-key"),
        "{state}"
    );
    // Documents went to the staging index, as NDJSON, with the key as a bearer token.
    let uploads: Vec<_> = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path().ends_with("_staging/documents"))
        .collect();
    assert_eq!(uploads.len(), 1);
    assert_eq!(uploads[0].headers["content-type"], "application/x-ndjson");
    assert_eq!(
        uploads[0].headers["authorization"],
        "Bearer test-master-key-123"
    );
    assert_eq!(String::from_utf8_lossy(&uploads[0].body).lines().count(), 4);
    // The manifest's settings, embedder included, went to the staging index.
    let settings: Vec<_> = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.method.as_str() == "PATCH" && r.url.path().ends_with("_staging/settings"))
        .collect();
    let body: serde_json::Value = serde_json::from_slice(&settings[0].body).unwrap();
    assert_eq!(body["embedders"]["default"]["source"], "huggingFace");
    assert_eq!(
        body["embedders"]["default"]["revision"],
        "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"
    );
    assert!(body["filterableAttributes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a == "skill"));
}

#[tokio::test]
async fn a_swap_whose_answer_is_lost_is_not_sent_again() {
    let indexes = Indexes::default();
    let server = server_with(
        task_info(4, "documentAdditionOrUpdate"),
        vec![],
        indexes.clone(),
        true,
    )
    .await;
    let setup = artifact();
    sync_loads(&server, &setup).await;
    assert_eq!(
        requests_to(&server, "POST", "/swap-indexes").await,
        1,
        "the swap went through; sending it again would swap the old documents back"
    );
    assert!(
        indexes.swapped.load(Ordering::SeqCst),
        "the live index holds the new documents"
    );
    let marker = indexes.staging_synonyms.lock().unwrap().clone();
    assert!(
        marker["agentfinderload"][0]
            .as_str()
            .unwrap()
            .starts_with("afload"),
        "{marker}"
    );
    assert!(setup.options.state_path.exists());
}

#[tokio::test]
async fn a_429_is_retried_then_succeeds() {
    let server = server(task_info(4, "documentAdditionOrUpdate"), vec![]).await;
    let hits = Arc::new(AtomicU32::new(0));
    let counter = hits.clone();
    Mock::given(method("GET"))
        .and(path("/indexes/hf_skills/stats"))
        .respond_with(move |_: &Request| {
            counter.fetch_add(1, Ordering::SeqCst);
            ResponseTemplate::new(429)
        })
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    let setup = artifact();
    sync_loads(&server, &setup).await;
    assert_eq!(hits.load(Ordering::SeqCst), 1, "the 429 was served once");
    assert_eq!(
        requests_to(&server, "GET", "/indexes/hf_skills/stats").await,
        2,
        "then retried"
    );
}

#[tokio::test]
async fn a_5xx_until_retries_run_out_is_unavailable_and_changes_nothing() {
    let server = server(ResponseTemplate::new(503), vec![]).await;
    let setup = artifact();
    let err = sync(&setup.store, &config(&server), &setup.options)
        .await
        .unwrap_err();
    match &err {
        SyncError::Meili(MeiliError::Unavailable {
            attempts, message, ..
        }) => {
            assert_eq!(*attempts, 4, "1 try + 3 retries");
            assert!(message.contains("503"), "{message}");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(
        requests_to(&server, "POST", "/indexes/hf_skills_staging/documents").await,
        4
    );
    assert_live_untouched(&server, &setup).await;
    assert!(!err.to_string().contains("test-master-key"));
}

#[tokio::test]
async fn a_hanging_response_hits_the_call_timeout() {
    let hanging = task_info(4, "documentAdditionOrUpdate").set_delay(Duration::from_secs(10));
    let server = server(hanging, vec![]).await;
    let setup = artifact();
    let mut config = config(&server);
    config.retry = RetryPolicy::exponential(Duration::from_millis(10), 1);
    let started = std::time::Instant::now();
    let err = sync(&setup.store, &config, &setup.options)
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "gave up at the timeout, not the hang"
    );
    assert!(
        matches!(&err, SyncError::Meili(MeiliError::Unavailable { message, .. }) if message.contains("timeout")),
        "{err}"
    );
    assert_live_untouched(&server, &setup).await;
}

#[tokio::test]
async fn a_failed_task_is_an_error_with_meilisearchs_message() {
    let server = server(task_info(4, "documentAdditionOrUpdate"), vec![4]).await;
    let setup = artifact();
    let err = sync(&setup.store, &config(&server), &setup.options)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, SyncError::Meili(MeiliError::TaskFailed { uid: 4, message, .. }) if message.contains("invalid `id`")),
        "{err}"
    );
    assert_live_untouched(&server, &setup).await;
}

#[tokio::test]
async fn other_4xx_are_not_retried() {
    let server = server(task_info(4, "documentAdditionOrUpdate"), vec![]).await;
    Mock::given(method("PATCH")).and(path("/indexes/hf_skills_staging/settings"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "message": "Unknown field `bogus`", "code": "bad_request", "type": "invalid_request", "link": ""
        })))
        .with_priority(1)
        .mount(&server)
        .await;
    let setup = artifact();
    let err = sync(&setup.store, &config(&server), &setup.options)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, SyncError::Meili(MeiliError::Rejected { .. })),
        "{err}"
    );
    assert_eq!(
        requests_to(&server, "PATCH", "/indexes/hf_skills_staging/settings").await,
        1
    );
    assert_live_untouched(&server, &setup).await;
}

#[tokio::test]
async fn an_up_to_date_index_is_a_no_op() {
    let server = server(task_info(4, "documentAdditionOrUpdate"), vec![]).await;
    let setup = artifact();
    // First sync loads (the live index has 7 documents, the artifact 4).
    sync(&setup.store, &config(&server), &setup.options)
        .await
        .unwrap();
    // Now the live index holds the 4 documents.
    answer_stats(&server, stats(4)).await;
    let report = sync(&setup.store, &config(&server), &setup.options)
        .await
        .unwrap();
    assert_eq!(report.outcome, LoadOutcome::Unchanged);
    assert_eq!(
        requests_to(&server, "POST", "/swap-indexes").await,
        1,
        "no second swap"
    );
}

#[tokio::test]
async fn a_missing_live_index_is_created_before_the_swap() {
    let server = server(task_info(4, "documentAdditionOrUpdate"), vec![]).await;
    answer_stats(&server, not_found()).await;
    let setup = artifact();
    let report = sync(&setup.store, &config(&server), &setup.options)
        .await
        .unwrap();
    assert!(matches!(
        report.outcome,
        LoadOutcome::Loaded(agentfinder_skills_reader::meili::StaleReason::IndexMissing)
    ));
    assert_eq!(
        requests_to(&server, "POST", "/indexes").await,
        2,
        "staging, then live"
    );
}

#[tokio::test]
async fn health_reports_each_state_with_its_exit_code() {
    use agentfinder_skills_reader::meili::health;
    let setup = artifact();
    let state = setup.options.state_path.clone();

    let report = health(None, Ok(&setup.store), INDEX, &state).await;
    assert_eq!((report.configured, report.exit_code()), (false, 10));
    assert_eq!(report.artifact_commit.as_deref(), Some("c1"));

    let mut down = MeiliConfig::new("http://127.0.0.1:1");
    down.retry = RetryPolicy::exponential(Duration::from_millis(1), 1);
    let report = health(Some(&down), Ok(&setup.store), INDEX, &state).await;
    assert_eq!((report.reachable, report.exit_code()), (false, 11));

    let server = server(task_info(4, "documentAdditionOrUpdate"), vec![]).await;
    let report = health(Some(&config(&server)), Ok(&setup.store), INDEX, &state).await;
    assert_eq!(
        (report.reachable, report.loaded, report.exit_code()),
        (true, false, 12)
    );

    sync(&setup.store, &config(&server), &setup.options)
        .await
        .unwrap();
    answer_stats(&server, stats(4)).await;
    let report = health(Some(&config(&server)), Ok(&setup.store), INDEX, &state).await;
    assert_eq!(
        (report.loaded, report.stale, report.exit_code()),
        (true, false, 0),
        "{report:?}"
    );

    // The store moves on: the index is now stale.
    agentfinder_skills_reader::testing::write_artifact(
        setup._dir.path(),
        "latest",
        "c2",
        INDEX,
        &agentfinder_skills_reader::testing::sample_docs("c2"),
    )
    .unwrap();
    let report = health(Some(&config(&server)), Ok(&setup.store), INDEX, &state).await;
    assert_eq!((report.stale, report.exit_code()), (true, 13));

    // A store that cannot be read is never reported fresh: loaded, but 14.
    let unreadable = tempfile::tempdir().unwrap();
    let missing = unreadable.path().join("no-such-store");
    let opened = Store::open_existing_with(missing.to_str().unwrap(), &Default::default());
    assert!(!missing.exists(), "a reader does not create the store");
    let report = health(Some(&config(&server)), opened.as_ref(), INDEX, &state).await;
    assert_eq!(
        (
            report.loaded,
            report.store_readable,
            report.stale,
            report.exit_code()
        ),
        (true, false, true, 14),
        "{report:?}"
    );
    assert!(
        report.problems.iter().any(|p| p.contains("empty store")),
        "{report:?}"
    );
    let broken = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(broken.path().join("latest")).unwrap();
    std::fs::write(broken.path().join("latest/_SUCCESS"), "not json").unwrap();
    let store = Store::open(broken.path().to_str().unwrap()).unwrap();
    let report = health(Some(&config(&server)), Ok(&store), INDEX, &state).await;
    assert_eq!(report.exit_code(), 14, "{report:?}");
}

#[tokio::test]
async fn documents_that_do_not_match_success_never_reach_the_live_index() {
    let server = server(task_info(4, "documentAdditionOrUpdate"), vec![]).await;
    let setup = artifact();
    let ndjson = setup._dir.path().join("latest/hf-skills.ndjson");
    let mut bytes = std::fs::read(&ndjson).unwrap();
    bytes.extend_from_slice(b"{\"id\":\"intruder\"}\n");
    std::fs::write(&ndjson, bytes).unwrap();
    let err = sync(&setup.store, &config(&server), &setup.options)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, SyncError::Artifact(e) if e.is_transient()),
        "{err}"
    );
    assert_live_untouched(&server, &setup).await;
}

/// Makes the live index's stats route answer `response` (over the default).
async fn answer_stats(server: &MockServer, response: ResponseTemplate) {
    Mock::given(method("GET"))
        .and(path("/indexes/hf_skills/stats"))
        .respond_with(response)
        .with_priority(1)
        .mount(server)
        .await;
}
