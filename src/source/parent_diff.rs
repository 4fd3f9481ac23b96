//! What one commit changed: the files and symlinks whose bytes or kind
//! differ between its first parent's tree and its own. Only folders that
//! differ are read, so the cost follows the change, not the tree (a
//! backfill commit of an 18,000-skill repository changes a handful of
//! files out of 110,000).

use gix::bstr::ByteSlice;

use super::git::{commit_parts, file_kind, for_each_pair, within, GitSource, TreeEntry};
use super::{Entry, EntryKind, ObjectRef, SourceError};

/// A file or symlink a commit added, changed or removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Its path (lossy when not UTF-8, as in [`Entry::path`]).
    pub path: String,
    /// What it was in the parent; `None` where it did not exist there.
    pub before: Option<EntryKind>,
    /// What it is now; `None` where the commit removed it.
    pub after: Option<Entry>,
    /// Only its executable bit changed: its bytes, and so its date, are
    /// as they were (the history walk that dates files sees no change),
    /// but what its skill ships is not.
    pub mode_only: bool,
}

/// The files a commit changed since its first parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParentChanges {
    /// The first parent's id.
    pub parent: String,
    /// Changed files, in no particular order.
    pub files: Vec<FileChange>,
}

impl GitSource {
    /// The files `commit` changed since its first parent; `None` for a
    /// root commit, or a parent past a shallow boundary.
    pub(super) fn parent_changes(
        &self,
        commit: gix::ObjectId,
    ) -> Result<Option<ParentChanges>, SourceError> {
        let repo = self.thread_local();
        let (_, tree, parent) = commit_parts(&repo, commit).map_err(|e| self.git_error(e))?;
        let Some(parent) = parent else {
            return Ok(None);
        };
        let Ok((_, parent_tree, _)) = commit_parts(&repo, parent) else {
            return Ok(None);
        };
        let mut files = Vec::new();
        diff_files(
            &repo,
            Some(parent_tree),
            Some(tree),
            &mut Vec::new(),
            &mut files,
        )
        .map_err(|e| self.git_error(e))?;
        Ok(Some(ParentChanges {
            parent: parent.to_string(),
            files,
        }))
    }
}

/// Appends to `out` every file that differs between the trees `old` and
/// `new` (either may be absent) below `prefix`.
fn diff_files(
    repo: &gix::Repository,
    old: Option<gix::ObjectId>,
    new: Option<gix::ObjectId>,
    prefix: &mut Vec<u8>,
    out: &mut Vec<FileChange>,
) -> Result<(), String> {
    for_each_pair(repo, old, new, |before, after| {
        // The same object of the same kind: no change of bytes (an
        // executable bit alone is reported as `mode_only`).
        let same = |a: &TreeEntry<'_>, b: &TreeEntry<'_>| {
            a.1 == b.1 && a.2.is_tree() == b.2.is_tree() && file_kind(a.2) == file_kind(b.2)
        };
        let mut mode_only = false;
        if let (Some(a), Some(b)) = (before, after) {
            if same(a, b) {
                if a.2.is_tree() || a.2.is_executable() == b.2.is_executable() {
                    return Ok(());
                }
                mode_only = true;
            }
        }
        let name = before.or(after).map(|e| e.0).unwrap_or_default();
        within(prefix, name, |prefix| {
            let tree = |side: Option<&TreeEntry<'_>>| side.filter(|s| s.2.is_tree()).map(|s| s.1);
            if tree(before).is_some() || tree(after).is_some() {
                diff_files(repo, tree(before), tree(after), prefix, out)?;
            }
            let before_kind = before.and_then(|b| file_kind(b.2));
            let after_entry = after.and_then(|a| {
                let kind = file_kind(a.2)?;
                let (path, path_is_utf8) = match prefix.to_str() {
                    Ok(path) => (path.to_string(), true),
                    Err(_) => (prefix.to_str_lossy().into_owned(), false),
                };
                Some(Entry {
                    path,
                    path_is_utf8,
                    kind,
                    object: ObjectRef::Blob(a.1),
                    executable: a.2.is_executable(),
                })
            });
            if before_kind.is_some() || after_entry.is_some() {
                out.push(FileChange {
                    path: prefix.to_str_lossy().into_owned(),
                    before: before_kind,
                    after: after_entry,
                    mode_only,
                });
            }
            Ok(())
        })
    })
}
