//! The vector cache shared through the artifact store, so a job that starts
//! on an empty disk (a Hugging Face Job, a fresh Actions runner) embeds only
//! text that no earlier build embedded.
//!
//! The store holds immutable *segments* under
//! `cache/embeddings/<model>@<revision>@<max_tokens>/<sha256>.f32`, each in the local
//! cache's record format and named by the sha256 of its bytes. A build pulls
//! the segments it has not absorbed yet, and pushes the vectors it embedded
//! as one new segment. When more than [`MAX_SEGMENTS`] pile up, a builder
//! uploads its whole cache as one segment and then deletes the ones it
//! merged. Every step leaves the store's union of segments a superset of what
//! it was, so a crash at any point loses nothing that was shared; a segment
//! that fails its digest is skipped. The cache is advisory: callers report
//! its failures as warnings and build on.
//!
//! What this machine has absorbed and shared is kept beside the local cache
//! file in `<model>@<revision>@<max_tokens>.shared.json`.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::TryStreamExt;
use object_store::path::Path as StorePath;
use object_store::ObjectStoreExt;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use agentfinder_skills_reader::store::{redact_text, Store};

use super::VectorCache;
use crate::failpoint::failpoint;
use crate::store::put::{put_content_at, Content};
use crate::store::staging::HashingFile;

/// Where segments live in the store.
pub const PREFIX: &str = "cache/embeddings";
/// Prefix of a segment being staged in the local cache folder.
const SEGMENT_STAGING: &str = ".segment-";
/// Segments tolerated before a builder merges them into one.
pub const MAX_SEGMENTS: usize = 16;

/// Sharing the cache failed (the build goes on without it).
#[derive(Debug, thiserror::Error)]
#[error("shared vector cache {path}: {message}")]
pub struct ShareError {
    /// The object or file involved.
    pub path: String,
    /// Why, redacted.
    pub message: String,
}

/// What a pull did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pulled {
    /// Segments downloaded and absorbed.
    pub segments: usize,
    /// Vectors among them that were new here.
    pub vectors: usize,
    /// Segments skipped, with why.
    pub skipped: Vec<String>,
}

/// What a push did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pushed {
    /// Vectors uploaded in a new segment (0: nothing new).
    pub vectors: u64,
    /// Segments merged into one and deleted (0: no compaction).
    pub merged: usize,
}

/// This machine's record of what it absorbed from and shared with the store.
#[derive(Debug, Default, Serialize, Deserialize)]
struct ShareState {
    /// Segment names whose records the local file holds.
    segments: BTreeSet<String>,
    /// Bytes of the local file at the start that the store holds.
    shared_bytes: u64,
}

/// The store folder of a cache's segments.
fn prefix_of(cache: &VectorCache) -> StorePath {
    StorePath::from(format!("{PREFIX}/{}", cache.key()))
}

fn state_path(cache: &VectorCache) -> PathBuf {
    cache.path().with_extension("shared.json")
}

fn load_state(path: &Path, file_len: u64) -> ShareState {
    let state: ShareState = std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    if state.shared_bytes > file_len {
        // The cache file was replaced: trust nothing recorded about it.
        return ShareState::default();
    }
    state
}

fn save_state(path: &Path, state: &ShareState) -> Result<(), ShareError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let write = || -> std::io::Result<()> {
        let mut temp = tempfile::NamedTempFile::new_in(dir)?;
        temp.write_all(&serde_json::to_vec_pretty(state).unwrap_or_default())?;
        temp.persist(path).map_err(|e| e.error)?;
        Ok(())
    };
    write().map_err(|e| local_error(path, e))
}

