//! Git sources through gix: the tree of a resolved commit, listed (whole or
//! a folder) and searched by path, and the tree walks the history and the
//! parent diff share. Resolving a ref is [`revision`](super::revision)'s,
//! cloning and fetching [`clone`](super::clone)'s.

use std::collections::HashMap;

use gix::bstr::ByteSlice;

use super::{Entry, EntryKind, ObjectRef, SourceError};

/// A repository and the tree of the resolved commit.
pub(super) struct GitSource {
    pub(super) repo: gix::ThreadSafeRepository,
    pub(super) tree: gix::ObjectId,
    pub(super) display: String,
}

impl GitSource {
    pub(super) fn thread_local(&self) -> gix::Repository {
        self.repo.to_thread_local()
    }

    /// A git error of this source, saying why.
    pub(super) fn git_error(&self, why: impl std::fmt::Display) -> SourceError {
        SourceError::Git {
            source_name: self.display.clone(),
            message: why.to_string(),
        }
    }

    /// The same repository and tree over an object database of its own:
    /// what it maps of the pack files is unmapped when it is dropped.
    pub(super) fn reopened(&self) -> Result<Self, SourceError> {
        let git_dir = self.repo.to_thread_local().git_dir().to_path_buf();
        let repo = gix::open(&git_dir).map_err(|e| self.git_error(e))?;
        Ok(Self {
            repo: repo.into_sync(),
            tree: self.tree,
            display: self.display.clone(),
        })
    }

    /// Every file and symlink of the tree, breadth first. Trees are read
    /// through an object database that is replaced every
    /// [`TREES_PER_DATABASE`] trees, so the pack pages a listing maps are
    /// released as it goes (listing 111,838 entries of a 305 MB pack mapped
    /// about 220 MB otherwise). A tree the listing before this one decoded
    /// is not read again ([`TreeCache`]): successive commits share all but
    /// the trees on the paths they changed.
    pub(super) fn list(&self) -> Result<Vec<Entry>, SourceError> {
        self.list_from(self.tree, Vec::new())
    }

    /// Every file and symlink below `folder` (slash-separated, `""` for the
    /// root), with their paths from the root; none when it is not a folder.
    pub(super) fn list_folder(&self, folder: &str) -> Result<Vec<Entry>, SourceError> {
        if folder.is_empty() {
            return self.list();
        }
        let repo = self.thread_local();
        let tree = repo.find_tree(self.tree).map_err(|e| self.git_error(e))?;
        match tree
            .lookup_entry_by_path(folder)
            .map_err(|e| self.git_error(e))?
        {
            Some(found) if found.mode().is_tree() => {
                self.list_from(found.object_id(), folder.as_bytes().to_vec())
            }
            _ => Ok(Vec::new()),
        }
    }

    /// The listing of the tree `start`, whose path is `prefix`. Only a
    /// listing of the whole tree starts a generation of the cache and fills
    /// it (a folder's reads what the last one kept and adds nothing, so a
    /// long backfill that lists only folders keeps no more).
    fn list_from(&self, start: gix::ObjectId, prefix: Vec<u8>) -> Result<Vec<Entry>, SourceError> {
        let whole = start == self.tree && prefix.is_empty();
        let mut cache = TREE_CACHE.lock().map_err(|e| self.git_error(e))?;
        if whole {
            cache.generation += 1;
        }
        let mut opened: Option<(Self, gix::Repository)> = None;
        let mut entries = Vec::new();
        let mut pending = std::collections::VecDeque::from([(start, prefix)]);
        let mut trees_read = 0usize;
        while let Some((id, prefix)) = pending.pop_front() {
            let generation = cache.generation;
            let items = match cache.trees.get_mut(&id) {
                Some((items, used)) => {
                    *used = generation;
                    items.clone()
                }
                None => {
                    if opened.is_none() || trees_read % TREES_PER_DATABASE == TREES_PER_DATABASE - 1
                    {
                        let source = self.reopened()?;
                        let repo = source.thread_local();
                        opened = Some((source, repo));
                    }
                    trees_read += 1;
                    let Some((_, repo)) = opened.as_ref() else {
                        continue;
                    };
                    let items = decode_tree(repo, id).map_err(|e| self.git_error(e))?;
                    if whole {
                        cache.trees.insert(id, (items.clone(), generation));
                    }
                    items
                }
            };
            for item in items.iter() {
                let mut path_bytes = prefix.clone();
                if !path_bytes.is_empty() {
                    path_bytes.push(b'/');
                }
                path_bytes.extend_from_slice(&item.name);
                let kind = match item.kind {
                    TreeItemKind::Tree => {
                        pending.push_back((item.id, path_bytes));
                        continue;
                    }
                    TreeItemKind::File => EntryKind::File,
                    TreeItemKind::Symlink => EntryKind::Symlink,
                };
                let (path, path_is_utf8) = match path_bytes.to_str() {
                    Ok(path) => (path.to_string(), true),
                    Err(_) => (path_bytes.to_str_lossy().into_owned(), false),
                };
                entries.push(Entry {
                    path,
                    path_is_utf8,
                    kind,
                    object: ObjectRef::Blob(item.id),
                    executable: item.executable,
                });
            }
        }
        if whole {
            cache.forget_older_than_last();
        }
        Ok(entries)
    }
}

