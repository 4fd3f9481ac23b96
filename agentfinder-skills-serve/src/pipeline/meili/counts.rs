//! How common words are in a Meilisearch index, remembered for a while.
//!
//! Each count is a search of its own (1 to 3 ms, on a small index as on
//! one of 313,903 documents), and users' queries share most of their
//! words. A count is a statistic a sync changes little, so the counts of
//! an index are kept for [`KEPT_FOR`] with its searchable fields and its
//! size, then read again with them; they are forgotten at once when a
//! search of the index is refused for the fields it searched (the index
//! changed).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use agentfinder_skills_reader::rules::fields::WEIGHTED_FIELDS;

/// How long an index's counts are kept.
pub const KEPT_FOR: Duration = Duration::from_secs(300);

/// Most words kept per index (past it, they are read again).
pub const MOST_WORDS: usize = 50_000;

/// The longest word kept (longer ones are counted each time), so the
/// words kept stay under about 8 MB an index.
pub const LONGEST_WORD: usize = 64;

/// Documents holding a word in each of [`WEIGHTED_FIELDS`].
pub type Holding = [u64; WEIGHTED_FIELDS.len()];

/// What is known of an index as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexFacts {
    /// Which of [`WEIGHTED_FIELDS`] it searches.
    pub searched: [bool; WEIGHTED_FIELDS.len()],
    /// Documents it holds.
    pub documents: u64,
}

struct Kept {
    since: Instant,
    facts: IndexFacts,
    words: HashMap<String, Holding>,
}

fn kept() -> MutexGuard<'static, HashMap<String, Kept>> {
    static KEPT: OnceLock<Mutex<HashMap<String, Kept>>> = OnceLock::new();
    // What is kept is a cache: one a panic left half-written is still
    // counts, each whole.
    KEPT.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

fn key(url: &str, index: &str) -> String {
    format!("{url}\n{index}")
}

/// The facts of `index` at `url` and the counts of `words` known, unless
/// they are older than [`KEPT_FOR`] or were never read.
pub fn recall(
    url: &str,
    index: &str,
    words: &[String],
) -> Option<(IndexFacts, Vec<Option<Holding>>)> {
    let kept = kept();
    let index = kept.get(&key(url, index))?;
    if index.since.elapsed() > KEPT_FOR {
        return None;
    }
    let counts = words.iter().map(|w| index.words.get(w).copied()).collect();
    Some((index.facts, counts))
}

/// Keeps `facts` (when read again: the counts kept before are dropped)
/// and `counted` for `index` at `url`.
pub fn remember(
    url: &str,
    index: &str,
    facts: Option<IndexFacts>,
    counted: impl IntoIterator<Item = (String, Holding)>,
) {
    let mut kept = kept();
    let key = key(url, index);
    if let Some(facts) = facts {
        kept.insert(
            key.clone(),
            Kept {
                since: Instant::now(),
                facts,
                words: HashMap::new(),
            },
        );
    }
    if let Some(index) = kept.get_mut(&key) {
        if index.words.len() >= MOST_WORDS {
            index.words.clear();
        }
        index
            .words
            .extend(counted.into_iter().filter(|(w, _)| w.len() <= LONGEST_WORD));
    }
}

/// Forgets what is kept of `index` at `url`.
pub fn forget(url: &str, index: &str) {
    kept().remove(&key(url, index));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_kept_per_index_until_forgotten() {
        let url = "http://counts.test";
        let facts = IndexFacts {
            searched: [true; 8],
            documents: 10,
        };
        let words = ["pdf".to_string(), "merge".to_string()];
        assert!(recall(url, "a", &words).is_none(), "never read");
        remember(url, "a", Some(facts), [("pdf".to_string(), [3; 8])]);
        let (known, counts) = recall(url, "a", &words).unwrap();
        assert_eq!(known, facts);
        assert_eq!(counts, [Some([3; 8]), None]);
        assert!(recall(url, "b", &words).is_none(), "another index");
        // Counts added later join the kept ones; facts read again drop them.
        remember(url, "a", None, [("merge".to_string(), [1; 8])]);
        assert_eq!(
            recall(url, "a", &words).unwrap().1,
            [Some([3; 8]), Some([1; 8])]
        );
        remember(url, "a", Some(facts), []);
        assert_eq!(recall(url, "a", &words).unwrap().1, [None, None]);
        forget(url, "a");
        assert!(recall(url, "a", &words).is_none());
    }
}
