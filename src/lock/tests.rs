use super::*;

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().to_str().unwrap()).unwrap();
    (dir, store)
}

fn quick() -> LockTimes {
    LockTimes {
        ttl: Duration::from_secs(60),
        wait: Duration::from_millis(300),
        poll: Duration::from_millis(20),
    }
}

#[tokio::test]
async fn a_held_lock_keeps_others_out_until_released() {
    let (_dir, store) = store();
    let held = StoreLock::acquire(&store, "latest", "promote", quick())
        .await
        .unwrap();
    assert!(held.exclusive);
    let busy = StoreLock::acquire(&store, "latest", "promote", quick())
        .await
        .unwrap_err();
    assert!(matches!(busy, LockError::Busy { .. }), "{busy}");
    assert!(busy.to_string().contains("promote"));
    held.release().await;
    StoreLock::acquire(&store, "latest", "promote", quick())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_lock_of_a_dead_process_or_past_its_lease_is_taken_over() {
    let (dir, store) = store();
    let lock_file = dir.path().join("locks/latest.json");
    std::fs::create_dir_all(lock_file.parent().unwrap()).unwrap();
    let mut dead = LockRecord::new("promote", Duration::from_secs(3600));
    dead.pid = u32::MAX - 1; // no such process
    std::fs::write(&lock_file, serde_json::to_vec(&dead).unwrap()).unwrap();
    StoreLock::acquire(&store, "latest", "promote", quick())
        .await
        .unwrap()
        .release()
        .await;

    let mut expired = LockRecord::new("promote", Duration::ZERO);
    expired.host = "another-host".into();
    std::fs::create_dir_all(lock_file.parent().unwrap()).unwrap();
    std::fs::write(&lock_file, serde_json::to_vec(&expired).unwrap()).unwrap();
    StoreLock::acquire(&store, "latest", "promote", quick())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_live_lock_of_another_host_is_respected() {
    let (dir, store) = store();
    let lock_file = dir.path().join("locks/latest.json");
    std::fs::create_dir_all(lock_file.parent().unwrap()).unwrap();
    let mut other = LockRecord::new("promote", Duration::from_secs(3600));
    other.host = "another-host".into();
    std::fs::write(&lock_file, serde_json::to_vec(&other).unwrap()).unwrap();
    let err = StoreLock::acquire(&store, "latest", "promote", quick())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("another-host"), "{err}");
}

/// A store whose lock always exists when created yet is never there
/// when read: each attempt loses a race, forever.
#[derive(Debug)]
struct AlwaysChanged(object_store::memory::InMemory);

impl std::fmt::Display for AlwaysChanged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("always-changed")
    }
}

#[async_trait::async_trait]
impl object_store::ObjectStore for AlwaysChanged {
    async fn put_opts(
        &self,
        location: &Path,
        payload: object_store::PutPayload,
        opts: object_store::PutOptions,
    ) -> object_store::Result<object_store::PutResult> {
        if opts.mode == PutMode::Create {
            return Err(object_store::Error::AlreadyExists {
                path: location.to_string(),
                source: "held".into(),
            });
        }
        self.0.put_opts(location, payload, opts).await
    }
    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: object_store::PutMultipartOptions,
    ) -> object_store::Result<Box<dyn object_store::MultipartUpload>> {
        self.0.put_multipart_opts(location, opts).await
    }
    async fn get_opts(
        &self,
        location: &Path,
        _options: object_store::GetOptions,
    ) -> object_store::Result<object_store::GetResult> {
        Err(object_store::Error::NotFound {
            path: location.to_string(),
            source: "released".into(),
        })
    }
    fn delete_stream(
        &self,
        locations: futures::stream::BoxStream<'static, object_store::Result<Path>>,
    ) -> futures::stream::BoxStream<'static, object_store::Result<Path>> {
        self.0.delete_stream(locations)
    }
    fn list(
        &self,
        prefix: Option<&Path>,
    ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
        self.0.list(prefix)
    }
    async fn list_with_delimiter(
        &self,
        prefix: Option<&Path>,
    ) -> object_store::Result<object_store::ListResult> {
        self.0.list_with_delimiter(prefix).await
    }
    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: object_store::CopyOptions,
    ) -> object_store::Result<()> {
        self.0.copy_opts(from, to, options).await
    }
}

#[test]
fn a_lock_that_keeps_changing_is_given_up_at_the_deadline_without_spinning() {
    let store = Store {
        inner: Arc::new(AlwaysChanged(object_store::memory::InMemory::new())),
        display: "always-changed".into(),
        local_root: None,
    };
    // On a thread of its own, so that a loop that never yields fails
    // this test instead of hanging it.
    let (sent, answer) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let taken = runtime.block_on(StoreLock::acquire(&store, "latest", "promote", quick()));
        let _ = sent.send(taken.map(|_| ()));
    });
    let refused = answer
        .recv_timeout(Duration::from_secs(10))
        .expect("acquire neither took the lock nor gave up in 10 s")
        .unwrap_err();
    match refused {
        LockError::Contended { attempts, .. } => {
            // Paused between attempts: a spinning loop makes thousands.
            assert!((2..100).contains(&attempts), "{attempts} attempts");
        }
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn a_lock_dropped_unreleased_is_given_up_without_waiting_out_its_lease() {
    let (_dir, store) = store();
    // Work holding the lock is stopped by a timeout: the future, and the
    // lock in it, are dropped, never released.
    let stopped = tokio::time::timeout(Duration::from_millis(50), async {
        let _held = StoreLock::acquire(&store, "latest", "build", quick())
            .await
            .unwrap();
        std::future::pending::<()>().await;
    })
    .await;
    assert!(stopped.is_err());
    // The lease is 60 s; a retry waits at most 300 ms, and gets it.
    let retry = StoreLock::acquire(&store, "latest", "build", quick()).await;
    assert!(retry.is_ok(), "{:?}", retry.err().map(|e| e.to_string()));
}
