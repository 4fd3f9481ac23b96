//! Reading an artifact directory safely.
//!
//! A directory is read only when its `_SUCCESS` is present, and every file
//! read is checked against the digest `_SUCCESS` names. A reader that races a
//! promotion therefore gets [`ReadError::InProgress`], never a mix of two
//! builds.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;

use crate::contract::{
    ArtifactLocation, Manifest, SuccessMarker, DATA_FILES, DOCUMENTS_FILE, MANIFEST_FILE,
    MIN_SCHEMA_VERSION, SCHEMA_VERSION, SUCCESS_FILE,
};
use crate::read::{digest_of, get_optional, retrying, DocumentStats, ReadError};
use crate::store::Store;

/// A complete, verified artifact held in memory.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// Where it was read from.
    pub location: ArtifactLocation,
    /// The `_SUCCESS` marker that vouched for the files.
    pub success: SuccessMarker,
    /// The parsed manifest.
    pub manifest: Manifest,
    /// The raw NDJSON bytes.
    pub documents: Bytes,
    /// Raw bytes of every data file, by name.
    pub files: BTreeMap<String, Bytes>,
}

/// Reads `_SUCCESS` of `location`; `Ok(None)` when it does not exist.
pub async fn read_success(
    store: &Store,
    location: &ArtifactLocation,
) -> Result<Option<SuccessMarker>, ReadError> {
    let Some(bytes) = get_optional(store, &location.file(SUCCESS_FILE)).await? else {
        return Ok(None);
    };
    let marker = serde_json::from_slice(&bytes).map_err(|e| ReadError::Invalid {
        location: location.to_string(),
        file: SUCCESS_FILE.to_string(),
        line: Some(e.line()),
        message: format!("not a valid {SUCCESS_FILE} marker: {e}"),
    })?;
    Ok(Some(marker))
}

/// Reads one file of `location` and checks it against `success`.
pub async fn read_verified_file(
    store: &Store,
    location: &ArtifactLocation,
    success: &SuccessMarker,
    file: &str,
) -> Result<Bytes, ReadError> {
    let in_progress = |reason: String| ReadError::InProgress {
        location: location.to_string(),
        file: file.to_string(),
        reason,
    };
    let expected = success
        .files
        .get(file)
        .ok_or_else(|| in_progress(format!("{SUCCESS_FILE} does not list it")))?;
    let bytes = get_optional(store, &location.file(file))
        .await?
        .ok_or_else(|| in_progress("file missing".to_string()))?;
    let actual = digest_of(&bytes);
    if &actual != expected {
        return Err(in_progress(format!(
            "sha256 {} size {} where {SUCCESS_FILE} says sha256 {} size {}",
            short(&actual.sha256),
            actual.size,
            short(&expected.sha256),
            expected.size
        )));
    }
    Ok(bytes)
}

/// Reads one data file of `location` whole: the stored file checked
/// against `success`, or for an artifact of shared parts the file composed
/// from them (each part checked as it is read).
pub async fn read_data_file(
    store: &Store,
    location: &ArtifactLocation,
    success: &SuccessMarker,
    manifest: &Manifest,
    file: &str,
) -> Result<Bytes, ReadError> {
    match crate::contract::parts::composed_index(manifest) {
        Some(index) => crate::parts::compose_file(store, location, index, file).await,
        None => read_verified_file(store, location, success, file).await,
    }
}

/// Reads `_SUCCESS` and the manifest of `location`, verified and checked
/// against each other, without reading the (possibly large) documents.
pub async fn read_manifest(
    store: &Store,
    location: &ArtifactLocation,
) -> Result<(SuccessMarker, Manifest), ReadError> {
    let (success, manifest, _) = read_head(store, location).await?;
    Ok((success, manifest))
}

