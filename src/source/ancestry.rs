//! Which of two commits came first, by the history that joins them rather
//! than by their dates: a commit's date is whatever its author's clock
//! said, and one dated 2099 would otherwise make every later commit look
//! older than it. Promotion asks this of the commit it would promote and
//! the one `latest/` holds.

use std::collections::{HashSet, VecDeque};

use gix::ObjectId;

/// Most commits one question walks before it gives up (an answer then
/// falls back on dates).
const WALK_LIMIT: usize = 1_000_000;

/// How a commit stands to another (the one `latest/` holds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lineage {
    /// The commit is the other one or descends from it: a move forward.
    Descends,
    /// The other one descends from the commit: a move backwards.
    Behind,
    /// Neither descends from the other (a rewritten branch, another
    /// branch): history cannot order them.
    Diverged,
    /// History could not say (a commit the clone does not hold, a shallow
    /// boundary, a plain folder); why.
    Unknown(String),
}

/// The history of a git source, for ordering commits by ancestry.
#[derive(Clone)]
pub struct Ancestry {
    repo: gix::ThreadSafeRepository,
    display: String,
}

impl std::fmt::Debug for Ancestry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ancestry({})", self.display)
    }
}

impl Ancestry {
    pub(super) fn new(repo: gix::ThreadSafeRepository, display: String) -> Self {
        Self { repo, display }
    }

    /// How `commit` stands to `other` (both commit ids, full hex). Walks
    /// every parent, not only first parents: a merge brings its second
    /// parent's commits forward too.
    pub fn lineage(&self, commit: &str, other: &str) -> Lineage {
        if commit == other {
            return Lineage::Descends;
        }
        let parse = |id: &str| ObjectId::from_hex(id.as_bytes()).ok();
        let (Some(commit_id), Some(other_id)) = (parse(commit), parse(other)) else {
            return Lineage::Unknown(format!("{commit} or {other} is not a git commit id"));
        };
        let repo = self.repo.to_thread_local();
        let forward = reaches(&repo, commit_id, other_id);
        if forward == Reach::Found {
            return Lineage::Descends;
        }
        let backward = reaches(&repo, other_id, commit_id);
        match (forward, backward) {
            (_, Reach::Found) => Lineage::Behind,
            (Reach::Absent, Reach::Absent) => Lineage::Diverged,
            (Reach::Unsure(why), _) | (_, Reach::Unsure(why)) => Lineage::Unknown(format!(
                "the history of {} cannot order {commit} and {other}: {why}",
                self.display
            )),
            (Reach::Found, _) => Lineage::Descends,
        }
    }
}

/// What a walk from one commit found.
#[derive(Debug, PartialEq, Eq)]
enum Reach {
    /// The target is among its ancestors.
    Found,
    /// Its whole history was walked and the target is not in it.
    Absent,
    /// Part of its history is not here (a shallow clone, a missing
    /// commit) or too long to walk: why.
    Unsure(String),
}

/// Whether `target` is an ancestor of `from` (or `from` itself).
fn reaches(repo: &gix::Repository, from: ObjectId, target: ObjectId) -> Reach {
    let mut seen = HashSet::from([from]);
    let mut queue = VecDeque::from([from]);
    let mut unsure = None;
    while let Some(id) = queue.pop_front() {
        if id == target {
            return Reach::Found;
        }
        if seen.len() > WALK_LIMIT {
            return Reach::Unsure(format!("more than {WALK_LIMIT} commits to walk"));
        }
        let commit = match repo.find_commit(id) {
            Ok(commit) => commit,
            Err(_) => {
                // Below a shallow boundary, or never fetched: what lies
                // beyond it is unknown, but other paths may still lead
                // to the target.
                unsure.get_or_insert_with(|| format!("commit {id} is not in the clone"));
                continue;
            }
        };
        for parent in commit.parent_ids() {
            let parent = parent.detach();
            if seen.insert(parent) {
                queue.push_back(parent);
            }
        }
    }
    match unsure {
        Some(why) => Reach::Unsure(why),
        None => Reach::Absent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        git_with(dir, args, &[])
    }

    /// `git args` in `dir` with `env` set besides the test identity.
    fn git_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .envs(env.iter().copied())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.org")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.org")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    fn commit(dir: &Path, file: &str, date: &str) -> String {
        std::fs::write(dir.join(file), date).unwrap();
        git(dir, &["add", "-A"]);
        let date_env = [("GIT_AUTHOR_DATE", date), ("GIT_COMMITTER_DATE", date)];
        git_with(dir, &["commit", "-q", "-m", file], &date_env);
        git(dir, &["rev-parse", "HEAD"])
    }

    fn ancestry_of(dir: &Path) -> Ancestry {
        Ancestry::new(
            gix::open(dir).unwrap().into_sync(),
            dir.display().to_string(),
        )
    }

    #[test]
    fn history_orders_commits_and_says_when_it_cannot() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        let first = commit(&repo, "a", "2026-01-01T00:00:00Z");
        let future = commit(&repo, "b", "2099-01-01T00:00:00Z");
        let today = commit(&repo, "c", "2026-01-03T00:00:00Z");
        // Another branch from the first commit: neither descends.
        git(&repo, &["checkout", "-q", "-b", "other", &first]);
        let other = commit(&repo, "d", "2026-01-04T00:00:00Z");
        let ancestry = ancestry_of(&repo);
        assert_eq!(ancestry.lineage(&today, &future), Lineage::Descends);
        assert_eq!(ancestry.lineage(&today, &today), Lineage::Descends);
        assert_eq!(ancestry.lineage(&first, &future), Lineage::Behind);
        assert_eq!(ancestry.lineage(&other, &today), Lineage::Diverged);
        assert!(matches!(
            ancestry.lineage("folder-1", &today),
            Lineage::Unknown(_)
        ));

        // A clone one commit deep holds neither the past nor the other
        // branch. Its tip names its parent, so that much is known.
        let url = format!("file://{}", repo.display());
        git(
            dir.path(),
            &["clone", "-q", "--depth", "1", "-b", "main", &url, "shallow"],
        );
        let shallow = ancestry_of(&dir.path().join("shallow"));
        assert_eq!(shallow.lineage(&today, &future), Lineage::Descends);
        let unknown = |lineage| matches!(lineage, Lineage::Unknown(_));
        assert!(unknown(shallow.lineage(&today, &first)));
        assert!(unknown(shallow.lineage(&other, &today)));
    }
}
