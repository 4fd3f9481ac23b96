//! Remote git sources: a bare clone in the cache folder, fetched again on
//! each use, shallow where the ref allows.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use sha2::{Digest, Sha256};

use super::revision::looks_like_commit;
use super::{network, Fetching, SourceError};
use agentfinder_skills_reader::store::{redact_text, redact_url};

/// Opens the cached clone of `url`, fetching updates, or clones it.
///
/// The clone is bare (no checkout: files are read from the object database)
/// and shallow: as deep as the history walk dates files (`history_depth`
/// commits and the one below them, so the walk ends at its bound, not at a
/// missing parent), unless `reference` looks like a commit id, which a
/// shallow fetch of branch tips may not contain, or the whole history is
/// wanted.
pub(super) fn clone_or_fetch(
    url: &str,
    reference: Option<&str>,
    fetching: &Fetching,
    full_history: bool,
) -> Result<gix::Repository, SourceError> {
    let cache_dir = fetching.cache_dir.as_path();
    let display = redact_url(url);
    let fetch_error = |message: String| {
        let message = redact_text(&message);
        match network::classify(&message) {
            Some(failure) => SourceError::Network {
                url: display.clone(),
                failure,
                message,
            },
            None => SourceError::Fetch {
                url: display.clone(),
                message,
            },
        }
    };
    if let Err((failure, message)) = network::probe(url, fetching.connect_timeout) {
        return Err(SourceError::Network {
            url: display.clone(),
            failure,
            message: redact_text(&message),
        });
    }
    let shallow = match reference {
        _ if full_history => gix::remote::fetch::Shallow::NoChange,
        Some(r) if looks_like_commit(r) => gix::remote::fetch::Shallow::NoChange,
        _ => match u32::try_from(fetching.history_depth.saturating_add(1))
            .ok()
            .and_then(NonZeroU32::new)
        {
            Some(depth) if fetching.history_depth > 0 => {
                gix::remote::fetch::Shallow::DepthAtRemote(depth)
            }
            _ => gix::remote::fetch::Shallow::NoChange,
        },
    };
    let interrupt = AtomicBool::new(false);
    let target = cache_path(cache_dir, &display);

    if let Ok(repo) = gix::open(&target) {
        let shallow = if repo.is_shallow().unwrap_or(false)
            && matches!(shallow, gix::remote::fetch::Shallow::NoChange)
        {
            // A commit id or a backfill may reach below the shallow boundary.
            gix::remote::fetch::Shallow::undo()
        } else {
            shallow
        };
        // The cache is bare: branches live in refs/heads/, as the clone made them.
        let remote = repo
            .find_remote("origin")
            .and_then(|r| {
                r.with_refspecs(
                    ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"],
                    gix::remote::Direction::Fetch,
                )
            })
            .map_err(|e| fetch_error(network::with_causes(&e)))?;
        remote
            .connect(gix::remote::Direction::Fetch)
            .map_err(|e| fetch_error(network::with_causes(&e)))?
            .prepare_fetch(gix::progress::Discard, Default::default())
            .map_err(|e| fetch_error(network::with_causes(&e)))?
            .with_shallow(shallow)
            .receive(gix::progress::Discard, &interrupt)
            .map_err(|e| fetch_error(network::with_causes(&e)))?;
        return Ok(repo);
    }

    std::fs::create_dir_all(cache_dir).map_err(|error| SourceError::Io {
        path: cache_dir.display().to_string(),
        error,
    })?;
    let staging = tempfile::Builder::new()
        .prefix(".clone-")
        .tempdir_in(cache_dir)
        .map_err(|error| SourceError::Io {
            path: cache_dir.display().to_string(),
            error,
        })?;
    let mut prepare = gix::prepare_clone_bare(url, staging.path())
        .map_err(|e| fetch_error(network::with_causes(&e)))?
        .with_shallow(shallow);
    prepare
        .fetch_only(gix::progress::Discard, &interrupt)
        .map_err(|e| fetch_error(network::with_causes(&e)))?;
    drop(prepare);
    let staged = staging.keep();
    if std::fs::rename(&staged, &target).is_err() {
        // Another run filled the cache first; use theirs.
        let _ = std::fs::remove_dir_all(&staged);
    }
    gix::open(&target).map_err(|e| fetch_error(network::with_causes(&e)))
}

/// The cache folder of a URL: a digest of its credential-free form.
fn cache_path(cache_dir: &Path, redacted_url: &str) -> PathBuf {
    let digest = hex::encode(Sha256::digest(redacted_url.as_bytes()));
    cache_dir.join(&digest[..16])
}
