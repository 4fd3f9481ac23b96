//! Reading an entry's bytes: a blob of a git object database, or a file
//! (a symlink's target path) on disk.

use super::{Entry, EntryKind, ObjectRef, SourceError};

/// Reads the bytes of entries (a symlink's bytes are its target path).
pub enum FileReader {
    /// Reads blobs from a git object database.
    Git(Box<gix::Repository>),
    /// Reads files from disk.
    Folder,
}

impl FileReader {
    /// The bytes of `entry`.
    pub fn read(&self, entry: &Entry) -> Result<Vec<u8>, SourceError> {
        match (&entry.object, self) {
            (ObjectRef::Blob(id), FileReader::Git(repo)) => repo
                .find_object(*id)
                .map(|object| object.detach().data)
                .map_err(|e| SourceError::Git {
                    source_name: entry.path.clone(),
                    message: e.to_string(),
                }),
            (ObjectRef::File(path), _) => {
                let io = |error| SourceError::Io {
                    path: entry.path.clone(),
                    error,
                };
                match entry.kind {
                    EntryKind::File => std::fs::read(path).map_err(io),
                    EntryKind::Symlink => std::fs::read_link(path)
                        .map(|target| target.to_string_lossy().into_owned().into_bytes())
                        .map_err(io),
                }
            }
            (ObjectRef::Blob(_), FileReader::Folder) => Err(SourceError::Git {
                source_name: entry.path.clone(),
                message: "a git blob was read through a folder reader".into(),
            }),
        }
    }
}
