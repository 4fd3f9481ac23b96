//! Patterns with Unicode word boundaries (`\b`), matched at the lazy
//! DFA's speed on any text, with the answers the patterns give as written.
//!
//! `regex` reads a Unicode `\b` in its lazy DFA only while the text is
//! ASCII: one non-ASCII character (an accent, a CJK word, an emoji) sends
//! the whole search to the PikeVM or the backtracker, tens of times
//! slower, and a set of patterns to the PikeVM always. That was the
//! largest cost of the scan on skills written in other languages.
//!
//! So each pattern has a loose copy with every `\b` and `\B` dropped. An
//! assertion dropped can only let a pattern match more, never less: where
//! the loose copy finds nothing, the pattern as written finds nothing
//! either. On non-ASCII text the loose copy (DFA-fast: it has no word
//! boundary) runs first, and the pattern as written runs only where the
//! loose one matched. On ASCII text the pattern as written runs alone.

use std::borrow::Cow;

use regex::{Captures, Match, Regex, RegexBuilder, RegexSet, RegexSetBuilder};

/// `pattern` with every word-boundary assertion (`\b`, `\B`, `\b{...}`)
/// dropped: it matches wherever `pattern` does, and maybe elsewhere.
pub fn loosen(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('b' | 'B') => {
                if chars.peek() == Some(&'{') {
                    for c in chars.by_ref() {
                        if c == '}' {
                            break;
                        }
                    }
                }
            }
            Some(next) => {
                out.push('\\');
                out.push(next);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Whether `pattern` has a word-boundary assertion.
fn has_boundary(pattern: &str) -> bool {
    loosen(pattern).len() != pattern.len()
}

/// How a pattern is compiled: whether `^` and `$` match at line ends, and
/// the size limits.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// `^` and `$` match at line ends.
    pub multi_line: bool,
    /// The compiled program's limit.
    pub size_limit: usize,
    /// The lazy DFA's cache limit (`None`: `regex`'s default).
    pub dfa_size_limit: Option<usize>,
}

fn regex(pattern: &str, options: Options) -> Regex {
    let mut builder = RegexBuilder::new(pattern);
    builder
        .multi_line(options.multi_line)
        .size_limit(options.size_limit);
    if let Some(limit) = options.dfa_size_limit {
        builder.dfa_size_limit(limit);
    }
    builder
        .build()
        .unwrap_or_else(|e| panic!("pattern {pattern}: {e}"))
}

/// One pattern, with its loose copy when it has word boundaries.
#[derive(Debug, Clone)]
pub struct WordRegex {
    exact: Regex,
    loose: Option<Regex>,
}

impl WordRegex {
    /// Compiles `pattern` (and its loose copy).
    pub fn new(pattern: &str, options: Options) -> Self {
        let loose = has_boundary(pattern).then(|| regex(&loosen(pattern), options));
        Self {
            exact: regex(pattern, options),
            loose,
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        self.exact.as_str()
    }

    /// The pattern as written, unless the loose copy shows it cannot
    /// match `text`.
    fn gate(&self, text: &str) -> Option<&Regex> {
        match &self.loose {
            Some(loose) if !text.is_ascii() && !loose.is_match(text) => None,
            _ => Some(&self.exact),
        }
    }

    /// See [`Regex::is_match`].
    pub fn is_match(&self, text: &str) -> bool {
        self.gate(text).is_some_and(|re| re.is_match(text))
    }

    /// See [`Regex::find`].
    pub fn find<'h>(&self, text: &'h str) -> Option<Match<'h>> {
        self.gate(text).and_then(|re| re.find(text))
    }

    /// See [`Regex::find_iter`].
    pub fn find_iter<'r, 'h>(&'r self, text: &'h str) -> impl Iterator<Item = Match<'h>> + 'r
    where
        'h: 'r,
    {
        self.gate(text)
            .into_iter()
            .flat_map(move |re| re.find_iter(text))
    }

    /// See [`Regex::captures`].
    pub fn captures<'h>(&self, text: &'h str) -> Option<Captures<'h>> {
        self.gate(text).and_then(|re| re.captures(text))
    }

    /// See [`Regex::captures_iter`].
    pub fn captures_iter<'r, 'h>(&'r self, text: &'h str) -> impl Iterator<Item = Captures<'h>> + 'r
    where
        'h: 'r,
    {
        self.gate(text)
            .into_iter()
            .flat_map(move |re| re.captures_iter(text))
    }

    /// See [`Regex::replace_all`] (with a literal replacement).
    pub fn replace_all<'h>(&self, text: &'h str, with: &str) -> Cow<'h, str> {
        match self.gate(text) {
            Some(re) => re.replace_all(text, regex::NoExpand(with)),
            None => Cow::Borrowed(text),
        }
    }
}

