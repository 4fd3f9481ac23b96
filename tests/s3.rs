//! moto's server honours the conditional writes the promotion protocol relies on.

mod common;

use bytes::Bytes;
use common::binary;
use common::moto::Moto;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutMode, PutOptions, UpdateVersion};

#[tokio::test]
async fn create_only_and_if_match_writes_are_enforced() {
    let Some(moto) = Moto::start() else { return };
    moto.create_bucket("probe");
    let store = moto.store("probe");
    let path = Path::from("x/_SUCCESS");
    let create = || PutOptions {
        mode: PutMode::Create,
        ..Default::default()
    };
    let first = store
        .inner
        .put_opts(&path, Bytes::from_static(b"a").into(), create())
        .await
        .unwrap();
    let second = store
        .inner
        .put_opts(&path, Bytes::from_static(b"b").into(), create())
        .await;
    assert!(
        matches!(second, Err(object_store::Error::AlreadyExists { .. })),
        "{second:?}"
    );

    let version = UpdateVersion {
        e_tag: first.e_tag.clone(),
        version: first.version.clone(),
    };
    let update = |v: UpdateVersion| PutOptions {
        mode: PutMode::Update(v),
        ..Default::default()
    };
    store
        .inner
        .put_opts(
            &path,
            Bytes::from_static(b"c").into(),
            update(version.clone()),
        )
        .await
        .unwrap();
    let stale = store
        .inner
        .put_opts(&path, Bytes::from_static(b"d").into(), update(version))
        .await;
    assert!(
        matches!(stale, Err(object_store::Error::Precondition { .. })),
        "{stale:?}"
    );
    let body = store.inner.get(&path).await.unwrap().bytes().await.unwrap();
    assert_eq!(&body[..], b"c");
}

#[test]
fn a_missing_bucket_fails_with_the_path_and_no_secret() {
    let Some(moto) = Moto::start() else { return };
    let mut repo = common::GitRepo::new();
    repo.write("s/a/SKILL.md", common::skill("a", "d", "# A\n"));
    let commit = repo.commit("c");
    let cwd = tempfile::tempdir().unwrap();
    let out = binary()
        .args(["build", "--source", repo.path().to_str().unwrap()])
        .args(["--store", "s3://no-such-bucket/index"])
        .current_dir(cwd.path())
        .envs(moto.env())
        .env_remove("MEILI_URL")
        .output()
        .unwrap();
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{err}");
    // The first write names its object: the builder's lock for this commit.
    assert!(
        err.contains(&format!("locks/commit-{commit}.json")),
        "{err}"
    );
    assert!(err.contains("NoSuchBucket"), "{err}");
    assert!(!err.contains(common::moto::SECRET_KEY), "{err}");
}

#[test]
fn credentials_in_a_store_url_never_print() {
    let cwd = tempfile::tempdir().unwrap();
    let out = binary()
        .args([
            "verify",
            "--store",
            "ftp://user:hunter2-secret@example.invalid/x?token=tok-secret",
        ])
        .current_dir(cwd.path())
        .output()
        .unwrap();
    let text = format!("{}{}", common::stdout(&out), common::stderr(&out));
    assert_eq!(out.status.code(), Some(5), "{text}");
    assert!(
        !text.contains("hunter2-secret") && !text.contains("tok-secret"),
        "{text}"
    );
    assert!(text.contains("***@example.invalid"), "{text}");
}

/// The shared vector cache works the same on S3: a fresh disk pulls what
/// another pushed, and a pile of segments is merged (list, get, put, delete).
#[tokio::test]
async fn the_vector_cache_is_shared_through_s3() {
    use agentfinder_skills::embed::share::{pull, push, MAX_SEGMENTS};
    use agentfinder_skills::embed::{text_digest, VectorCache};
    use std::sync::Mutex;

    let Some(moto) = Moto::start() else { return };
    moto.create_bucket("vectors");
    let store = moto.store("vectors");
    let work = tempfile::tempdir().unwrap();
    let disk = |name: &str| {
        std::sync::Arc::new(Mutex::new(
            VectorCache::open(&work.path().join(name), "org_model@rev@256", 3).unwrap(),
        ))
    };
    for run in 0..=MAX_SEGMENTS {
        let cache = disk(&format!("run-{run}"));
        pull(&store, &cache).await.unwrap();
        let value = run as f32;
        cache
            .lock()
            .unwrap()
            .insert(text_digest(&run.to_string()), vec![value; 3]);
        let pushed = push(&store, &cache).await.unwrap();
        assert_eq!(pushed.vectors, 1);
        assert_eq!(pushed.merged, if run == MAX_SEGMENTS { run + 1 } else { 0 });
    }
    let fresh = disk("fresh");
    let pulled = pull(&store, &fresh).await.unwrap();
    assert_eq!((pulled.segments, pulled.vectors), (1, MAX_SEGMENTS + 1));
    let vector = fresh.lock().unwrap().get(&text_digest("3")).unwrap();
    assert_eq!(vector, Some(vec![3.0; 3]));
}

/// The serving commands reach the store as `build` does: through
/// pipeline.toml's `[store]` (here the only place the endpoint is named).
#[test]
fn serving_commands_reach_the_store_through_pipeline_toml() {
    let Some(moto) = Moto::start() else { return };
    moto.create_bucket("served");
    let mut repo = common::GitRepo::new();
    repo.write("s/a/SKILL.md", common::skill("a", "d", "# A\n"));
    let commit = repo.commit("c");
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(
        cwd.path().join("pipeline.toml"),
        format!(
            "[output]\nstore = \"s3://served/index\"\n\n[store]\nendpoint = \"{}\"\nallow_http = true\nregion = \"us-east-1\"\n",
            moto.endpoint()
        ),
    )
    .unwrap();
    // Credentials from the environment, but no endpoint there.
    let env: Vec<_> = moto
        .env()
        .into_iter()
        .filter(|(k, _)| k.starts_with("AWS_ACCESS") || k.starts_with("AWS_SECRET"))
        .collect();
    let run = |args: &[&str]| {
        binary()
            .args(args)
            .current_dir(cwd.path())
            .env_remove("AWS_ENDPOINT")
            .env_remove("AWS_ALLOW_HTTP")
            .envs(env.clone())
            .env_remove("MEILI_URL")
            .output()
            .unwrap()
    };
    let out = run(&[
        "build",
        "--no-embed",
        "--source",
        repo.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let out = run(&["health", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "the embedded engine serves the store"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["store_readable"], true, "{report}");
    assert_eq!(report["artifact_commit"], commit.as_str());
}
