//! What both engines share about ranking (pure): the words of a query
//! neither matches on, the part of a query that rules something out, and
//! when a best match is too weak to be an answer.
//!
//! Measured through the real pipeline on a real Meilisearch 1.50 over the
//! 89 answerable queries of `fixtures/eval/queries.json`, the engines rank
//! best with different fusions of their keyword and vector halves, so each
//! keeps its own: Meilisearch's hybrid search blends the two by score
//! (top-3 0.955 at ratio 0.5), where a reciprocal-rank fusion of a keyword
//! and a vector query in the reader scored 0.854, because its keyword half
//! counts matched words and ranks paraphrases poorly (0.809 alone); the
//! embedded engine fuses BM25 and vectors by rank (0.989 at 0.5).

/// Words that carry no meaning of their own in the sentences agents write
/// ("a tiny animation to use in our team chat"): neither engine matches
/// on them. Meilisearch gets them as the index's `stopWords` (without
/// them its keyword ranking, which counts matched words rather than
/// weighting rare ones, favours whatever skill repeats "a", "to" and
/// "our"); the embedded engine drops them from the query.
pub const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "i", "in", "into", "is", "it",
    "its", "me", "my", "of", "on", "onto", "or", "our", "that", "the", "these", "this", "those",
    "to", "us", "using", "via", "we", "with", "you", "your",
];

/// Whether `word` is one of the [`STOP_WORDS`] (in any case).
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS
        .iter()
        .any(|stop| stop.eq_ignore_ascii_case(word))
}

/// Phrases after which a query names what it does not want ("a slide deck
/// rather than a Word document"), lowercase.
pub const RULING_OUT: &[&str] = &[
    "rather than",
    "instead of",
    "as opposed to",
    "other than",
    "but not",
    "and not",
    ", not",
];

/// Words that end a part ruled out: the query goes on to what it wants
/// ("rather than slides, and keep it short").
const CLAUSE_WORDS: &[&str] = &["and", "but", "so", "then", "because", "while", "with"];

/// `query` without the parts that rule something out: from a phrase of
/// [`RULING_OUT`] to the end of its clause (a `,;.!?()` or one of
/// [`CLAUSE_WORDS`]). Both engines search what is left, since matching the
/// words a query rules out ranks exactly the skills it does not want first
/// (among 18,434 distractors, "a spreadsheet rather than slides" found
/// slide makers). A query that would be left with no word of its own is
/// kept whole.
pub fn without_ruled_out(query: &str) -> std::borrow::Cow<'_, str> {
    // ASCII lowercasing keeps every byte where it was.
    let lower = query.to_ascii_lowercase();
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut from = 0;
    while let Some((start, cue)) = RULING_OUT
        .iter()
        .filter_map(|cue| find_phrase(&lower, cue, from).map(|at| (at, *cue)))
        .min()
    {
        let end = clause_end(&lower, start + cue.len());
        cuts.push((start, end));
        from = end;
    }
    if cuts.is_empty() {
        return std::borrow::Cow::Borrowed(query);
    }
    let mut kept = String::with_capacity(query.len());
    let mut at = 0;
    for (start, end) in cuts {
        kept.push_str(query[at..start].trim_end());
        if query[end..].starts_with(char::is_alphanumeric) {
            kept.push(' ');
        }
        at = end;
    }
    kept.push_str(&query[at..]);
    let kept = kept.split_whitespace().collect::<Vec<_>>().join(" ");
    let meaningful = kept
        .split(|c: char| !c.is_alphanumeric())
        .any(|word| !word.is_empty() && !is_stop_word(word));
    if meaningful {
        std::borrow::Cow::Owned(kept)
    } else {
        std::borrow::Cow::Borrowed(query)
    }
}

/// Where `phrase` first starts in `text` at or after `from`, as whole words.
fn find_phrase(text: &str, phrase: &str, from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(found) = text.get(at..)?.find(phrase) {
        let start = at + found;
        let end = start + phrase.len();
        // A phrase that starts at a comma may follow a word directly.
        let before = text[..start]
            .chars()
            .next_back()
            .filter(|_| phrase.starts_with(char::is_alphanumeric));
        let after = text[end..].chars().next();
        if !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric) {
            return Some(start);
        }
        at = end;
    }
    None
}