/// What a tree entry is, as listing needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TreeItemKind {
    Tree,
    File,
    Symlink,
}

/// One entry of a decoded tree (submodules are left out).
#[derive(Debug, Clone)]
struct TreeItem {
    name: Vec<u8>,
    kind: TreeItemKind,
    id: gix::ObjectId,
    executable: bool,
}

/// Decoded trees by id, with the listing that last used each: a tree id
/// names its content, so a cached tree is right for any repository.
/// Entries the last two listings did not use are dropped, so memory follows
/// one commit's trees, not a history's.
#[derive(Default)]
struct TreeCache {
    trees: HashMap<gix::ObjectId, (std::sync::Arc<[TreeItem]>, u64)>,
    generation: u64,
}

impl TreeCache {
    fn forget_older_than_last(&mut self) {
        let keep_from = self.generation.saturating_sub(1);
        self.trees.retain(|_, (_, used)| *used >= keep_from);
    }
}

static TREE_CACHE: std::sync::LazyLock<std::sync::Mutex<TreeCache>> =
    std::sync::LazyLock::new(Default::default);

fn decode_tree(
    repo: &gix::Repository,
    id: gix::ObjectId,
) -> Result<std::sync::Arc<[TreeItem]>, String> {
    let tree = repo.find_tree(id).map_err(|e| e.to_string())?;
    let mut items = Vec::new();
    for item in tree.iter() {
        let item = item.map_err(|e| e.to_string())?;
        let mode = item.mode();
        let kind = if mode.is_tree() {
            TreeItemKind::Tree
        } else if mode.is_link() {
            TreeItemKind::Symlink
        } else if mode.is_blob() {
            TreeItemKind::File
        } else {
            continue; // a submodule
        };
        items.push(TreeItem {
            name: item.filename().to_vec(),
            kind,
            id: item.oid().to_owned(),
            executable: mode.is_executable(),
        });
    }
    Ok(items.into())
}

impl GitSource {
    /// The entry at `path` of the tree, if it is a file or symlink.
    pub(super) fn find(&self, path: &str) -> Result<Option<Entry>, SourceError> {
        let repo = self.thread_local();
        let tree = repo.find_tree(self.tree).map_err(|e| self.git_error(e))?;
        let Some(found) = tree
            .lookup_entry_by_path(path)
            .map_err(|e| self.git_error(e))?
        else {
            return Ok(None);
        };
        let Some(kind) = file_kind(found.mode()) else {
            return Ok(None);
        };
        Ok(Some(Entry {
            path: path.to_string(),
            path_is_utf8: true,
            kind,
            object: ObjectRef::Blob(found.object_id()),
            executable: found.mode().is_executable(),
        }))
    }
}

