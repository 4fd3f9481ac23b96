//! The NDJSON documents of an artifact, read as a stream: in batches of
//! whole lines, checked against `_SUCCESS` as they go, so neither `verify`
//! nor `sync` holds a multi-gigabyte file in memory.
//!
//! The digest is known only after the last byte: a consumer must not make
//! anything visible before the stream ends with `Ok` (sync loads a staging
//! index and swaps only then).

use std::future::Future;

use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use object_store::ObjectStoreExt;
use sha2::{Digest, Sha256};

use crate::contract::{
    ArtifactLocation, Document, DocumentRules, Manifest, SuccessMarker, DOCUMENTS_FILE, KIND_SKILL,
};
use crate::read::{line_cut, DocumentStats, ReadError, StreamError};
use crate::store::Store;

/// Streams `location`'s documents to `consume` in batches of whole lines of
/// at most `max_bytes` (a longer line is a batch of its own). A file is
/// checked whole against `success` at the end (a mismatch is
/// [`ReadError::InProgress`]); an artifact of shared parts has each part
/// checked before it is passed on.
pub async fn for_each_batch<E, F, Fut>(
    store: &Store,
    location: &ArtifactLocation,
    success: &SuccessMarker,
    manifest: &Manifest,
    max_bytes: usize,
    consume: F,
) -> Result<(), StreamError<E>>
where
    F: FnMut(Bytes) -> Fut,
    Fut: Future<Output = Result<(), E>>,
{
    match crate::contract::parts::composed_index(manifest) {
        Some(index) => {
            let entries = crate::parts::read_entries(store, location, index)
                .await
                .map_err(StreamError::Read)?;
            crate::parts::for_each_document_batch(store, location, &entries, max_bytes, consume)
                .await
        }
        None => for_each_file_batch(store, location, success, max_bytes, consume).await,
    }
}

async fn for_each_file_batch<E, F, Fut>(
    store: &Store,
    location: &ArtifactLocation,
    success: &SuccessMarker,
    max_bytes: usize,
    mut consume: F,
) -> Result<(), StreamError<E>>
where
    F: FnMut(Bytes) -> Fut,
    Fut: Future<Output = Result<(), E>>,
{
    let path = location.file(DOCUMENTS_FILE);
    let read = |message: String| StreamError::Read(ReadError::store(&path, &message));
    let in_progress = |reason: String| {
        StreamError::Read(ReadError::InProgress {
            location: location.to_string(),
            file: DOCUMENTS_FILE.to_string(),
            reason,
        })
    };
    let expected = success
        .files
        .get(DOCUMENTS_FILE)
        .ok_or_else(|| in_progress("_SUCCESS does not list it".into()))?;
    let got = match store.inner.get(&path).await {
        Ok(got) => got,
        Err(object_store::Error::NotFound { .. }) => {
            return Err(in_progress("file missing".into()))
        }
        Err(e) => return Err(read(e.to_string())),
    };
    let mut stream = got.into_stream();
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    let mut pending = BytesMut::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| read(e.to_string()))?;
        hasher.update(&chunk);
        size += chunk.len() as u64;
        pending.extend_from_slice(&chunk);
        while pending.len() >= max_bytes {
            let Some(cut) = line_cut(&pending, max_bytes) else {
                break; // one long line: wait for its end
            };
            consume(pending.split_to(cut).freeze())
                .await
                .map_err(StreamError::Consumer)?;
        }
    }
    if !pending.is_empty() {
        consume(pending.freeze())
            .await
            .map_err(StreamError::Consumer)?;
    }
    let sha256 = hex::encode(hasher.finalize());
    if sha256 != expected.sha256 || size != expected.size {
        return Err(in_progress(format!(
            "streamed sha256 {} size {size} where _SUCCESS says sha256 {} size {}",
            &sha256[..12],
            &expected.sha256[..expected.sha256.len().min(12)],
            expected.size
        )));
    }
    Ok(())
}

/// Checks NDJSON lines against the contract as they come: valid, unique
/// ids (remembered as 64-bit hashes), non-empty content, the manifest's
/// commit, and at the end the manifest's counts.
#[derive(Debug)]
pub struct DocumentCheck<'a> {
    location: &'a ArtifactLocation,
    manifest: &'a Manifest,
    rules: DocumentRules,
    stats: DocumentStats,
    line: usize,
}

impl<'a> DocumentCheck<'a> {
    /// Starts checking the documents of `manifest`'s artifact at `location`.
    pub fn new(location: &'a ArtifactLocation, manifest: &'a Manifest) -> Self {
        Self {
            location,
            manifest,
            rules: DocumentRules::default(),
            stats: DocumentStats::default(),
            line: 0,
        }
    }

    fn invalid(&self, line: Option<usize>, message: String) -> ReadError {
        ReadError::Invalid {
            location: self.location.to_string(),
            file: DOCUMENTS_FILE.to_string(),
            line,
            message,
        }
    }

    /// Checks a batch of whole lines.
    pub fn batch(&mut self, bytes: &[u8]) -> Result<(), ReadError> {
        let text = std::str::from_utf8(bytes)
            .map_err(|e| self.invalid(Some(self.line + 1), format!("not UTF-8: {e}")))?;
        if !text.is_empty() && !text.ends_with('\n') {
            return Err(self.invalid(None, "last line is not newline-terminated".into()));
        }
        for line in text.lines() {
            self.line += 1;
            self.document(line)?;
        }
        Ok(())
    }

    fn document(&mut self, line: &str) -> Result<(), ReadError> {
        let at = Some(self.line);
        let doc: Document =
            serde_json::from_str(line).map_err(|e| self.invalid(at, e.to_string()))?;
        if let Err(violation) = self.rules.check(&doc) {
            return Err(self.invalid(at, format!("document `{}`: {violation}", doc.id)));
        }
        // From schema 5 a document is pinned to the commit that last
        // changed its file, which may be older than the artifact's.
        let pinned_older = self.manifest.schema_version >= 5 && !doc.commit.is_empty();
        if doc.commit != self.manifest.source_commit && !pinned_older {
            return Err(self.invalid(
                at,
                format!("document `{}` names commit {}", doc.id, doc.commit),
            ));
        }
        self.stats.documents += 1;
        if doc.kind == KIND_SKILL {
            self.stats.skills += 1;
        }
        Ok(())
    }

    /// Checks the counts the manifest claims.
    pub fn finish(self) -> Result<DocumentStats, ReadError> {
        let (stats, manifest) = (self.stats, self.manifest);
        if stats.documents != manifest.document_count {
            return Err(self.invalid(
                None,
                format!(
                    "{} documents where the manifest says {}",
                    stats.documents, manifest.document_count
                ),
            ));
        }
        if stats.skills != manifest.skill_count {
            return Err(self.invalid(
                None,
                format!(
                    "{} skill documents where the manifest says {}",
                    stats.skills, manifest.skill_count
                ),
            ));
        }
        Ok(stats)
    }
}

/// Streams and checks every document of the artifact at `location`.
pub async fn check_streamed(
    store: &Store,
    location: &ArtifactLocation,
    success: &SuccessMarker,
    manifest: &Manifest,
) -> Result<DocumentStats, ReadError> {
    let mut check = DocumentCheck::new(location, manifest);
    let result = for_each_batch(
        store,
        location,
        success,
        manifest,
        8 * 1024 * 1024,
        |batch| {
            let outcome = check.batch(&batch);
            async move { outcome }
        },
    )
    .await;
    match result {
        Ok(()) => check.finish(),
        Err(StreamError::Read(e) | StreamError::Consumer(e)) => Err(e),
    }
}
