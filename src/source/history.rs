//! Dating files by their last change: a walk down the first-parent history
//! that diffs each commit against its parent, entering only folders that
//! differ and lead to a file still undated.
//!
//! The walk is bounded (at an anchor commit within `[walk] history_depth`,
//! a function of the built commit alone: see [`bound`](super::bound)) and
//! split across cores:
//! commits come in runs, each run's commits are diffed on two threads
//! (each over an object database of its own that keeps the trees it just
//! decoded, since a commit's parent tree is the next commit's tree), and
//! the newest change of each file wins. On a repository whose root holds
//! 63,557 folders, one commit's diff reads two 4 MB trees.

use std::collections::{HashMap, HashSet};

use super::bound::bound_index;
use super::first_parents::first_parents;
use super::git::{commit_parts, for_each_pair, within, GitSource, TreeEntry};
use super::SourceError;

/// The commit that last changed a file, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Commit id (or a plain folder's version id).
    pub commit: String,
    /// Its time (or the file's modification time), Unix seconds.
    pub time: i64,
    /// The history walk stopped at its bound (or a shallow boundary)
    /// before finding the change: the file last changed at or before
    /// `commit`, the bound (whose tree holds it).
    pub at_or_before: bool,
}

/// The changes known at one commit: what a history walk may stop at.
#[derive(Debug, Clone, Default)]
pub struct KnownChanges {
    /// The commit they are known at.
    pub commit: String,
    /// By path.
    pub changes: HashMap<String, Change>,
}

/// The decoded objects each walking thread keeps (a flat tree of 63,000
/// skill folders is 4 MB).
const WALK_OBJECT_CACHE_BYTES: usize = 64 << 20;

/// The pack cache of each walking thread (decoded delta bases). gix's
/// default, 96 MB in 64 slots, took the planning of
/// tomevault-io/skills-registry to 584 MB in 20.5-21.1 s; capped at 16 MB
/// it peaked at 425 MB in 21.4-21.8 s (with no pack cache, 400 MB, 21.0 s).
const WALK_PACK_CACHE_BYTES: usize = 16 << 20;

/// Threads that diff commits.
const WALK_THREADS: usize = 2;

/// Commits of the first run; each run doubles, up to [`MAX_RUN`], so a
/// history whose files are all dated by its first commits stops early.
const FIRST_RUN: usize = 8;

/// Commits of a run at most (each thread's object database is opened
/// anew per run, so what it mapped of the packs is released).
const MAX_RUN: usize = 512;

/// Wanted paths a run of commits changed, each with the index of the
/// commit that changed it.
type Changed = Vec<(Vec<u8>, usize)>;

/// One commit to diff against its first parent.
struct Step {
    commit: gix::ObjectId,
    time: i64,
    tree: gix::ObjectId,
    /// `None` for a root commit (everything in it was added there).
    parent_tree: Option<gix::ObjectId>,
}

/// Why a run of steps ended.
enum RunEnd {
    /// More history follows.
    More(gix::ObjectId),
    /// The commit whose changes are known.
    Known,
    /// The walk's bound (or a shallow boundary): the commit below the last
    /// step, and its time.
    Depth(gix::ObjectId, i64),
    /// The root commit.
    Bottom,
}