fn local_error(path: &Path, e: impl std::fmt::Display) -> ShareError {
    ShareError {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn store_error(path: &StorePath, e: impl std::fmt::Display) -> ShareError {
    ShareError {
        path: path.to_string(),
        message: redact_text(&e.to_string()),
    }
}

fn locked<T>(shared: &Mutex<T>) -> Result<MutexGuard<'_, T>, ShareError> {
    shared.lock().map_err(|_| ShareError {
        path: PREFIX.to_string(),
        message: "embedder lock poisoned".to_string(),
    })
}

/// What pull and push need to know of the local cache, read under its lock
/// (with new vectors written first).
struct Facts {
    prefix: StorePath,
    state_file: PathBuf,
    dir: PathBuf,
    record: u64,
    file_len: u64,
}

/// The embedder's vector cache, shared between the build's stages.
pub trait SharedCache: AsMut<VectorCache> + Send + 'static {}
impl<T: AsMut<VectorCache> + Send + 'static> SharedCache for T {}

/// Runs `work` on the cache under its lock, on a blocking thread: taking
/// the lock may wait for a batch being embedded, and the work reads and
/// writes files, neither of which may hold up the runtime's threads.
async fn with_cache<T: SharedCache, R: Send + 'static>(
    shared: &Arc<Mutex<T>>,
    work: impl FnOnce(&mut VectorCache) -> Result<R, ShareError> + Send + 'static,
) -> Result<R, ShareError> {
    let shared = Arc::clone(shared);
    tokio::task::spawn_blocking(move || work(locked(&shared)?.as_mut()))
        .await
        .map_err(|e| ShareError {
            path: PREFIX.to_string(),
            message: e.to_string(),
        })?
}

async fn facts<T: SharedCache>(shared: &Arc<Mutex<T>>) -> Result<Facts, ShareError> {
    with_cache(shared, |cache| {
        cache.flush().map_err(|e| local_error(cache.path(), e))?;
        Ok(Facts {
            prefix: prefix_of(cache),
            state_file: state_path(cache),
            dir: cache.dir().to_path_buf(),
            record: cache.record_size() as u64,
            file_len: cache.file_len(),
        })
    })
    .await
}

/// Segments in the store, by name, with their sizes.
async fn list(store: &Store, prefix: &StorePath) -> Result<Vec<(String, u64)>, ShareError> {
    let listed: Vec<object_store::ObjectMeta> = store
        .inner
        .list(Some(prefix))
        .try_collect()
        .await
        .map_err(|e| store_error(prefix, e))?;
    let mut segments: Vec<(String, u64)> = listed
        .into_iter()
        .filter_map(|meta| {
            let name = meta.location.filename()?.to_string();
            name.ends_with(".f32").then_some((name, meta.size))
        })
        .collect();
    segments.sort();
    Ok(segments)
}

/// Downloads and absorbs the store's segments this machine has not absorbed.
pub async fn pull<T: SharedCache>(
    store: &Store,
    shared: &Arc<Mutex<T>>,
) -> Result<Pulled, ShareError> {
    let Facts {
        prefix,
        state_file,
        dir,
        record,
        file_len,
    } = facts(shared).await?;
    crate::store::staging::remove_stale(&dir, &[SEGMENT_STAGING, ".tmp"]);
    let mut state = load_state(&state_file, file_len);
    let mut pulled = Pulled::default();
    for (name, size) in list(store, &prefix).await? {
        if state.segments.contains(&name) {
            continue;
        }
        let path = prefix.clone().join(name.as_str());
        if size % record != 0 {
            pulled.skipped.push(format!(
                "{path}: {size} bytes is not a whole number of records"
            ));
            continue;
        }
        let Some(download) = download(store, &path, &dir).await? else {
            continue; // Merged away by another builder since the listing.
        };
        if name.strip_suffix(".f32") != Some(download.1.as_str()) {
            pulled
                .skipped
                .push(format!("{path}: its bytes do not match its name's digest"));
            continue;
        }
        let (downloaded, at) = (download.0.path().to_path_buf(), path.clone());
        let (before, after, added) = with_cache(shared, move |cache| {
            let before = cache.file_len();
            let file = std::fs::File::open(&downloaded).map_err(|e| local_error(&downloaded, e))?;
            let added = cache.absorb(file).map_err(|e| store_error(&at, e))?;
            Ok((before, cache.file_len(), added))
        })
        .await?;
        drop(download);
        if state.shared_bytes == before {
            // Nothing unshared sits before what was just appended.
            state.shared_bytes = after;
        }
        state.segments.insert(name);
        save_state(&state_file, &state)?;
        pulled.segments += 1;
        pulled.vectors += added;
    }
    Ok(pulled)
}

