//! A commit's first-parent history, newest first, as far as a walk needs
//! it: read once per build to place the walk's bound (see
//! [`bound`](super::bound)), and kept for the next build of the process,
//! which in a backfill is the child's (all but its first commit were just
//! read: 5,000 commit reads saved per commit).

use super::git::commit_parts;
use super::revision::first_parent_in_clone;
use super::SourceError;

/// Up to `len` commits of the first-parent history from `commit`, newest
/// first, with their times; and whether it ended early at a shallow
/// boundary (a parent the clone does not hold) rather than the root.
pub(super) fn first_parents(
    repo: &gix::Repository,
    commit: gix::ObjectId,
    len: usize,
    display: &str,
) -> Result<(Vec<(gix::ObjectId, i64)>, bool), SourceError> {
    let git_error = |message: String| SourceError::Git {
        source_name: display.to_string(),
        message,
    };
    // The history last read, when it starts at `commit` or at its parent
    // and holds what is asked (or all there is).
    if len == 0 {
        return Ok((Vec::new(), false));
    }
    if let Some(recent) = recent_history(repo) {
        let (start, first) = match recent.history[0].0 == commit {
            true => (Vec::new(), commit),
            false => {
                let (time, _, parent) = commit_parts(repo, commit).map_err(git_error)?;
                (vec![(commit, time)], parent.unwrap_or(commit))
            }
        };
        let need = len - start.len();
        if recent.history[0].0 == first && (recent.history.len() >= need || recent.end != End::Cut)
        {
            let mut history = start;
            history.extend(recent.history.iter().take(need));
            let boundary = history.len() < len && recent.end == End::Boundary;
            remember_history(repo, &history, len, boundary);
            return Ok((history, boundary));
        }
    }
    let mut counted = 0;
    let (history, boundary) = first_parent_in_clone(repo, commit, display, |_, _| {
        counted += 1;
        counted >= len
    })?;
    remember_history(repo, &history, len, boundary);
    Ok((history, boundary))
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
