//! The pattern sets matched through their literals answer exactly as one
//! plain set of the same patterns would, on every line (detector) and every
//! file (rule table) of the evaluation fixtures, as written and (for a
//! sample of lines) with a non-ASCII character added, which sends the word
//! sets down their loose path.

use std::path::Path;

use regex::RegexSet;

use super::super::capability::Detector;
use super::super::engine::COMPILED;

/// Every fixture file of the risk evaluation, as text.
fn fixture_texts() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/risk-eval");
    let mut texts = Vec::new();
    let mut folders = vec![root];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                texts.push(text);
            }
        }
    }
    assert!(texts.len() > 500, "the fixtures are there: {}", texts.len());
    texts
}

#[test]
fn the_detectors_sets_answer_as_one_plain_set() {
    let texts = fixture_texts();
    let detector = Detector::get();
    let mut matched = 0;
    for set in detector.sets() {
        let patterns = set.patterns();
        let plain = RegexSet::new(&patterns).expect("the patterns compile");
        for (n, line) in texts.iter().flat_map(|t| t.lines()).enumerate() {
            // A plain set reads non-ASCII text with its slowest engine:
            // every fifth line, up to 300 bytes, is enough for the path.
            let accented = (n % 5 == 0 && line.len() <= 300).then(|| format!("{line} é"));
            for text in std::iter::once(line.to_string()).chain(accented) {
                let want: Vec<usize> = plain.matches(&text).iter().collect();
                let got: Vec<usize> = set.matches(&text).iter().collect();
                assert_eq!(got, want, "{text}");
                matched += want.len();
            }
        }
    }
    // The fixtures hold the attacks the sets are for.
    assert!(matched > 1000, "{matched}");
}

#[test]
fn the_rule_tables_candidates_hold_every_rule_that_matches() {
    let compiled = COMPILED.get();
    let plain = regex::bytes::RegexSetBuilder::new(compiled.patterns())
        .unicode(false)
        .multi_line(true)
        .size_limit(64 << 20)
        .build()
        .expect("the patterns compile");
    let mut matched = 0;
    for text in fixture_texts() {
        let candidates = compiled.candidates(text.as_bytes());
        for rule in plain.matches(text.as_bytes()).iter() {
            assert!(candidates.contains(&rule), "rule {rule} on {text}");
            matched += 1;
        }
    }
    assert!(matched > 100, "{matched}");
}