/// Streams `path` into a temporary file in `dir`; returns it with the
/// sha256 of its bytes, or `None` when the object is gone.
async fn download(
    store: &Store,
    path: &StorePath,
    dir: &Path,
) -> Result<Option<(tempfile::NamedTempFile, String)>, ShareError> {
    let result = match store.inner.get(path).await {
        Ok(result) => result,
        Err(object_store::Error::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(store_error(path, e)),
    };
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(|e| local_error(dir, e))?;
    let mut hasher = Sha256::new();
    let mut stream = result.into_stream();
    while let Some(chunk) = stream.try_next().await.map_err(|e| store_error(path, e))? {
        hasher.update(&chunk);
        temp.write_all(&chunk).map_err(|e| local_error(dir, e))?;
    }
    temp.flush().map_err(|e| local_error(dir, e))?;
    Ok(Some((temp, hex::encode(hasher.finalize()))))
}

/// Uploads the vectors not yet in the store as one segment, then merges the
/// segments into one if more than [`MAX_SEGMENTS`] have piled up.
pub async fn push<T: SharedCache>(
    store: &Store,
    shared: &Arc<Mutex<T>>,
) -> Result<Pushed, ShareError> {
    let Facts {
        prefix,
        state_file,
        record,
        file_len,
        ..
    } = facts(shared).await?;
    let mut state = load_state(&state_file, file_len);
    let mut pushed = Pushed::default();
    if file_len <= state.shared_bytes {
        return Ok(pushed);
    }
    let name = upload_range(store, shared, &prefix, state.shared_bytes, file_len).await?;
    failpoint("share-after-segment");
    pushed.vectors = (file_len - state.shared_bytes) / record;
    state.segments.insert(name);
    state.shared_bytes = file_len;
    save_state(&state_file, &state)?;

    let listed = list(store, &prefix).await?;
    if listed.len() <= MAX_SEGMENTS {
        return Ok(pushed);
    }
    // The local file holds every record of the segments this machine
    // absorbed or shared: one upload of it replaces them all.
    let merged = upload_range(store, shared, &prefix, 0, file_len).await?;
    failpoint("share-after-merge");
    for (name, _) in listed {
        if name != merged && state.segments.contains(&name) {
            let path = prefix.clone().join(name.as_str());
            match store.inner.delete(&path).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(store_error(&path, e)),
            }
            state.segments.remove(&name);
            pushed.merged += 1;
            failpoint("share-after-first-delete");
        }
    }
    state.segments.insert(merged);
    save_state(&state_file, &state)?;
    Ok(pushed)
}

