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
