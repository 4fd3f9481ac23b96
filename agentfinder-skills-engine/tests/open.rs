//! The engine's one owner of open and refresh, as a unit: many requests
//! against a store that is unreadable and then readable start one build,
//! each request waiting only up to its own deadline; and two engines
//! sharing a cache folder (two processes, say) build a version once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agentfinder_skills_engine::service::opener::RETRY_AFTER;
use agentfinder_skills_engine::{Embedded, EmbeddedOptions, Query};
use agentfinder_skills_reader::testing::{sample_docs, write_artifact};

/// How long the test's builds take (the engine's `engine-build` pause
/// point), so that requests overlap them.
const BUILD_SECONDS: f64 = 1.5;

fn engine(store: &std::path::Path, cache: &std::path::Path) -> Arc<Embedded> {
    Arc::new(Embedded::new(EmbeddedOptions {
        store: store.to_str().unwrap().to_string(),
        store_options: Default::default(),
        cache: cache.to_path_buf(),
        keep_versions: 2,
        model: None,
    }))
}

/// `n` searches for "pdf" at once, each refused past `within`.
async fn many(engine: &Arc<Embedded>, n: usize, within: Duration) -> Vec<Result<usize, String>> {
    let searches = (0..n).map(|_| {
        let engine = engine.clone();
        tokio::spawn(async move {
            let query = Query {
                text: "pdf".into(),
                limit: 5,
                start_by: Some(Instant::now() + within),
                ..Query::default()
            };
            engine.search(&query).await.map(|found| found.hits.len())
        })
    });
    futures::future::join_all(searches)
        .await
        .into_iter()
        .map(|joined| joined.unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_requests_against_a_store_unreadable_then_readable_start_one_build() {
    std::env::set_var("AGENTFINDER_PAUSE", format!("engine-build:{BUILD_SECONDS}"));
    let store = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let embedded = engine(store.path(), cache.path());

    // Nothing built yet: every request says why, within its deadline (one
    // read of the store, retried as a promotion under way would be, for
    // all of them), and nothing is built.
    let started = Instant::now();
    let answers = many(&embedded, 50, Duration::from_secs(10)).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(answers.iter().all(|a| a.is_err()), "{answers:?}");
    assert_eq!(embedded.builds(None), 0);

    // The store becomes readable; the failure is remembered a moment.
    write_artifact(
        store.path(),
        "latest",
        "c1",
        "hf_skills",
        &sample_docs("c1"),
    )
    .unwrap();
    tokio::time::sleep(RETRY_AFTER).await;

    // Fifty requests, each waiting at most 0.3 s for a build of 1.5 s:
    // each is told the index is being built, and one build runs for all.
    let answers = many(&embedded, 50, Duration::from_millis(300)).await;
    for answer in &answers {
        let why = answer
            .as_ref()
            .expect_err("answered before the build ended");
        assert!(why.contains("being built"), "{why}");
    }
    // A request with time to wait gets the engine that one build made.
    let answers = many(&embedded, 50, Duration::from_secs(30)).await;
    assert!(
        answers.iter().all(|a| a.as_ref().is_ok_and(|n| *n > 0)),
        "{answers:?}"
    );
    assert_eq!(embedded.builds(None), 1, "one build for every request");
    let versions: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("meta.json").is_file())
        .collect();
    assert_eq!(versions.len(), 1);

    // A refresh with nothing new keeps the engine: no build, no reopen.
    embedded.refresh(None).await.unwrap();
    assert_eq!(embedded.builds(None), 1);

    // Two engines sharing a cache folder (as two processes do) build a
    // new version once: the second waits for the first's build.
    write_artifact(
        store.path(),
        "latest",
        "c2",
        "hf_skills",
        &sample_docs("c2"),
    )
    .unwrap();
    let other = engine(store.path(), cache.path());
    let (a, b) = tokio::join!(embedded.refresh(None), other.refresh(None));
    a.unwrap();
    b.unwrap();
    assert_eq!(
        embedded.builds(None) + other.builds(None),
        2,
        "the first version, then the second once"
    );
}
