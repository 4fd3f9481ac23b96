//! The fields both engines search, and how much a match in each counts
//! (pure).

use serde_json::Value;

use super::query::words;

/// The searchable fields and how much a match in each counts (the order
/// of Meilisearch's `searchableAttributes`, most important first). The
/// embedded engine indexes them with these weights; over Meilisearch the
/// serving pipeline scores its candidates with the same ones.
pub const WEIGHTED_FIELDS: [(&str, f32); 8] = [
    ("skill_name", 4.0),
    ("title", 3.0),
    ("heading_path", 2.0),
    ("skill_description", 2.0),
    ("marketplace_description", 1.5),
    ("content", 1.0),
    ("text", 1.0),
    ("path", 1.0),
];

/// How many of [`WEIGHTED_FIELDS`], from the first, are names: a match
/// there counts the field's weight whatever its length (not BM25), and a
/// word of [`TYPO_MIN_LENGTH`] letters or more may be one typo away.
pub const NAME_FIELDS: usize = 2;

/// The shortest word that may match a name one typo away (Meilisearch's
/// default `minWordSizeForTypos.oneTypo`).
pub const TYPO_MIN_LENGTH: usize = 5;

/// Most words of one query that may match one typo away (each is a walk
/// of an index's term dictionary).
pub const MAX_TYPO_WORDS: usize = 8;

/// The words of `field` of `document` as both engines index them, in
/// order (an array's items one after the other; nothing for a missing or
/// non-text field).
pub fn field_words(document: &Value, field: &str) -> Vec<String> {
    match document.get(field) {
        Some(Value::String(text)) => words(text).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .flat_map(words)
            .collect(),
        _ => Vec::new(),
    }
}

/// Which of a query's `words` may match a name one typo away: those of
/// [`TYPO_MIN_LENGTH`] letters or more, the first [`MAX_TYPO_WORDS`] of
/// them.
pub fn typo_allowed(words: &[String]) -> Vec<bool> {
    let mut left = MAX_TYPO_WORDS;
    words
        .iter()
        .map(|word| {
            let allowed = left > 0 && word.chars().count() >= TYPO_MIN_LENGTH;
            left -= usize::from(allowed);
            allowed
        })
        .collect()
}

/// Whether `found` is `wanted` but for one typo (a letter added, dropped,
/// replaced, or two neighbours swapped) after the first letter, which
/// Meilisearch counts as two typos and never allows with one.
pub fn one_typo_apart(wanted: &str, found: &str) -> bool {
    let (mut w, mut f) = (wanted.chars(), found.chars());
    match (w.next(), f.next()) {
        (Some(a), Some(b)) if a == b => strsim::osa_distance(w.as_str(), f.as_str()) <= 1,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_field_is_read_as_its_words_arrays_item_by_item() {
        let doc = json!({"title": "Merge PDFs", "heading_path": ["Usage", "pypdf.merge"], "n": 3});
        assert_eq!(field_words(&doc, "title"), ["merge", "pdfs"]);
        assert_eq!(
            field_words(&doc, "heading_path"),
            ["usage", "pypdf", "merge"]
        );
        assert!(field_words(&doc, "n").is_empty());
        assert!(field_words(&doc, "content").is_empty());
    }

    #[test]
    fn long_words_take_a_typo_the_first_eight_of_them() {
        let words: Vec<String> = "pdf merging spreadsheets"
            .split(' ')
            .map(String::from)
            .collect();
        assert_eq!(typo_allowed(&words), [false, true, true]);
        let many: Vec<String> = (0..10).map(|n| format!("word{n}")).collect();
        let allowed = typo_allowed(&many);
        assert_eq!(allowed.iter().filter(|a| **a).count(), MAX_TYPO_WORDS);
        assert!(allowed[..MAX_TYPO_WORDS].iter().all(|a| *a));
    }

    #[test]
    fn one_typo_but_never_on_the_first_letter() {
        assert!(one_typo_apart("pdfmerge", "pdfmerge"));
        assert!(one_typo_apart("spreadsheet", "spreadshet"));
        assert!(one_typo_apart("spreadsheet", "speradsheet"));
        assert!(one_typo_apart("slides", "sildes"));
        assert!(!one_typo_apart("slides", "gliders"));
        assert!(!one_typo_apart("slides", "clides"));
        assert!(!one_typo_apart("slides", "slid"));
        assert!(!one_typo_apart("", "a"));
    }
}
