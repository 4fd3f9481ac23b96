//! When the pipeline first met a skill at each place: the record a store
//! keeps beside its artifacts (`seen.ndjson` of the store and of each
//! source's store), one line per path, with the content key it held then
//! (a skill's SKILL.md body and shipped files, `content_key` in its
//! documents). What tells an original from a copy made after it, where
//! the copy's git dates, which its author sets, cannot. Kept outside `commits/<id>/`, whose bytes must not depend on
//! what was built before.

use std::collections::{BTreeMap, HashMap, HashSet};

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

/// The key of one place in [`first_seen`]'s answer: a path of a source
/// (`""` for a single-source store's own record).
pub fn location(source: &str, path: &str) -> String {
    format!("{source}\n{path}")
}

/// When a skill was first met at each place of `store` (its own record,
/// as source `""`, and every source's), by [`location`]. Copies of a
/// content share its key, so what tells them apart is where each is and
/// since when; an original whose content changes later keeps its place's
/// first time.
pub async fn first_seen(store: &Store) -> Result<HashMap<String, String>, ReadError> {
    let mut stores = vec![(String::new(), store.clone())];
    for id in list_sources(store).await.unwrap_or_default() {
        stores.push((id.clone(), source_store(store, &id)));
    }
    let mut seen: HashMap<String, String> = HashMap::new();
    for (id, store) in &stores {
        for line in read_one(store).await? {
            let at = seen
                .entry(location(id, &line.path))
                .or_insert(line.first_seen.clone());
            if line.first_seen < *at {
                *at = line.first_seen;
            }
        }
    }
    Ok(seen)
}

/// Adds to `store`'s record the places in `met` (path -> the content key
/// met there, empty when not known) it has no line for yet, as first
/// seen `now`; returns how many were new. The record is read and written
/// whole (one writer per store at a time: the builder's lock), and holds
/// a line per path ever met.
pub async fn record(
    store: &Store,
    met: &BTreeMap<String, String>,
    now: &str,
) -> Result<usize, ReadError> {
    let mut lines = read_one(store).await?;
    let known: HashSet<&str> = lines.iter().map(|s| s.path.as_str()).collect();
    let new: Vec<Seen> = met
        .iter()
        .filter(|(path, _)| !known.contains(path.as_str()))
        .map(|(path, key)| Seen {
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
    async fn each_place_keeps_the_time_a_skill_was_first_met_there() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_str().unwrap()).unwrap();
        let met = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(p, k)| (p.to_string(), k.to_string()))
                .collect()
        };
        let first = met(&[("x/SKILL.md", "a")]);
        assert_eq!(
            record(&store, &first, "2026-02-01T00:00:00Z")
                .await
                .unwrap(),
            1
        );
        // Its content changed: the place keeps its first time. A copy at
        // another path is met now.
        let later = met(&[
            ("x/SKILL.md", "a2"),
            ("y/SKILL.md", "a"),
            ("z/SKILL.md", ""),
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
            &met(&[("x/SKILL.md", "a")]),
            "2026-01-01T00:00:00Z",
        )
        .await
        .unwrap();
        let seen = first_seen(&store).await.unwrap();
        assert_eq!(seen[&location("", "x/SKILL.md")], "2026-02-01T00:00:00Z");
        assert_eq!(seen[&location("", "y/SKILL.md")], "2026-03-01T00:00:00Z");
        assert_eq!(seen[&location("", "z/SKILL.md")], "2026-03-01T00:00:00Z");
        assert_eq!(
            seen[&location("copies", "x/SKILL.md")],
            "2026-01-01T00:00:00Z",
            "each source's record is its own"
        );
        assert_eq!(seen.len(), 4);
        // Two lines for one place (two builders): the earliest counts.
        let text = "{\"content_key\":\"a\",\"first_seen\":\"2026-05-01T00:00:00Z\",\"path\":\"w\"}\n{\"content_key\":\"b\",\"first_seen\":\"2026-04-01T00:00:00Z\",\"path\":\"w\"}\n";
        std::fs::write(dir.path().join(SEEN_FILE), text).unwrap();
        assert_eq!(
            first_seen(&store).await.unwrap()[&location("", "w")],
            "2026-04-01T00:00:00Z"
        );
    }
}