/// Which patterns of a [`WordSet`] matched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetHits(Vec<usize>);

impl SetHits {
    /// Whether pattern `i` matched.
    pub fn matched(&self, i: usize) -> bool {
        self.0.contains(&i)
    }

    /// The patterns that matched, in order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().copied()
    }
}

/// Patterns matched together, in one pass, with their loose copies.
#[derive(Debug, Clone)]
pub struct WordSet {
    exact: RegexSet,
    loose: RegexSet,
    each: Vec<Regex>,
}

impl WordSet {
    /// Compiles `patterns` as one set.
    pub fn new<S: AsRef<str>>(patterns: &[S], options: Options) -> Self {
        let set = |patterns: Vec<String>| {
            let mut builder = RegexSetBuilder::new(&patterns);
            builder
                .multi_line(options.multi_line)
                .size_limit(options.size_limit);
            if let Some(limit) = options.dfa_size_limit {
                builder.dfa_size_limit(limit);
            }
            builder
                .build()
                .unwrap_or_else(|e| panic!("pattern set: {e}"))
        };
        let written: Vec<String> = patterns.iter().map(|p| p.as_ref().to_string()).collect();
        Self {
            loose: set(written.iter().map(|p| loosen(p)).collect()),
            each: written.iter().map(|p| regex(p, options)).collect(),
            exact: set(written),
        }
    }

    /// The patterns that match `text`, exactly as the set as written says.
    pub fn matches(&self, text: &str) -> SetHits {
        if text.is_ascii() {
            return SetHits(self.exact.matches(text).iter().collect());
        }
        SetHits(
            self.loose
                .matches(text)
                .iter()
                .filter(|&i| self.each[i].is_match(text))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTIONS: Options = Options {
        multi_line: true,
        size_limit: 1 << 20,
        dfa_size_limit: None,
    };

    #[test]
    fn loosening_drops_only_word_boundaries() {
        assert_eq!(loosen(r"\bcurl\b"), "curl");
        assert_eq!(loosen(r"\Bx\b{start}y"), "xy");
        assert_eq!(loosen(r"a\\b\.\d"), r"a\\b\.\d");
        assert_eq!(loosen(r"(?i:\b(?:a|b)\b)"), "(?i:(?:a|b))");
    }

    #[test]
    fn answers_are_those_of_the_patterns_as_written() {
        let patterns = [
            r"\bcurl\b",
            r"(?i:\bsecretly\b[^\n]{0,20}\bsend\b)",
            r"\bid\b",
        ];
        let set = WordSet::new(&patterns, OPTIONS);
        let texts = [
            "curl x",
            "écurl x",
            "é curl x",
            "Secretly — send ça",
            "secretlyé send",
            "provide ça",
            "the id — ça",
            "ça",
        ];
        for text in texts {
            let want: Vec<usize> = RegexSet::new(patterns)
                .unwrap()
                .matches(text)
                .iter()
                .collect();
            assert_eq!(set.matches(text).0, want, "{text}");
            for (i, p) in patterns.iter().enumerate() {
                let one = WordRegex::new(p, OPTIONS);
                let re = Regex::new(p).unwrap();
                assert_eq!(one.is_match(text), re.is_match(text), "{p} on {text}");
                assert_eq!(one.find(text), re.find(text));
                assert_eq!(one.replace_all(text, "X"), re.replace_all(text, "X"), "{i}");
            }
        }
    }
}