impl GitSource {
    /// When each of `paths` last changed, Unix seconds: the time of the
    /// newest commit of the first-parent history from `commit` whose tree
    /// differs from its parent's at that path (the root commit, for a path
    /// it added). Only subtrees that differ and lead to a wanted path are
    /// read, so a commit costs what it changed.
    ///
    /// The walk stops at its bound, an anchor commit at most `depth`
    /// commits down (0: no bound; see [`bound`](super::bound)): a path
    /// still unsettled then is dated at or before the bound, whose tree
    /// holds it as `commit` does ([`Change::at_or_before`]), and so is one
    /// still unsettled at a shallow boundary (a clone fetched no deeper):
    /// at or before the boundary commit.
    ///
    /// With `known` (the changes of an earlier commit of this history, such
    /// as the last build's), the walk stops when it reaches that commit and
    /// the paths it has not settled take their known change, restated
    /// against this walk's bound (see [`restate`]); those the earlier build
    /// cannot vouch for are walked for on. A build costs the commits since
    /// the last one, not the whole history, and dates as a cold build of
    /// its commit does.
    pub(super) fn last_changed(
        &self,
        commit: gix::ObjectId,
        paths: &[&str],
        known: Option<&KnownChanges>,
        depth: usize,
    ) -> Result<HashMap<String, Change>, SourceError> {
        let mut unresolved: HashSet<&[u8]> = paths.iter().map(|p| p.as_bytes()).collect();
        let folders: HashSet<&[u8]> = paths
            .iter()
            .flat_map(|p| p.match_indices('/').map(move |(i, _)| &p.as_bytes()[..i]))
            .collect();
        let mut found = HashMap::with_capacity(paths.len());
        let mut known_at = known.and_then(|k| gix::ObjectId::from_hex(k.commit.as_bytes()).ok());
        // The bound depends on the commit alone (see `bound`): walk the
        // commits above it, whatever an earlier build walked.
        let window = match depth {
            0 => None,
            depth => Some(self.window(commit, depth)?),
        };
        let depth = window.as_ref().map_or(0, |w| w.walked.len());
        let mut next = commit;
        let mut walked = 0usize;
        let mut run = FIRST_RUN;
        while !unresolved.is_empty() {
            let budget = match depth {
                0 => run,
                depth => run.min(depth - walked),
            };
            // Commits are read through a database of their own per run, like
            // the diffs, so what it mapped of the packs is released as the
            // walk goes (see `GitSource::list`).
            let repo = self.reopened()?.thread_local();
            let (steps, end) = self
                .run_of_steps(
                    &repo,
                    next,
                    budget,
                    known_at,
                    depth > 0 && walked + budget == depth,
                )
                .map_err(|e| self.git_error(e))?;
            walked += steps.len();
            let changed = self.diff_steps(&steps, &unresolved, &folders)?;
            for (path, at) in changed {
                if unresolved.remove(path.as_slice()) {
                    let step = &steps[at];
                    let change = Change {
                        commit: step.commit.to_string(),
                        time: step.time,
                        at_or_before: false,
                    };
                    found.insert(String::from_utf8_lossy(&path).into_owned(), change);
                }
            }
            match end {
                RunEnd::More(commit) => next = commit,
                RunEnd::Known => {
                    let known_changes = known.map(|k| &k.changes);
                    let mut walk_on = HashSet::new();
                    for path in unresolved.drain() {
                        let name = String::from_utf8_lossy(path);
                        let restated = known_changes
                            .and_then(|c| c.get(name.as_ref()))
                            .and_then(|change| restate(window.as_ref(), change));
                        match restated {
                            Some(change) => {
                                found.insert(name.into_owned(), change);
                            }
                            None => {
                                walk_on.insert(path);
                            }
                        }
                    }
                    // What the earlier build cannot vouch for (a bound of its
                    // own above this walk's, a file it did not date) is
                    // walked for from its commit on.
                    unresolved = walk_on;
                    if let Some(at) = known_at.take() {
                        next = at;
                    }
                }
                RunEnd::Depth(commit, time) => {
                    // No commit walked changed them: `commit` holds them as they are.
                    let bound = Change {
                        commit: commit.to_string(),
                        time,
                        at_or_before: true,
                    };
                    for path in unresolved.drain() {
                        found.insert(String::from_utf8_lossy(path).into_owned(), bound.clone());
                    }
                }
                RunEnd::Bottom => break,
            }
            run = (run * 2).min(MAX_RUN);
        }
        Ok(found)
    }

