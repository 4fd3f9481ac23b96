//! Write stage: `commits/<commit>/` in the artifact store.
//!
//! The new shared parts go first (create-only in effect: each is named by
//! its digest), then the manifest that names them, `_SUCCESS` last and
//! create-only: it names the manifest's sha256 and size, so a directory
//! without it is incomplete and one with it is complete and immutable. When two builders race on one commit,
//! exactly one `_SUCCESS` is created; the loser reports the commit as
//! already built.

use std::collections::BTreeMap;

use bytes::Bytes;
use object_store::{ObjectStoreExt, PutMode, PutOptions, PutPayload, WriteMultipart};
use tokio::io::AsyncReadExt;

use agentfinder_skills_reader::artifact::digest_of;
use agentfinder_skills_reader::contract::{
    ArtifactLocation, FileDigest, Manifest, SuccessMarker, MANIFEST_FILE, SCHEMA_VERSION,
    SUCCESS_FILE,
};
use agentfinder_skills_reader::parts::{bucket_path, pack_path, PACKS_DIR};
use agentfinder_skills_reader::store::{redact_text, Store};
use sha2::{Digest, Sha256};

use crate::failpoint::failpoint;
use crate::lock::{LockError, LockGuard};
use crate::staging::StagedFile;

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

/// What one commit's build adds to the store, before it is written.
#[derive(Debug)]
pub struct CommitFiles {
    /// The new parts (a pack and buckets), most buckets already stored.
    pub parts: crate::assemble::NewParts,
    /// The manifest; its artifact id is filled in by [`CommitFiles::seal`].
    pub manifest: Manifest,
}

/// Where the bytes of a file to write come from.
#[derive(Debug, Clone)]
pub enum Content {
    /// A staged file on disk, streamed when large.
    File(StagedFile),
    /// Bytes in memory.
    Bytes(Bytes),
}

/// Serialised files and the marker that vouches for them.
#[derive(Debug, Clone)]
pub struct SealedArtifact {
    /// Shared, content-addressed objects, written first and only when absent.
    pub shared: Vec<(object_store::path::Path, Content)>,
    /// (file name, content) of the artifact's folder, in write order.
    pub files: Vec<(&'static str, Content)>,
    /// `_SUCCESS`.
    pub success: SuccessMarker,
}

impl CommitFiles {
    /// Records the artifact's id (its folder under `commits/`) in the
    /// manifest and in `_SUCCESS`, which vouches for the manifest (and it,
    /// by digest, for every part).
    pub fn seal(mut self, artifact_id: &str) -> SealedArtifact {
        self.manifest.artifact_id = Some(artifact_id.to_string());
        let mut manifest = serde_json::to_vec_pretty(&self.manifest).unwrap_or_default();
        manifest.push(b'\n');
        let manifest = Bytes::from(manifest);
        let mut digests = BTreeMap::new();
        digests.insert(MANIFEST_FILE.to_string(), digest_of(&manifest));
        let mut shared = Vec::new();
        if let Some(pack) = self.parts.pack {
            shared.push((pack_path(&pack.digest.sha256), Content::File(pack)));
        }
        for (sha, bytes) in self.parts.buckets {
            shared.push((bucket_path(&sha), Content::Bytes(bytes)));
        }
        SealedArtifact {
            shared,
            files: vec![(MANIFEST_FILE, Content::Bytes(manifest))],
            success: SuccessMarker {
                schema_version: SCHEMA_VERSION,
                commit: self.manifest.source_commit.clone(),
                generated_at: self.manifest.generated_at.clone(),
                files: digests,
                artifact_id: Some(artifact_id.to_string()),
            },
        }
    }
}

/// What [`write_commit`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    /// This run wrote the artifact.
    Written,
    /// Another builder completed the same commit first; theirs stands.
    AlreadyComplete,
}

/// Writes `artifact` to `commits/<artifact id>/`, `_SUCCESS` last and
/// create-only; `guard` is asked before each file whether this builder may
/// still write (its lock is held).
pub async fn write_commit(
    store: &Store,
    artifact: &SealedArtifact,
    guard: &LockGuard,
) -> Result<WriteOutcome, WriteError> {
    let location = ArtifactLocation::Commit(artifact.success.artifact_id().to_string());
    for (path, content) in &artifact.shared {
        guard
            .check()
            .map_err(|e| lost(store, &location, path.as_ref(), e))?;
        put_shared(store, path, content).await?;
        if path.as_ref().starts_with(PACKS_DIR) {
            failpoint("commit-after-pack");
        }
    }
    failpoint("commit-after-parts");
    for (name, content) in &artifact.files {
        guard.check().map_err(|e| lost(store, &location, name, e))?;
        put_content(store, &location, name, content).await?;
        failpoint(&format!("commit-after-{name}"));
    }
    let marker = success_bytes(&artifact.success);
    guard
        .check()
        .map_err(|e| lost(store, &location, SUCCESS_FILE, e))?;
    match put(
        store,
        &location,
        SUCCESS_FILE,
        marker.clone(),
        PutMode::Create,
    )
    .await
    {
        Ok(()) => {}
        Err(e) if e.kind == WriteErrorKind::AlreadyExists => {
            return Ok(WriteOutcome::AlreadyComplete)
        }
        // A store without conditional writes: the commit lock is what guards this.
        Err(e) if e.kind == WriteErrorKind::NotImplemented => {
            put(store, &location, SUCCESS_FILE, marker, PutMode::Overwrite).await?;
        }
        Err(e) => return Err(e),
    }
    failpoint("commit-after-success");
    Ok(WriteOutcome::Written)
}

/// Writes a content-addressed object unless it is there: its name is its
/// digest, so what is there is these bytes, and builders only ever add.
async fn put_shared(
    store: &Store,
    path: &object_store::path::Path,
    content: &Content,
) -> Result<(), WriteError> {
    match store.inner.head(path).await {
        Ok(_) => return Ok(()),
        Err(object_store::Error::NotFound { .. }) => {}
        Err(e) => return Err(WriteError::from_store(store, path, e)),
    }
    put_content_at(store, path, content).await
}

/// A write refused because the builder's lock is gone.
fn lost(store: &Store, location: &ArtifactLocation, name: &str, e: LockError) -> WriteError {
    WriteError {
        store: store.display.clone(),
        path: location.file(name).to_string(),
        message: format!("stopped before writing: {e}"),
        kind: WriteErrorKind::LockLost,
    }
}

/// Serialises a `_SUCCESS` marker.
pub fn success_bytes(marker: &SuccessMarker) -> Bytes {
    let mut bytes = serde_json::to_vec_pretty(marker).unwrap_or_default();
    bytes.push(b'\n');
    Bytes::from(bytes)
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
