//! A commit's first-parent history, newest first, as far as a walk needs
//! it: read once per build to place the walk's bound (see
//! [`bound`](super::bound)), and kept for the next build of the process,
//! which in a backfill is the child's (all but its first commit were just
//! read: 5,000 commit reads saved per commit).

use super::git::commit_parts;

/// Up to `len` commits of the first-parent history from `commit`, newest
/// first, with their times; and whether it ended early at a shallow
/// boundary (a parent the clone does not hold) rather than the root.
pub(super) fn first_parents(
    repo: &gix::Repository,
    commit: gix::ObjectId,
    len: usize,
) -> Result<(Vec<(gix::ObjectId, i64)>, bool), String> {
    let mut history = Vec::new();
    let mut next = Some(commit);
    let recent = recent_history(repo);
    while let Some(id) = next.filter(|_| history.len() < len) {
        if let Some(recent) = recent.as_ref().filter(|r| r.history[0].0 == id) {
            let need = len - history.len();
            if recent.history.len() >= need || recent.end != End::Cut {
                history.extend(recent.history.iter().take(need));
                let boundary = history.len() < len && recent.end == End::Boundary;
                remember_history(repo, &history, len, boundary);
                return Ok((history, boundary));
            }
        }
        let parts = match commit_parts(repo, id) {
            Ok(parts) => parts,
            // Past a shallow clone's boundary the parent is not held.
            Err(_) if !history.is_empty() && repo.is_shallow().unwrap_or(false) => {
                remember_history(repo, &history, len, true);
                return Ok((history, true));
            }
            Err(e) => return Err(e),
        };
        history.push((id, parts.0));
        next = parts.2;
    }
    remember_history(repo, &history, len, false);
    Ok((history, false))
}

/// How a first-parent history that was read ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// Where the reader stopped: more history follows.
    Cut,
    /// At the root commit.
    Root,
    /// At a shallow clone's boundary.
    Boundary,
}

/// The first-parent history last read, newest first, and of which
/// repository (its git folder).
#[derive(Debug, Clone)]
struct Recent {
    dir: std::path::PathBuf,
    history: Vec<(gix::ObjectId, i64)>,
    end: End,
}

static RECENT_HISTORY: std::sync::Mutex<Option<Recent>> = std::sync::Mutex::new(None);

/// The history last read in `repo`, if any.
fn recent_history(repo: &gix::Repository) -> Option<Recent> {
    let recent = RECENT_HISTORY.lock().ok()?;
    recent
        .as_ref()
        .filter(|r| r.dir == repo.git_dir() && !r.history.is_empty())
        .cloned()
}

/// Keeps `history`, read up to `len` commits, for the next reader.
fn remember_history(
    repo: &gix::Repository,
    history: &[(gix::ObjectId, i64)],
    len: usize,
    boundary: bool,
) {
    let end = match (history.len() >= len, boundary) {
        (true, _) => End::Cut,
        (false, true) => End::Boundary,
        (false, false) => End::Root,
    };
    if let Ok(mut recent) = RECENT_HISTORY.lock() {
        *recent = Some(Recent {
            dir: repo.git_dir().to_path_buf(),
            history: history.to_vec(),
            end,
        });
    }
}