    /// The commits a walk from `commit` dates files by, and the bound below
    /// them (see [`bound`](super::bound)).
    fn window(&self, commit: gix::ObjectId, depth: usize) -> Result<Window, SourceError> {
        let (history, boundary) = self.first_parents(commit, depth.saturating_add(1))?;
        let ids: Vec<gix::ObjectId> = history.iter().map(|(id, _)| *id).collect();
        let at = bound_index(&ids, depth).or(match boundary {
            true => history.len().checked_sub(1),
            false => None,
        });
        Ok(match at {
            Some(at) => Window {
                walked: ids[..at].iter().copied().collect(),
                bound: Some(history[at]),
            },
            None => Window {
                walked: ids.into_iter().collect(),
                bound: None,
            },
        })
    }

    /// The bound commit of a walk from `commit` and of one from its first
    /// parent agree: a commit patched from its parent's build keeps the
    /// dates of what it left alone.
    pub(super) fn same_bound_as_parent(
        &self,
        commit: gix::ObjectId,
        depth: usize,
    ) -> Result<bool, SourceError> {
        if depth == 0 {
            return Ok(true);
        }
        let (history, boundary) = self.first_parents(commit, depth.saturating_add(2))?;
        let ids: Vec<gix::ObjectId> = history.iter().map(|(id, _)| *id).collect();
        if ids.len() < 2 {
            return Ok(false);
        }
        // A bound that falls at the clone's edge may not be where a walk
        // from a deeper clone stops: never patch across one.
        let ours = bound_index(&ids, depth);
        let theirs = bound_index(&ids[1..], depth).map(|at| at + 1);
        // (Both `None` at the root: both walks reach it.)
        let at_edge = boundary && (ours.is_none() || ours == Some(ids.len() - 1));
        Ok(ours == theirs && !at_edge)
    }

    /// Up to `len` commits of the first-parent history from `commit` (see
    /// [`first_parents`]).
    fn first_parents(
        &self,
        commit: gix::ObjectId,
        len: usize,
    ) -> Result<(Vec<(gix::ObjectId, i64)>, bool), SourceError> {
        first_parents(&self.thread_local(), commit, len, &self.display)
    }

    /// Up to `budget` commits from `start` down the first-parent history,
    /// each with its parent's tree, and why the run ended; `last` says the
    /// walk's depth ends with this run.
    fn run_of_steps(
        &self,
        repo: &gix::Repository,
        start: gix::ObjectId,
        budget: usize,
        known_at: Option<gix::ObjectId>,
        last: bool,
    ) -> Result<(Vec<Step>, RunEnd), String> {
        let mut steps = Vec::with_capacity(budget);
        let mut current = start;
        let mut parts = commit_parts(repo, current)?;
        loop {
            if known_at == Some(current) {
                return Ok((steps, RunEnd::Known));
            }
            if steps.len() == budget {
                return Ok(match last {
                    true => (steps, RunEnd::Depth(current, parts.0)),
                    false => (steps, RunEnd::More(current)),
                });
            }
            let (time, tree, parent) = parts;
            let Some(parent) = parent else {
                steps.push(Step {
                    commit: current,
                    time,
                    tree,
                    parent_tree: None,
                });
                return Ok((steps, RunEnd::Bottom));
            };
            // A shallow boundary: nothing below is known, and no commit
            // walked changed what is unsettled, so `current` holds it as
            // the built commit does: dated at or before it, as at the
            // walk's own bound.
            let Ok(parent_parts) = commit_parts(repo, parent) else {
                return Ok((steps, RunEnd::Depth(current, time)));
            };
            steps.push(Step {
                commit: current,
                time,
                tree,
                parent_tree: Some(parent_parts.1),
            });
            current = parent;
            parts = parent_parts;
        }
    }

