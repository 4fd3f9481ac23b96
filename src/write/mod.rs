//! Write stage: `commits/<commit>/` in the artifact store.
//!
//! The new shared parts go first (create-only in effect: each is named by
//! its digest), then the manifest that names them, `_SUCCESS` last and
//! create-only: it names the manifest's sha256 and size, so a directory
//! without it is incomplete and one with it is complete and immutable. When two builders race on one commit,
//! exactly one `_SUCCESS` is created; the loser reports the commit as
//! already built.
//!
//! Which `commits/<id>/` a build writes (a commit can have several
//! artifacts, one per way it was built) is [`variant`]'s.

pub mod variant;

use std::collections::BTreeMap;

use bytes::Bytes;
use object_store::{ObjectStoreExt, PutMode};

use agentfinder_skills_reader::contract::parts::{bucket_path, list_path, pack_path, PACKS_DIR};
use agentfinder_skills_reader::contract::{
    ArtifactLocation, Manifest, SuccessMarker, MANIFEST_FILE, SCHEMA_VERSION, SUCCESS_FILE,
};
use agentfinder_skills_reader::read::digest_of;
use agentfinder_skills_reader::store::Store;

use crate::failpoint::failpoint;
use crate::lock::{LockError, LockGuard};
use crate::store::put::{put, put_content, put_content_at, Content, WriteError, WriteErrorKind};

/// What one commit's build adds to the store, before it is written.
#[derive(Debug)]
pub struct CommitFiles {
    /// The new parts (a pack, buckets and lists): what the commit changed.
    pub parts: crate::assemble::NewParts,
    /// The manifest; its artifact id is filled in by [`CommitFiles::seal`].
    pub manifest: Manifest,
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
        // Buckets before the lists that name them, lists before the manifest.
        for staged in self.parts.buckets {
            shared.push((bucket_path(&staged.digest.sha256), Content::File(staged)));
        }
        for (sha, bytes) in self.parts.lists {
            shared.push((list_path(&sha), Content::Bytes(bytes)));
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
