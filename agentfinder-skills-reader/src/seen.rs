//! When the pipeline first saw each copy of a content: the record a store
//! keeps beside its artifacts (`seen.ndjson` of the store and of each
//! source's store), one line per content key (a skill's SKILL.md body and
//! shipped files, `content_key` in its documents) and path it was met at.
//! What tells an original from a copy made after it, where the copy's git
//! dates, which its author sets, cannot. Kept outside `commits/<id>/`, whose bytes must not depend on
//! what was built before.

use std::collections::{BTreeSet, HashMap, HashSet};

use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};
use serde::{Deserialize, Serialize};

use crate::read::{get_optional, ReadError};
use crate::sources::{list_sources, source_store};
use crate::store::Store;

/// The record's file name, at the root of a (source's) store.
pub const SEEN_FILE: &str = "seen.ndjson";

/// One line of the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    /// The content key.
    pub content_key: String,
    /// When a build of this store first met it, RFC 3339 in UTC.
    pub first_seen: String,
    /// The SKILL.md it was first met at.
    pub path: String,
}

/// Reads the record of one store (empty when it has none).
pub async fn read_one(store: &Store) -> Result<Vec<Seen>, ReadError> {
    let path = Path::from(SEEN_FILE);
    let Some(bytes) = get_optional(store, &path).await? else {
        return Ok(Vec::new());
    };
    // A line that does not parse is skipped: the record only orders copies.
    Ok(bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect())
}

/// The key of one copy in [`first_seen`]'s answer: a content at a path
/// of a source (`""` for a single-source store's own record).
pub fn location(source: &str, path: &str, content_key: &str) -> String {
    format!("{source}\n{path}\n{content_key}")
}

/// When each copy of each content was first seen in `store` (its own
/// record, as source `""`, and every source's), by [`location`]: copies
/// of one content share its key, so what tells them apart is when each
/// was first met where it is.
pub async fn first_seen(store: &Store) -> Result<HashMap<String, String>, ReadError> {
    let mut stores = vec![(String::new(), store.clone())];
    for id in list_sources(store).await.unwrap_or_default() {
        stores.push((id.clone(), source_store(store, &id)));
    }
    let mut seen = HashMap::new();
    for (id, store) in &stores {
        for line in read_one(store).await? {
            seen.insert(location(id, &line.path, &line.content_key), line.first_seen);
        }
    }
    Ok(seen)
}

/// Adds to `store`'s record the copies in `met` (`(content_key, path)`)
/// it has not seen yet, as first seen `now`; returns how many were new.
/// The record is read and written whole (one writer per store at a time:
/// the builder's lock).
pub async fn record(
    store: &Store,
    met: &BTreeSet<(String, String)>,
    now: &str,
) -> Result<usize, ReadError> {
    let mut lines = read_one(store).await?;
    let known: HashSet<(&str, &str)> = lines
        .iter()
        .map(|s| (s.content_key.as_str(), s.path.as_str()))
        .collect();
    let new: Vec<Seen> = met
        .iter()
        .filter(|(key, path)| !known.contains(&(key.as_str(), path.as_str())))
        .map(|(key, path)| Seen {
            content_key: key.clone(),
            first_seen: now.to_string(),
            path: path.clone(),
        })
        .collect();
    if new.is_empty() {
        return Ok(0);
    }
    let added = new.len();
    lines.extend(new);
    let mut bytes = Vec::new();
    for line in &lines {
        if let Ok(text) = serde_json::to_vec(line) {
            bytes.extend_from_slice(&text);
            bytes.push(b'\n');
        }
    }
    let path = Path::from(SEEN_FILE);
    store
        .inner
        .put(&path, PutPayload::from(bytes))
        .await
        .map_err(|e| ReadError::store(&path, &e))?;
    Ok(added)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn each_copy_keeps_the_time_it_was_first_met_where_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_str().unwrap()).unwrap();
        let met = |pairs: &[(&str, &str)]| -> BTreeSet<(String, String)> {
            pairs
                .iter()
                .map(|(k, p)| (k.to_string(), p.to_string()))
                .collect()
        };
        let first = met(&[("a", "x/SKILL.md")]);
        assert_eq!(
            record(&store, &first, "2026-02-01T00:00:00Z")
                .await
                .unwrap(),
            1
        );
        // The same content at another path is another copy; met again
        // where it was, it keeps its first time.
        let later = met(&[
            ("a", "x/SKILL.md"),
            ("a", "y/SKILL.md"),
            ("b", "z/SKILL.md"),
        ]);
        assert_eq!(
            record(&store, &later, "2026-03-01T00:00:00Z")
                .await
                .unwrap(),
            2
        );
        let source = source_store(&store, "copies");
        record(
            &source,
            &met(&[("a", "x/SKILL.md")]),
            "2026-01-01T00:00:00Z",
        )
        .await
        .unwrap();
        let seen = first_seen(&store).await.unwrap();
        assert_eq!(
            seen[&location("", "x/SKILL.md", "a")],
            "2026-02-01T00:00:00Z"
        );
        assert_eq!(
            seen[&location("", "y/SKILL.md", "a")],
            "2026-03-01T00:00:00Z"
        );
        assert_eq!(
            seen[&location("", "z/SKILL.md", "b")],
            "2026-03-01T00:00:00Z"
        );
        assert_eq!(
            seen[&location("copies", "x/SKILL.md", "a")],
            "2026-01-01T00:00:00Z",
            "each source's record is its own"
        );
        assert_eq!(seen.len(), 4);
    }
}