    /// The wanted files each of `steps` changed, as (path, step index),
    /// newest step first: the steps are split in [`WALK_THREADS`]
    /// consecutive runs, one per thread.
    fn diff_steps(
        &self,
        steps: &[Step],
        files: &HashSet<&[u8]>,
        folders: &HashSet<&[u8]>,
    ) -> Result<Changed, SourceError> {
        let wanted = Wanted { files, folders };
        let share = steps.len().div_ceil(WALK_THREADS).max(1);
        let results: Vec<Result<Changed, SourceError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = steps
                .chunks(share)
                .enumerate()
                .map(|(part, chunk)| {
                    let wanted = &wanted;
                    scope.spawn(move || -> Result<_, SourceError> {
                        let mut repo = self.reopened()?.thread_local();
                        repo.object_cache_size(Some(WALK_OBJECT_CACHE_BYTES));
                        repo.objects.set_pack_cache(|| {
                            Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
                                WALK_PACK_CACHE_BYTES,
                            ))
                        });
                        let mut changed = Vec::new();
                        for (i, step) in chunk.iter().enumerate() {
                            let mut paths = Vec::new();
                            diff_trees(
                                &repo,
                                step.parent_tree,
                                Some(step.tree),
                                &mut Vec::new(),
                                wanted,
                                &mut paths,
                            )
                            .map_err(|e| self.git_error(e))?;
                            let at = part * share + i;
                            changed.extend(paths.into_iter().map(|p| (p, at)));
                        }
                        Ok(changed)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(self.git_error("a history walk thread panicked")))
                })
                .collect()
        });
        let mut all = Vec::new();
        for result in results {
            all.extend(result?);
        }
        Ok(all)
    }
}

/// The commits above a walk's bound, and the bound (`None`: the walk
/// reaches the root).
struct Window {
    walked: HashSet<gix::ObjectId>,
    bound: Option<(gix::ObjectId, i64)>,
}

/// A change an earlier build of this history knew, as a walk from this
/// `window`'s commit finds it (`None` for no bound): an exact change above
/// the bound as it is; one at or below it, or an earlier walk's "at or
/// before" a bound at or below this one, is at or before this bound.
/// `None` when the earlier build cannot say: its own bound lies above this
/// walk's (a smaller `history_depth`, a shallower clone), so the walk must
/// go on.
fn restate(window: Option<&Window>, change: &Change) -> Option<Change> {
    let above_bound = window.is_none_or(|w| {
        gix::ObjectId::from_hex(change.commit.as_bytes()).is_ok_and(|id| w.walked.contains(&id))
    });
    match (change.at_or_before, above_bound) {
        (true, true) => None,
        (false, true) => Some(change.clone()),
        (_, false) => window.and_then(|w| w.bound).map(|(bound, time)| Change {
            commit: bound.to_string(),
            time,
            at_or_before: true,
        }),
    }
}

/// The paths a history walk still looks for, and every folder above them.
struct Wanted<'a> {
    files: &'a HashSet<&'a [u8]>,
    folders: &'a HashSet<&'a [u8]>,
}

/// Appends to `changed` the wanted files that differ between `old` and
/// `new` (either may be absent), entering only folders that differ and lead
/// to a wanted file.
fn diff_trees(
    repo: &gix::Repository,
    old: Option<gix::ObjectId>,
    new: Option<gix::ObjectId>,
    prefix: &mut Vec<u8>,
    wanted: &Wanted<'_>,
    changed: &mut Vec<Vec<u8>>,
) -> Result<(), String> {
    for_each_pair(repo, old, new, |before, after| {
        if before.map(|b| b.1) == after.map(|a| a.1) {
            return Ok(());
        }
        let name = before.or(after).map(|e| e.0).unwrap_or_default();
        within(prefix, name, |prefix| {
            let is_tree =
                |side: Option<&TreeEntry<'_>>| side.filter(|s| s.2.is_tree()).map(|s| s.1);
            if wanted.folders.contains(prefix.as_slice()) {
                diff_trees(
                    repo,
                    is_tree(before),
                    is_tree(after),
                    prefix,
                    wanted,
                    changed,
                )?;
            }
            if wanted.files.contains(prefix.as_slice()) {
                changed.push(prefix.clone());
            }
            Ok(())
        })
    })
}