async fn read_head(
    store: &Store,
    location: &ArtifactLocation,
) -> Result<(SuccessMarker, Manifest, Bytes), ReadError> {
    let Some(success) = read_success(store, location).await? else {
        return Err(missing_success(store, location).await);
    };
    let bytes = read_verified_file(store, location, &success, MANIFEST_FILE).await?;
    let invalid = |line: Option<usize>, message: String| ReadError::Invalid {
        location: location.to_string(),
        file: MANIFEST_FILE.to_string(),
        line,
        message,
    };
    let manifest: Manifest =
        serde_json::from_slice(&bytes).map_err(|e| invalid(Some(e.line()), e.to_string()))?;
    let known = MIN_SCHEMA_VERSION..=SCHEMA_VERSION;
    if !known.contains(&manifest.schema_version)
        || manifest.schema_version != success.schema_version
    {
        return Err(invalid(
            None,
            format!(
                "schema_version {} (marker {}) is not one this reader knows ({MIN_SCHEMA_VERSION} to {SCHEMA_VERSION})",
                manifest.schema_version, success.schema_version
            ),
        ));
    }
    if manifest.source_commit != success.commit {
        return Err(invalid(
            None,
            format!(
                "source_commit {} differs from {SUCCESS_FILE} commit {}",
                manifest.source_commit, success.commit
            ),
        ));
    }
    if let ArtifactLocation::Commit(id) = location {
        if id != success.artifact_id() {
            return Err(ReadError::Invalid {
                location: location.to_string(),
                file: SUCCESS_FILE.to_string(),
                line: None,
                message: format!(
                    "names artifact {} but lives under commits/{id}/",
                    success.artifact_id()
                ),
            });
        }
    }
    for (file, digest) in &manifest.files {
        if success.files.get(file) != Some(digest) {
            return Err(invalid(
                None,
                format!("its digest of {file} differs from {SUCCESS_FILE}"),
            ));
        }
    }
    Ok((success, manifest, bytes))
}

/// Why `location` has no `_SUCCESS`: empty, or a write under way.
async fn missing_success(store: &Store, location: &ArtifactLocation) -> ReadError {
    let prefix = object_store::path::Path::from(location.prefix());
    let mut listing = store.inner.list(Some(&prefix));
    match futures::StreamExt::next(&mut listing).await {
        None => ReadError::Empty {
            location: location.to_string(),
        },
        Some(_) => ReadError::NotFound {
            location: location.to_string(),
        },
    }
}

/// Reads and verifies every file of the artifact at `location`.
///
/// Checks digests against `_SUCCESS`, that the manifest parses, carries a
/// schema version this reader knows, and names the same commit as `_SUCCESS`.
/// Documents are not parsed: see [`check_documents`].
pub async fn read_artifact(
    store: &Store,
    location: &ArtifactLocation,
) -> Result<Artifact, ReadError> {
    let (success, manifest, manifest_bytes) = read_head(store, location).await?;
    let mut files = BTreeMap::new();
    for file in DATA_FILES {
        let bytes = if file == MANIFEST_FILE {
            manifest_bytes.clone()
        } else {
            read_data_file(store, location, &success, &manifest, file).await?
        };
        files.insert(file.to_string(), bytes);
    }
    let documents = files[DOCUMENTS_FILE].clone();
    Ok(Artifact {
        location: location.clone(),
        success,
        manifest,
        documents,
        files,
    })
}

/// Like [`read_artifact`], retrying a missing `_SUCCESS` or a digest
/// mismatch up to `attempts` times in all, with a doubling pause from
/// `first_pause`.
pub async fn read_artifact_retrying(
    store: &Store,
    location: &ArtifactLocation,
    attempts: u32,
    first_pause: Duration,
) -> Result<Artifact, ReadError> {
    retrying(attempts, first_pause, || read_artifact(store, location)).await
}

/// Like [`read_manifest`], with [`read_artifact_retrying`]'s retries.
pub async fn read_manifest_retrying(
    store: &Store,
    location: &ArtifactLocation,
    attempts: u32,
    first_pause: Duration,
) -> Result<(SuccessMarker, Manifest), ReadError> {
    retrying(attempts, first_pause, || read_manifest(store, location)).await
}

/// Parses every NDJSON line of an artifact in memory as a [`Document`] and
/// checks the contract (see [`crate::documents::DocumentCheck`]).
pub fn check_documents(artifact: &Artifact) -> Result<DocumentStats, ReadError> {
    let mut check = crate::documents::DocumentCheck::new(&artifact.location, &artifact.manifest);
    check.batch(&artifact.documents)?;
    check.finish()
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}