/// A commit's time, tree and first parent.
pub(super) fn commit_parts(
    repo: &gix::Repository,
    id: gix::ObjectId,
) -> Result<(i64, gix::ObjectId, Option<gix::ObjectId>), String> {
    let commit = repo.find_commit(id).map_err(|e| e.to_string())?;
    let time = commit.time().map_err(|e| e.to_string())?.seconds;
    let tree = commit.tree_id().map_err(|e| e.to_string())?.detach();
    let parent = commit.parent_ids().next().map(|p| p.detach());
    Ok((time, tree, parent))
}

/// Calls `visit` with the entries of the trees `old` and `new` (either
/// absent) paired by name, `(before, after)`, either absent: both lists
/// are in git's tree order, so they are walked side by side.
pub(super) fn for_each_pair(
    repo: &gix::Repository,
    old: Option<gix::ObjectId>,
    new: Option<gix::ObjectId>,
    mut visit: impl FnMut(Option<&TreeEntry<'_>>, Option<&TreeEntry<'_>>) -> Result<(), String>,
) -> Result<(), String> {
    let find = |id: Option<gix::ObjectId>| {
        id.map(|id| repo.find_tree(id))
            .transpose()
            .map_err(|e| e.to_string())
    };
    let (old, new) = (find(old)?, find(new)?);
    let hash = repo.object_hash();
    let (old, new) = (
        tree_entries(old.as_ref(), hash)?,
        tree_entries(new.as_ref(), hash)?,
    );
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        let order = match (old.get(i), new.get(j)) {
            (Some(a), Some(b)) => git_order(a.0, a.2.is_tree(), b.0, b.2.is_tree()),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let (before, after) = match order {
            std::cmp::Ordering::Less => (old.get(i), None),
            std::cmp::Ordering::Greater => (None, new.get(j)),
            std::cmp::Ordering::Equal => (old.get(i), new.get(j)),
        };
        i += usize::from(order != std::cmp::Ordering::Greater);
        j += usize::from(order != std::cmp::Ordering::Less);
        visit(before, after)?;
    }
    Ok(())
}

/// Runs `f` with `name` appended to the path `prefix` (slash-separated),
/// then takes it off again.
pub(super) fn within<T>(prefix: &mut Vec<u8>, name: &[u8], f: impl FnOnce(&mut Vec<u8>) -> T) -> T {
    let length = prefix.len();
    if !prefix.is_empty() {
        prefix.push(b'/');
    }
    prefix.extend_from_slice(name);
    let result = f(prefix);
    prefix.truncate(length);
    result
}

/// The kind of a file tree entry; `None` for a folder or a submodule.
pub(super) fn file_kind(mode: gix::objs::tree::EntryMode) -> Option<EntryKind> {
    if mode.is_link() {
        Some(EntryKind::Symlink)
    } else if mode.is_blob() {
        Some(EntryKind::File)
    } else {
        None
    }
}

/// A tree entry: its name, object and mode.
pub(super) type TreeEntry<'a> = (&'a [u8], gix::ObjectId, gix::objs::tree::EntryMode);

/// A tree's entries; none for no tree.
fn tree_entries<'a>(
    tree: Option<&'a gix::Tree<'_>>,
    hash: gix::hash::Kind,
) -> Result<Vec<TreeEntry<'a>>, String> {
    let Some(tree) = tree else {
        return Ok(Vec::new());
    };
    gix::objs::TreeRefIter::from_bytes(&tree.data, hash)
        .map(|entry| {
            let entry = entry.map_err(|e| e.to_string())?;
            let name: &[u8] = entry.filename;
            Ok((name, entry.oid.to_owned(), entry.mode))
        })
        .collect()
}

/// Git's order of tree entries: by name, a folder's name as if it ended in `/`.
fn git_order(a: &[u8], a_tree: bool, b: &[u8], b_tree: bool) -> std::cmp::Ordering {
    let slash = |tree: bool| if tree { Some(b'/') } else { None };
    let a_key = a.iter().copied().chain(slash(a_tree));
    let b_key = b.iter().copied().chain(slash(b_tree));
    a_key.cmp(b_key)
}

/// Trees read through one object database while listing (see [`GitSource::list`]).
const TREES_PER_DATABASE: usize = 2_000;
