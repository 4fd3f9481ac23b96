//! moto's server honours the conditional writes the promotion protocol relies on.

mod common;

use bytes::Bytes;
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
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agentfinder-skills"))
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
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agentfinder-skills"))
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
