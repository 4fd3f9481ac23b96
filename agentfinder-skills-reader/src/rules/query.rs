//! What both engines share about a query's words (pure): the words
//! neither matches on, and the part of a query that rules something out.
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

/// Most words of a query that are searched (the first ones, after stop
/// words are dropped): each word is work for an engine, so a 2 KB query
/// could otherwise become hundreds of term lookups.
pub const MAX_QUERY_WORDS: usize = 32;

/// The words of `text` as both engines index them: runs of letters and
/// digits, lowercase (the embedded engine's tokenizer, and how Meilisearch
/// splits Latin text).
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// The words of a query that are searched: each once, in order, without
/// stop words unless the query has nothing else, at most
/// [`MAX_QUERY_WORDS`].
pub fn query_words(text: &str) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for word in words(text) {
        if !all.contains(&word) {
            all.push(word);
        }
    }
    let meaningful: Vec<String> = all.iter().filter(|w| !is_stop_word(w)).cloned().collect();
    let mut kept = if meaningful.is_empty() {
        all
    } else {
        meaningful
    };
    kept.truncate(MAX_QUERY_WORDS);
    kept
}

/// Most compounds of a query matched as written.
pub const MAX_COMPOUNDS: usize = 4;

/// The compounds of a query (`with_server.py`, `shadcn/ui`): each run
/// between whitespace that splits into two words or more, as those words,
/// each compound once. Word by word they are common words; as written
/// they name one thing.
pub fn compounds(text: &str) -> Vec<Vec<String>> {
    let mut found: Vec<Vec<String>> = Vec::new();
    for run in text.split_whitespace() {
        let run: Vec<String> = words(run).collect();
        if run.len() >= 2 && !found.contains(&run) {
            found.push(run);
        }
        if found.len() == MAX_COMPOUNDS {
            break;
        }
    }
    found
}

/// How strongly the share of a query's words a hit holds weighs its
/// score: the score times the share to this power. Measured on the
/// embedded engine with `eval --answer-sources anthropics,openai` (keyword
/// top-3, 89 queries): over 27 skills plus AgentWorkers/skills' 18,434 as
/// distractors, 0.573 with no weighing, 0.719 at power 1, **0.764 at 2**,
/// 0.764 ranking by the share first (Meilisearch's way); over the 27
/// skills alone 0.978, 0.944, **0.944** and 0.921.
pub const SHARE_POWER: i32 = 2;

/// `score` weighed by the share of a query's `words` a hit holds (`held`
/// of them), to the power [`SHARE_POWER`].
pub fn weighed_by_share(score: f64, held: usize, words: usize) -> f64 {
    let share = held as f64 / words.max(1) as f64;
    score * share.powi(SHARE_POWER)
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
    fn query_words_drop_stop_words_and_repeats_and_compounds_keep_their_order() {
        assert_eq!(query_words("Merge the PDF, merge a pdf!"), ["merge", "pdf"]);
        assert_eq!(query_words("to the"), ["to", "the"]);
        assert_eq!(query_words(&"w ".repeat(50)).len(), 1);
        let many: String = (0..40).map(|n| format!("word{n} ")).collect();
        assert_eq!(query_words(&many).len(), MAX_QUERY_WORDS);
        assert_eq!(
            compounds("run with_server.py then shadcn/ui and with_server.py"),
            [vec!["with", "server", "py"], vec!["shadcn", "ui"]]
        );
        assert!(compounds("plain words only").is_empty());
        assert!((weighed_by_share(2.0, 1, 2) - 0.5).abs() < 1e-12);
        assert_eq!(weighed_by_share(2.0, 0, 0), 0.0);
    }
}
