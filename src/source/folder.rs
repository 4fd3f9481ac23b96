//! Plain folders as sources.
//!
//! The version id of a folder is `folder-` followed by the first 40 hex digits
//! of a sha256 over every file's path, kind and content digest, in path
//! order; its time is the newest modification time. `.git` and
//! `node_modules` folders are not read. Symlinks are never followed: one is
//! listed as a symlink whose content is its target path, as git stores it.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{Entry, EntryKind, ObjectRef, Snapshot, SourceError, Version};

/// Prefix of a plain folder's version id.
pub const FOLDER_VERSION_PREFIX: &str = "folder-";

pub(super) fn resolve(
    root: &Path,
    reference: Option<&str>,
    default_branch: &str,
) -> Result<Snapshot, SourceError> {
    if let Some(reference) = reference {
        return Err(SourceError::Resolve {
            reference: reference.to_string(),
            source_name: root.display().to_string(),
            message: "a plain folder is not a git repository and has no branches, tags or commits; drop --ref, or point --source at a git clone".into(),
        });
    }
    let entries = list(root)?;
    let mut digest = Sha256::new();
    let mut newest = 0i64;
    for entry in &entries {
        let ObjectRef::File(path) = &entry.object else {
            continue;
        };
        let io = |error| SourceError::Io {
            path: entry.path.clone(),
            error,
        };
        let metadata = std::fs::symlink_metadata(path).map_err(io)?;
        if let Ok(modified) = metadata.modified() {
            if let Ok(since) = modified.duration_since(std::time::UNIX_EPOCH) {
                newest = newest.max(since.as_secs() as i64);
            }
        }
        let content = match entry.kind {
            EntryKind::File => std::fs::read(path).map_err(io)?,
            EntryKind::Symlink => std::fs::read_link(path)
                .map_err(io)?
                .to_string_lossy()
                .into_owned()
                .into_bytes(),
        };
        digest.update(entry.path.as_bytes());
        digest.update([0, entry.kind as u8]);
        digest.update(Sha256::digest(&content));
    }
    let hex = hex::encode(digest.finalize());
    let version = Version {
        id: format!("{FOLDER_VERSION_PREFIX}{}", &hex[..40]),
        time: newest,
        branch: default_branch.to_string(),
        is_git: false,
    };
    Ok(Snapshot {
        version,
        display: root.display().to_string(),
        remote_url: None,
        inner: super::Inner::Folder(root.to_path_buf()),
    })
}

/// Every file and symlink below `root`, in path order.
pub(super) fn list(root: &Path) -> Result<Vec<Entry>, SourceError> {
    let mut entries = Vec::new();
    let mut pending: Vec<(PathBuf, String)> = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        let io = |error| SourceError::Io {
            path: dir.display().to_string(),
            error,
        };
        for item in std::fs::read_dir(&dir).map_err(io)? {
            let item = item.map_err(io)?;
            let name = item.file_name();
            let (name, utf8) = match name.to_str() {
                Some(n) => (n.to_string(), true),
                None => (name.to_string_lossy().into_owned(), false),
            };
            let path = format!("{prefix}{name}");
            let file_type = item.file_type().map_err(io)?;
            if file_type.is_dir() {
                if name != ".git" && name != "node_modules" {
                    pending.push((item.path(), format!("{path}/")));
                }
                continue;
            }
            let kind = if file_type.is_symlink() {
                EntryKind::Symlink
            } else if file_type.is_file() {
                EntryKind::File
            } else {
                continue;
            };
            let executable = kind == EntryKind::File && is_executable(&item);
            entries.push(Entry {
                path,
                path_is_utf8: utf8,
                kind,
                object: ObjectRef::File(item.path()),
                executable,
            });
        }
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}

/// Whether a folder's file has an execute bit set (never elsewhere than Unix).
fn is_executable(item: &std::fs::DirEntry) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        item.metadata()
            .is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = item;
        false
    }
}

/// The modification time of each of `paths` below `root` that has one.
pub(super) fn modified_times(
    root: &Path,
    paths: &[&str],
) -> std::collections::HashMap<String, i64> {
    paths
        .iter()
        .filter_map(|path| {
            let modified = std::fs::symlink_metadata(root.join(path))
                .ok()?
                .modified()
                .ok()?;
            let seconds = modified
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?
                .as_secs();
            Some((path.to_string(), seconds as i64))
        })
        .collect()
}
