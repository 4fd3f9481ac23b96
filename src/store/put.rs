//! Writing objects into the artifact store, for every stage that writes
//! (the commit's files, `latest/`, the shared vector cache, locks): plain
//! and conditional puts, files streamed in parts or moved into a local
//! store, deletes, and the error each reports.

use bytes::Bytes;
use object_store::{ObjectStoreExt, PutMode, PutOptions, PutPayload, WriteMultipart};
use tokio::io::AsyncReadExt;

use agentfinder_skills_reader::contract::{ArtifactLocation, FileDigest};
use agentfinder_skills_reader::store::{redact_text, Store};
use sha2::{Digest, Sha256};

use super::staging::StagedFile;

/// A store write failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path} to {store}: {message}")]
pub struct WriteError {
    /// The store, redacted.
    pub store: String,
    /// The object.
    pub path: String,
    /// Why, redacted.
    pub message: String,
    /// What kind of failure, for callers that handle some.
    pub kind: WriteErrorKind,
}

/// Failures a caller may handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteErrorKind {
    /// A create-only write found an object there.
    AlreadyExists,
    /// The store does not support the conditional write.
    NotImplemented,
    /// The builder's lock was lost (its lease ran out, or another builder
    /// took it over), so it stopped writing.
    LockLost,
    /// Anything else (after the client's retries).
    Other,
}

impl WriteError {
    /// A store error on `path`, classified.
    pub fn from_store(
        store: &Store,
        path: &object_store::path::Path,
        e: object_store::Error,
    ) -> Self {
        let kind = match e {
            object_store::Error::AlreadyExists { .. } => WriteErrorKind::AlreadyExists,
            object_store::Error::NotImplemented { .. } => WriteErrorKind::NotImplemented,
            _ => WriteErrorKind::Other,
        };
        Self {
            store: store.display.clone(),
            path: path.to_string(),
            message: redact_text(&e.to_string()),
            kind,
        }
    }
}

/// Where the bytes of a file to write come from.
#[derive(Debug, Clone)]
pub enum Content {
    /// A staged file on disk, streamed when large.
    File(StagedFile),
    /// Bytes in memory.
    Bytes(Bytes),
}

/// Puts one file of `location`.
pub async fn put(
    store: &Store,
    location: &ArtifactLocation,
    name: &str,
    bytes: Bytes,
    mode: PutMode,
) -> Result<(), WriteError> {
    put_at(store, &location.file(name), bytes, mode).await
}

/// Puts the object `path`.
pub async fn put_at(
    store: &Store,
    path: &object_store::path::Path,
    bytes: Bytes,
    mode: PutMode,
) -> Result<(), WriteError> {
    put_raw(store, path, bytes, mode)
        .await
        .map_err(|e| WriteError::from_store(store, path, e))
}

/// Puts the object `path`, returning the store's own error (for callers
/// that tell its kinds apart, like the lock's create and update races).
pub async fn put_raw(
    store: &Store,
    path: &object_store::path::Path,
    bytes: Bytes,
    mode: PutMode,
) -> Result<(), object_store::Error> {
    let options = PutOptions {
        mode,
        ..Default::default()
    };
    store
        .inner
        .put_opts(path, PutPayload::from(bytes), options)
        .await
        .map(|_| ())
}

/// Files larger than this are uploaded in parts, streamed from disk.
pub const MULTIPART_THRESHOLD: u64 = 16 * 1024 * 1024;
/// Size of one uploaded part.
const PART_BYTES: usize = 8 * 1024 * 1024;

/// Writes `content` as `location/name`, replacing what is there. Large files
/// go up in parts, which become visible only once complete.
pub async fn put_content(
    store: &Store,
    location: &ArtifactLocation,
    name: &str,
    content: &Content,
) -> Result<(), WriteError> {
    put_content_at(store, &location.file(name), content).await
}