/// Where the clause going on at `from` ends in `text` (lowercase).
fn clause_end(text: &str, from: usize) -> usize {
    let mut word_start = None;
    for (i, c) in text[from..].char_indices().map(|(i, c)| (from + i, c)) {
        if ",;.!?()".contains(c) {
            return i;
        }
        if c.is_alphanumeric() {
            word_start.get_or_insert(i);
            continue;
        }
        if let Some(start) = word_start.take() {
            if CLAUSE_WORDS.contains(&&text[start..i]) {
                return start;
            }
        }
    }
    text.len()
}

/// Below this vector similarity (Meilisearch's scale: `(1 + cosine) / 2`,
/// so 0.64 is a cosine of 0.28) the best hit is no good match: the store
/// most likely holds no skill for the query. Measured with
/// all-MiniLM-L6-v2 over `fixtures/eval/queries.json` (27 skills): every
/// one of the 89 answerable queries had a best similarity of 0.649 or more,
/// and 7 of the 8 with no answer less than 0.64 (the eighth, "fine-tune a
/// speech recognition model on GPUs", 0.668). Another model needs its own
/// threshold.
pub const NO_GOOD_MATCH_BELOW: f64 = 0.64;

/// Meilisearch's similarity of a cosine: `(1 + cosine) / 2`, in 0 to 1.
pub fn similarity_of_cosine(cosine: f32) -> f64 {
    ((1.0 + f64::from(cosine)) / 2.0).clamp(0.0, 1.0)
}

/// How well the best hit matches, when the engine ranked by vectors.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MatchStrength {
    /// The highest vector similarity among the hits (0 to 1).
    pub best_similarity: f64,
    /// [`NO_GOOD_MATCH_BELOW`].
    pub threshold: f64,
    /// Whether `best_similarity` reaches the threshold; false means: no
    /// good match.
    pub good: bool,
}

impl MatchStrength {
    /// The strength of a best similarity.
    pub fn of(best_similarity: f64) -> Self {
        Self {
            best_similarity,
            threshold: NO_GOOD_MATCH_BELOW,
            good: best_similarity >= NO_GOOD_MATCH_BELOW,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_matched_in_any_case_and_whole() {
        assert!(is_stop_word("The") && is_stop_word("our"));
        assert!(!is_stop_word("theme") && !is_stop_word("pdf"));
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, STOP_WORDS, "sorted, once each");
    }

    #[test]
    fn what_a_query_rules_out_is_not_searched() {
        let cases = [
            (
                "put the quarterly numbers in a spreadsheet rather than slides",
                "put the quarterly numbers in a spreadsheet",
            ),
            (
                "a slide deck rather than a Word document, with speaker notes",
                "a slide deck, with speaker notes",
            ),
            (
                "Instead of slides, chart the numbers and not a table",
                ", chart the numbers",
            ),
            (
                "visual styling with a named theme rather than the company brand",
                "visual styling with a named theme",
            ),
            // A cue inside a word is no cue; nothing to rule out.
            (
                "notable otherthan rather thanks",
                "notable otherthan rather thanks",
            ),
            (
                "merge two pdf files into one",
                "merge two pdf files into one",
            ),
            ("a Word document, not a PDF", "a Word document"),
            (
                "meeting prep in Notion, not a research report",
                "meeting prep in Notion",
            ),
            // "not" alone is no contrast: "do not", "notes".
            ("do not overwrite notes", "do not overwrite notes"),
            // Nothing of its own would be left: kept whole.
            ("rather than slides", "rather than slides"),
            // Not ASCII: cut at the same characters.
            ("un résumé rather than a CV", "un résumé"),
        ];
        for (query, wanted) in cases {
            assert_eq!(without_ruled_out(query), wanted, "{query}");
        }
    }

    #[test]
    fn a_weak_best_similarity_is_no_good_match() {
        assert!((similarity_of_cosine(0.28) - 0.64).abs() < 1e-6);
        assert_eq!(similarity_of_cosine(1.0), 1.0);
        assert_eq!(similarity_of_cosine(-1.0), 0.0);
        assert!(!MatchStrength::of(0.60).good);
        assert!(MatchStrength::of(0.70).good);
    }
}
