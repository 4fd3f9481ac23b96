//! When the pipeline first saw each content: the record a store keeps
//! beside its artifacts (`seen.ndjson` of the store and of each source's
//! store), one line per content key (a skill's SKILL.md body and shipped
//! files, `content_key` in its documents). What tells an original from a
//! copy made after it, where the copy's git dates, which its author sets,
//! cannot. Kept outside `commits/<id>/`, whose bytes must not depend on
//! what was built before.

use std::collections::{BTreeMap, HashMap};

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

/// When each content was first seen in `store`, its own record and every
/// source's together (the earliest time of a key seen by several).
pub async fn first_seen(store: &Store) -> Result<HashMap<String, String>, ReadError> {
    let mut stores = vec![store.clone()];
    for id in list_sources(store).await.unwrap_or_default() {
        stores.push(source_store(store, &id));
    }
    let mut earliest: HashMap<String, String> = HashMap::new();
    for store in &stores {
        for seen in read_one(store).await? {
            match earliest.get(&seen.content_key) {
                Some(time) if *time <= seen.first_seen => {}
                _ => {
                    earliest.insert(seen.content_key, seen.first_seen);
                }
            }
        }
    }
    Ok(earliest)
}

/// Adds to `store`'s record the contents of `met` (`content_key` -> path)
/// it has not seen yet, as first seen `now`; returns how many were new.
/// The record is read and written whole (one writer per store at a time:
/// the builder's lock).
pub async fn record(
    store: &Store,
    met: &BTreeMap<String, String>,
    now: &str,
) -> Result<usize, ReadError> {
    let mut lines = read_one(store).await?;
    let known: std::collections::HashSet<&str> =
        lines.iter().map(|s| s.content_key.as_str()).collect();
    let new: Vec<Seen> = met
        .iter()
        .filter(|(key, _)| !known.contains(key.as_str()))
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
    async fn the_first_time_is_kept_and_the_earliest_of_several_stores_wins() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_str().unwrap()).unwrap();
        let met: BTreeMap<String, String> = [("a".to_string(), "x/SKILL.md".to_string())].into();
        assert_eq!(
            record(&store, &met, "2026-02-01T00:00:00Z").await.unwrap(),
            1
        );
        let both: BTreeMap<String, String> = [
            ("a".to_string(), "y/SKILL.md".to_string()),
            ("b".to_string(), "z/SKILL.md".to_string()),
        ]
        .into();
        assert_eq!(
            record(&store, &both, "2026-03-01T00:00:00Z").await.unwrap(),
            1
        );
        let source = source_store(&store, "copies");
        record(&source, &both, "2026-01-01T00:00:00Z")
            .await
            .unwrap();
        let seen = first_seen(&store).await.unwrap();
        assert_eq!(seen["a"], "2026-01-01T00:00:00Z");
        assert_eq!(seen["b"], "2026-01-01T00:00:00Z");
        let own = read_one(&store).await.unwrap();
        assert_eq!(
            own[0].first_seen, "2026-02-01T00:00:00Z",
            "not moved by a later build"
        );
        assert_eq!(own[0].path, "x/SKILL.md");
    }
}