/// Writes `content` as the object `path` (see [`put_content`]); a staged
/// file in a local store is moved, not copied.
pub async fn put_content_at(
    store: &Store,
    path: &object_store::path::Path,
    content: &Content,
) -> Result<(), WriteError> {
    let staged = match content {
        Content::Bytes(bytes) => {
            return put_at(store, path, bytes.clone(), PutMode::Overwrite).await
        }
        Content::File(staged) => staged,
    };
    let path = path.clone();
    let error = |message: String| WriteError {
        store: store.display.clone(),
        path: path.to_string(),
        message: redact_text(&message),
        kind: WriteErrorKind::Other,
    };
    if let Some(root) = &store.local_root {
        let (source, target) = (staged.path.clone(), root.join(path.as_ref()));
        return tokio::task::spawn_blocking(move || local_move(&source, &target))
            .await
            .map_err(|e| error(e.to_string()))?
            .map_err(|e| error(e.to_string()));
    }
    if staged.digest.size <= MULTIPART_THRESHOLD {
        let bytes = tokio::fs::read(&staged.path)
            .await
            .map_err(|e| error(e.to_string()))?;
        return put_at(store, &path, Bytes::from(bytes), PutMode::Overwrite).await;
    }
    let file = tokio::fs::File::open(&staged.path)
        .await
        .map_err(|e| error(e.to_string()))?;
    let chunks = futures::stream::unfold(file, |mut file| async move {
        let mut buffer = vec![0u8; PART_BYTES];
        match file.read(&mut buffer).await {
            Ok(0) => None,
            Ok(read) => {
                buffer.truncate(read);
                Some((Ok(Bytes::from(buffer)), file))
            }
            Err(e) => Some((Err(e.to_string()), file)),
        }
    });
    let expected = &staged.digest;
    match upload_in_parts(store, &path, Box::pin(chunks), |sent| sent == expected).await {
        Ok(_) => Ok(()),
        Err(PartsError::Read(message)) => Err(error(message)),
        Err(PartsError::Write(e)) => Err(e),
        Err(PartsError::Rejected(sent)) => Err(error(format!(
            "the staged file changed while it was uploaded (sha256 {} size {}); nothing was made visible",
            sent.sha256, sent.size
        ))),
    }
}

/// Why [`upload_in_parts`] made nothing visible.
#[derive(Debug)]
pub enum PartsError {
    /// Reading the chunks failed.
    Read(String),
    /// The store failed.
    Write(WriteError),
    /// The bytes sent were not accepted (their digest is given).
    Rejected(FileDigest),
}

/// Uploads `chunks` to `path` in parts, hashing them on the way. The
/// object becomes visible only if `accept` agrees with the digest of all
/// that was sent; otherwise (or on any failure) the upload is aborted.
pub async fn upload_in_parts(
    store: &Store,
    path: &object_store::path::Path,
    mut chunks: std::pin::Pin<Box<dyn futures::Stream<Item = Result<Bytes, String>> + Send + '_>>,
    accept: impl FnOnce(&FileDigest) -> bool,
) -> Result<FileDigest, PartsError> {
    use futures::StreamExt;
    let write_error =
        |e: object_store::Error| PartsError::Write(WriteError::from_store(store, path, e));
    let upload = store.inner.put_multipart(path).await.map_err(write_error)?;
    let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_BYTES);
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    while let Some(chunk) = chunks.next().await {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(message) => {
                let _ = writer.abort().await;
                return Err(PartsError::Read(message));
            }
        };
        hasher.update(&chunk);
        size += chunk.len() as u64;
        if let Err(e) = writer.wait_for_capacity(4).await {
            return Err(write_error(e));
        }
        writer.write(&chunk);
    }
    let sent = FileDigest {
        sha256: hex::encode(hasher.finalize()),
        size,
    };
    if !accept(&sent) {
        let _ = writer.abort().await;
        return Err(PartsError::Rejected(sent));
    }
    writer.finish().await.map_err(write_error)?;
    Ok(sent)
}

/// Moves a staged file into place on a local file system: a rename when both
/// are on one file system (staging sits beside a local store), else a copy.
/// Either way readers see no file or the whole file.
fn local_move(source: &std::path::Path, target: &std::path::Path) -> std::io::Result<()> {
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir)?;
    }
    match std::fs::rename(source, target) {
        Ok(()) => Ok(()),
        Err(_) => local_copy(source, target, None),
    }
}

/// Copies `source` to `target` on a local file system: into a temporary file
/// beside the target, checked against `expected` when given, then renamed
/// into place, so readers see the old file or the whole new one.
pub fn local_copy(
    source: &std::path::Path,
    target: &std::path::Path,
    expected: Option<&FileDigest>,
) -> std::io::Result<()> {
    let dir = target.parent().unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(dir)?;
    let temp = tempfile::Builder::new()
        .prefix(".upload-")
        .tempfile_in(dir)?;
    std::fs::copy(source, temp.path())?;
    if let Some(expected) = expected {
        let mut hasher = Sha256::new();
        let mut file = std::fs::File::open(temp.path())?;
        let size = std::io::copy(&mut file, &mut hasher)?;
        let sha256 = hex::encode(hasher.finalize());
        if sha256 != expected.sha256 || size != expected.size {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "sha256 {sha256} size {size} does not match _SUCCESS (sha256 {} size {})",
                    expected.sha256, expected.size
                ),
            ));
        }
    }
    temp.persist(target).map_err(|e| e.error)?;
    Ok(())
}

/// Deletes one file of `location`; a missing file is fine.
pub async fn delete(
    store: &Store,
    location: &ArtifactLocation,
    name: &str,
) -> Result<(), WriteError> {
    let path = location.file(name);
    match store.inner.delete(&path).await {
        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
        Err(e) => Err(WriteError::from_store(store, &path, e)),
    }
}