/// Uploads bytes `[from, to)` of the local cache file as a segment; returns its name.
async fn upload_range<T: SharedCache>(
    store: &Store,
    shared: &Arc<Mutex<T>>,
    prefix: &StorePath,
    from: u64,
    to: u64,
) -> Result<String, ShareError> {
    let staged = with_cache(shared, move |cache| {
        let dir = cache.dir().to_path_buf();
        let stage = || -> std::io::Result<crate::store::staging::StagedFile> {
            let mut file =
                HashingFile::create(&dir, &format!("{SEGMENT_STAGING}{}", std::process::id()))?;
            cache.copy_range(from, to, &mut file)?;
            file.finish()
        };
        stage().map_err(|e| local_error(&dir, e))
    })
    .await?;
    let name = format!("{}.f32", staged.digest.sha256);
    let path = prefix.clone().join(name.as_str());
    let staged_path = staged.path.clone();
    let result = put_content_at(store, &path, &Content::File(staged)).await;
    // A local store moved the file into place; any other leaves it here.
    let _ = std::fs::remove_file(&staged_path);
    result.map_err(|e| store_error(&path, e))?;
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::text_digest;

    fn store(dir: &Path) -> Store {
        Store::open(dir.to_str().unwrap()).unwrap()
    }

    fn cache(dir: &Path) -> Arc<Mutex<VectorCache>> {
        Arc::new(Mutex::new(
            VectorCache::open(dir, "org_model@rev@256", 2).unwrap(),
        ))
    }

    fn add(cache: &Mutex<VectorCache>, text: &str, value: f32) {
        cache
            .lock()
            .unwrap()
            .insert(text_digest(text), vec![value, -value]);
    }

    fn get(cache: &Mutex<VectorCache>, text: &str) -> Option<Vec<f32>> {
        cache.lock().unwrap().get(&text_digest(text)).unwrap()
    }

    fn segments(root: &Path) -> Vec<PathBuf> {
        let dir = root.join(PREFIX).join("org_model@rev@256");
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        found.sort();
        found
    }

    /// `#[tokio::test]` runs one runtime thread: a task that blocks it
    /// stops every other task.
    #[tokio::test]
    async fn sharing_waits_for_a_busy_embedder_off_the_runtime_threads() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let work = tempfile::tempdir().unwrap();
        let store = store(&work.path().join("store"));
        let cache = cache(&work.path().join("local"));
        add(&cache, "a", 1.0);
        // The embedder busy with a batch: its lock held by another thread.
        let held = Arc::clone(&cache);
        let (locked_tx, locked_rx) = std::sync::mpsc::channel();
        let holder = std::thread::spawn(move || {
            let _guard = held.lock().unwrap();
            locked_tx.send(()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(400));
        });
        locked_rx.recv().unwrap();
        let ticks = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&ticks);
        let ticker = tokio::spawn(async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                counted.fetch_add(1, Ordering::SeqCst);
            }
        });
        assert_eq!(push(&store, &cache).await.unwrap().vectors, 1);
        ticker.abort();
        holder.join().unwrap();
        let ticks = ticks.load(Ordering::SeqCst);
        assert!(
            ticks >= 20,
            "other tasks stood still while the push waited: {ticks} ticks"
        );
    }

    #[tokio::test]
    async fn a_fresh_disk_gets_the_vectors_another_machine_shared() {
        let work = tempfile::tempdir().unwrap();
        let root = work.path().join("store");
        let store = store(&root);
        let first = cache(&work.path().join("first"));
        add(&first, "a", 1.0);
        add(&first, "b", 2.0);
        assert_eq!(push(&store, &first).await.unwrap().vectors, 2);
        assert_eq!(segments(&root).len(), 1);
        // Nothing new: nothing is uploaded.
        assert_eq!(push(&store, &first).await.unwrap(), Pushed::default());

        let second = cache(&work.path().join("second"));
        let pulled = pull(&store, &second).await.unwrap();
        assert_eq!((pulled.segments, pulled.vectors), (1, 2));
        assert_eq!(get(&second, "b"), Some(vec![2.0, -2.0]));
        // What was pulled is not pushed back; what is new is.
        assert_eq!(push(&store, &second).await.unwrap().vectors, 0);
        add(&second, "c", 3.0);
        assert_eq!(push(&store, &second).await.unwrap().vectors, 1);

        let pulled = pull(&store, &first).await.unwrap();
        assert_eq!((pulled.segments, pulled.vectors), (1, 1));
        assert_eq!(get(&first, "c"), Some(vec![3.0, -3.0]));
        assert_eq!(pull(&store, &first).await.unwrap(), Pulled::default());
    }

    #[tokio::test]
    async fn a_segment_whose_bytes_do_not_match_its_name_is_skipped() {
        let work = tempfile::tempdir().unwrap();
        let root = work.path().join("store");
        let store = store(&root);
        let first = cache(&work.path().join("first"));
        add(&first, "a", 1.0);
        push(&store, &first).await.unwrap();
        let segment = &segments(&root)[0];
        let mut bytes = std::fs::read(segment).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(segment, bytes).unwrap();

        let second = cache(&work.path().join("second"));
        let pulled = pull(&store, &second).await.unwrap();
        assert_eq!(pulled.vectors, 0);
        assert_eq!(pulled.skipped.len(), 1, "{pulled:?}");
        assert!(pulled.skipped[0].contains("digest"), "{pulled:?}");
        assert_eq!(get(&second, "a"), None);
    }

    #[tokio::test]
    async fn segments_are_merged_into_one_when_too_many_pile_up() {
        let work = tempfile::tempdir().unwrap();
        let root = work.path().join("store");
        let store = store(&root);
        // Each run starts on an empty disk and embeds one new text.
        let mut merged = 0;
        for run in 0..=MAX_SEGMENTS {
            let disk = cache(&work.path().join(format!("run-{run}")));
            pull(&store, &disk).await.unwrap();
            add(&disk, &format!("text {run}"), run as f32);
            merged += push(&store, &disk).await.unwrap().merged;
        }
        assert_eq!(merged, MAX_SEGMENTS + 1);
        assert_eq!(segments(&root).len(), 1);
        let fresh = cache(&work.path().join("fresh"));
        let pulled = pull(&store, &fresh).await.unwrap();
        assert_eq!(pulled.vectors, MAX_SEGMENTS + 1);
        assert_eq!(get(&fresh, "text 7"), Some(vec![7.0, -7.0]));
    }
}
