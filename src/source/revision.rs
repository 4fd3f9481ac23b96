//! Git revisions: a ref (or HEAD) resolved to a commit, the snapshot of a
//! commit, a first-parent history, and the repository's `origin`.

use gix::bstr::ByteSlice;

use super::git::GitSource;
use super::{Snapshot, SourceError, Version};
use agentfinder_skills_reader::store::redact_url;

/// The `origin` remote's fetch URL, credentials removed.
pub(super) fn origin_url(repo: &gix::Repository) -> Option<String> {
    let remote = repo.find_remote("origin").ok()?;
    let url = remote.url(gix::remote::Direction::Fetch)?;
    Some(redact_url(&url.to_bstring().to_string()))
}

/// The git repository whose work tree holds `path` (the root of that work
/// tree) and its `origin` remote, credentials removed; `None` when `path`
/// is in no git work tree.
pub fn enclosing_repository(
    path: &std::path::Path,
) -> Option<(std::path::PathBuf, Option<String>)> {
    let repo = gix::discover(path).ok()?;
    let root = repo.workdir()?.to_path_buf();
    Some((root, origin_url(&repo)))
}

/// Resolves `reference` (or HEAD) in `repo` to a commit and wraps it; the
/// snapshot's remote is the repository's `origin`.
pub(super) fn resolve(
    repo: gix::Repository,
    reference: Option<&str>,
    default_branch: &str,
    display: String,
) -> Result<Snapshot, SourceError> {
    let commit_id = resolve_commit(&repo, reference, &display)?;
    let origin = origin_url(&repo);
    let branch = match reference {
        Some(name) if !looks_like_commit(name) => name
            .trim_start_matches("refs/heads/")
            .trim_start_matches("refs/tags/")
            .to_string(),
        _ => head_branch(&repo).unwrap_or_else(|| default_branch.to_string()),
    };
    let mut snapshot = snapshot_at(repo.into_sync(), commit_id, branch, display)?;
    snapshot.remote_url = origin;
    Ok(snapshot)
}

/// A snapshot of `commit_id` in `repo`.
pub(super) fn snapshot_at(
    repo: gix::ThreadSafeRepository,
    commit_id: gix::ObjectId,
    branch: String,
    display: String,
) -> Result<Snapshot, SourceError> {
    let local = repo.to_thread_local();
    let resolve_error = |message: String| SourceError::Resolve {
        reference: commit_id.to_string(),
        source_name: display.clone(),
        message,
    };
    let (time, tree) = {
        let commit = local
            .find_commit(commit_id)
            .map_err(|e| resolve_error(e.to_string()))?;
        let time = commit
            .time()
            .map_err(|e| resolve_error(e.to_string()))?
            .seconds;
        let tree = commit.tree_id().map_err(|e| resolve_error(e.to_string()))?;
        (time, tree.detach())
    };
    let version = Version {
        id: commit_id.to_string(),
        time,
        branch,
        is_git: true,
    };
    let source = GitSource {
        repo,
        tree,
        display: display.clone(),
    };
    Ok(Snapshot::git(version, display, source))
}

/// Resolves a branch, tag, remote branch or commit id to a commit.
pub(super) fn resolve_commit(
    repo: &gix::Repository,
    reference: Option<&str>,
    display: &str,
) -> Result<gix::ObjectId, SourceError> {
    let wanted = reference.unwrap_or("HEAD");
    let resolve_error = |message: String| SourceError::Resolve {
        reference: wanted.to_string(),
        source_name: display.to_string(),
        message,
    };
    let candidates = [
        wanted.to_string(),
        format!("refs/remotes/origin/{wanted}"),
        format!("refs/tags/{wanted}"),
    ];
    let mut last_error = String::new();
    let mut commit = None;
    for candidate in &candidates {
        match repo.rev_parse_single(format!("{candidate}^{{commit}}").as_str()) {
            Ok(id) => {
                commit = Some(id.detach());
                break;
            }
            Err(e) => {
                if last_error.is_empty() {
                    last_error = e.to_string();
                }
            }
        }
    }
    commit.ok_or_else(|| resolve_error(last_error))
}

/// The first-parent history of `head`, newest first, stopping after `stop`
/// says so (its commit included) or at the root; a shallow boundary (a
/// parent the clone does not hold) is an error: a backfill needs the whole
/// history (see [`first_parent_in_clone`]).
pub(super) fn first_parent(
    repo: &gix::Repository,
    head: gix::ObjectId,
    display: &str,
    stop: impl FnMut(gix::ObjectId, i64) -> bool,
) -> Result<Vec<(gix::ObjectId, i64)>, SourceError> {
    let (out, shallow) = first_parent_in_clone(repo, head, display, stop)?;
    match (shallow, out.last()) {
        (true, Some((id, _))) => Err(SourceError::Git {
            source_name: display.to_string(),
            message: format!(
                "history stops at a shallow boundary below {id}; fetch full history (backfill clones it)"
            ),
        }),
        _ => Ok(out),
    }
}

/// As [`first_parent`], ending also at a shallow boundary, which it
/// reports (`true`) instead of failing.
pub(super) fn first_parent_in_clone(
    repo: &gix::Repository,
    head: gix::ObjectId,
    display: &str,
    mut stop: impl FnMut(gix::ObjectId, i64) -> bool,
) -> Result<(Vec<(gix::ObjectId, i64)>, bool), SourceError> {
    let git_error = |message: String| SourceError::Git {
        source_name: display.to_string(),
        message,
    };
    let mut out = Vec::new();
    let mut next = Some(head);
    while let Some(id) = next {
        let commit = repo.find_commit(id).map_err(|e| git_error(e.to_string()))?;
        let time = commit.time().map_err(|e| git_error(e.to_string()))?.seconds;
        out.push((id, time));
        if stop(id, time) {
            break;
        }
        next = commit.parent_ids().next().map(|p| p.detach());
        if next.is_some() && repo.is_shallow().unwrap_or(false) {
            // Parents below a shallow boundary are not in the object database.
            if let Some(parent) = next {
                if repo.find_commit(parent).is_err() {
                    return Ok((out, true));
                }
            }
        }
    }
    Ok((out, false))
}

fn head_branch(repo: &gix::Repository) -> Option<String> {
    let name = repo.head_name().ok()??;
    let short = name.shorten().to_str().ok()?.to_string();
    (short != "HEAD").then_some(short)
}

pub(super) fn looks_like_commit(reference: &str) -> bool {
    reference.len() >= 7
        && reference.len() <= 40
        && reference.bytes().all(|b| b.is_ascii_hexdigit())
}
