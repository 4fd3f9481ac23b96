//! Patterns with Unicode word boundaries (`\b`), matched at the lazy
//! DFA's speed on any text, with the answers the patterns give as written.
//!
//! `regex` reads a Unicode `\b` in its lazy DFA only while the text is
//! ASCII: one non-ASCII character (an accent, a CJK word, an emoji) sends
//! the whole search to the PikeVM or the backtracker, tens of times
//! slower, and a set of patterns to the PikeVM always. That was the
//! largest cost of the scan on skills written in other languages.
//!
//! So each pattern has a loose copy with every `\b` and `\B` dropped,
//! and every bounded repetition `{m,n}` opened to `{m,}` (the counting
//! in `[^\n]{0,80}` is what makes a lazy DFA's states multiply). Either
//! change can only let a pattern match more, never less: where the loose
//! copy finds nothing, the pattern as written finds nothing either. The
//! loose copy runs first, at DFA speed, and the pattern as written runs
//! only where the loose one matched.
//!
//! A set ([`WordSet::new`]) runs only the patterns whose literals the text
//! holds ([`super::literals`]), each alone; those with no useful literal
//! run as one smaller set, as written on ASCII text (its DFA reads `\b`
//! there). The prose patterns, long and case-insensitive, run one by one,
//! loose copy first, on any text: as one set they cost ten times more on
//! the same paragraphs.

use std::borrow::Cow;

use regex::{Captures, Match, Regex, RegexBuilder, RegexSet, RegexSetBuilder};

use super::literals::{Prefilter, Syntax};

/// `pattern` with every word-boundary assertion (`\b`, `\B`, `\b{...}`)
/// dropped and every bounded repetition `{m,n}` outside a class opened
/// to `{m,}`: it matches wherever `pattern` does, and maybe elsewhere.
pub fn loosen(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len());
    let (mut i, mut class) = (0, 0usize);
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            match chars.get(i + 1) {
                Some('b' | 'B') if class == 0 => {
                    i += 2;
                    if chars.get(i) == Some(&'{') {
                        while i < chars.len() && chars[i] != '}' {
                            i += 1;
                        }
                        i += 1;
                    }
                }
                Some(&next) => {
                    out.push('\\');
                    out.push(next);
                    i += 2;
                }
                None => {
                    out.push('\\');
                    i += 1;
                }
            }
            continue;
        }
        if class > 0 {
            class = match c {
                '[' => class + 1,
                ']' => class - 1,
                _ => class,
            };
            out.push(c);
            i += 1;
            continue;
        }
        if c == '[' {
            // `[`, then `^` and a `]` that are literal where they stand.
            class = 1;
            out.push(c);
            i += 1;
            for literal in ['^', ']'] {
                if chars.get(i) == Some(&literal) {
                    out.push(literal);
                    i += 1;
                }
            }
            continue;
        }
        if c == '{' {
            if let Some(min) = bounded_repetition(&chars[i..]) {
                out.push('{');
                out.push_str(&min.0);
                out.push_str(",}");
                i += min.1;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

/// For `{m,n}` at the start of `chars`: `m`, and the length of `{m,n}`.
fn bounded_repetition(chars: &[char]) -> Option<(String, usize)> {
    let end = chars.iter().position(|&c| c == '}')?;
    let inner: String = chars[1..end].iter().collect();
    let (min, max) = inner.split_once(',')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(min) && digits(max)).then(|| (min.to_string(), end + 1))
}

/// Whether loosening changes `pattern`.
fn loosens(pattern: &str) -> bool {
    loosen(pattern) != pattern
}

/// The lazy-DFA cache limit of the large pattern sets. Each thread that
/// searches a set grows a cache of its own up to this, kept until the sets
/// are released (`risk::release_caches`). A cold build of AgentWorkers
/// (18,427 skills, from a folder, profiling build, 2 threads; user CPU
/// seconds / peak RSS), with the sets released after the parse stage:
/// 32 MB 232 s / 765 MB, 16 MB 321 s / 679 MB; at 64 MB and never
/// released it was 221 s / 1,150 MB. Smaller caches are cleared so often
/// that searches fall back to slower engines: 16 MB already costs 38% more
/// CPU on the whole corpus (8 MB: +62% on a 4,990-skill subset).
pub const SET_CACHE_LIMIT: usize = 32 << 20;

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
        let loose = loosens(pattern).then(|| regex(&loosen(pattern), options));
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

/// The patterns of a set with no useful literal, as a set of their own
/// (and its loose copy); `numbers` are their places in the whole set.
#[derive(Debug, Clone)]
struct Rest {
    exact: RegexSet,
    loose: RegexSet,
    numbers: Vec<usize>,
}

/// `patterns` as one [`RegexSet`].
fn regex_set(patterns: &[String], options: Options) -> RegexSet {
    let mut builder = RegexSetBuilder::new(patterns);
    builder
        .multi_line(options.multi_line)
        .size_limit(options.size_limit);
    if let Some(limit) = options.dfa_size_limit {
        builder.dfa_size_limit(limit);
    }
    builder
        .build()
        .unwrap_or_else(|e| panic!("pattern set: {e}"))
}

/// Patterns matched together, with their loose copies.
#[derive(Debug, Clone)]
pub struct WordSet {
    how: How,
    each: Vec<Regex>,
}

#[derive(Debug, Clone)]
enum How {
    /// The patterns whose literals the text holds ([`Prefilter`]), each
    /// run alone (loose copy first on text that is not ASCII), and those
    /// with no useful literal as one smaller set.
    Prefiltered {
        prefilter: Prefilter,
        loose: Vec<Option<Regex>>,
        rest: Option<Box<Rest>>,
    },
    /// Each loose copy alone, then the pattern as written where it matched.
    OneByOne { loose: Vec<Regex> },
}

impl WordSet {
    /// Compiles `patterns` to be matched together: one pass for their
    /// literals, then the candidates alone.
    pub fn new<S: AsRef<str>>(patterns: &[S], options: Options) -> Self {
        let syntax = Syntax {
            multi_line: options.multi_line,
            unicode: true,
        };
        let prefilter = Prefilter::new(patterns, syntax);
        let numbers = prefilter.always().to_vec();
        let rest = (!numbers.is_empty()).then(|| {
            let written: Vec<String> = numbers
                .iter()
                .map(|&i| patterns[i].as_ref().to_string())
                .collect();
            let loose: Vec<String> = written.iter().map(|p| loosen(p)).collect();
            Box::new(Rest {
                exact: regex_set(&written, options),
                loose: regex_set(&loose, options),
                numbers,
            })
        });
        let loose = patterns
            .iter()
            .map(|p| loosens(p.as_ref()).then(|| regex(&loosen(p.as_ref()), options)))
            .collect();
        Self {
            how: How::Prefiltered {
                prefilter,
                loose,
                rest,
            },
            each: patterns
                .iter()
                .map(|p| regex(p.as_ref(), options))
                .collect(),
        }
    }

    /// Compiles `patterns` to be tried one by one, loose copy first: for
    /// long case-insensitive patterns, whose set's lazy DFA keeps
    /// building states (and falls back to the PikeVM).
    pub fn one_by_one<S: AsRef<str>>(patterns: &[S], options: Options) -> Self {
        let each = |loose: bool| -> Vec<Regex> {
            patterns
                .iter()
                .map(|p| match loose {
                    true => regex(&loosen(p.as_ref()), options),
                    false => regex(p.as_ref(), options),
                })
                .collect()
        };
        Self {
            how: How::OneByOne { loose: each(true) },
            each: each(false),
        }
    }

    /// The patterns that match `text`, exactly as the patterns as written
    /// (alone or as one set) say.
    pub fn matches(&self, text: &str) -> SetHits {
        match &self.how {
            How::Prefiltered {
                prefilter,
                loose,
                rest,
            } => self.prefiltered(prefilter, loose, rest.as_deref(), text),
            How::OneByOne { loose } => SetHits(
                (0..loose.len())
                    .filter(|&i| loose[i].is_match(text) && self.each[i].is_match(text))
                    .collect(),
            ),
        }
    }

    fn prefiltered(
        &self,
        prefilter: &Prefilter,
        loose: &[Option<Regex>],
        rest: Option<&Rest>,
        text: &str,
    ) -> SetHits {
        let ascii = text.is_ascii();
        let mut hits: Vec<usize> = prefilter
            .candidates(text.as_bytes())
            .into_iter()
            .filter(|&i| ascii || loose[i].as_ref().is_none_or(|l| l.is_match(text)))
            .filter(|&i| self.each[i].is_match(text))
            .collect();
        if let Some(rest) = rest {
            // On ASCII text the set as written answers (its DFA reads `\b`
            // there); else its loose copy picks the patterns to run as
            // written.
            let found = match ascii {
                true => rest.exact.matches(text),
                false => rest.loose.matches(text),
            };
            let found = found.iter().map(|at| rest.numbers[at]);
            hits.extend(found.filter(|&i| ascii || self.each[i].is_match(text)));
            hits.sort_unstable();
        }
        SetHits(hits)
    }

    /// The patterns, as written.
    #[cfg(test)]
    pub fn patterns(&self) -> Vec<&str> {
        self.each.iter().map(Regex::as_str).collect()
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
    fn loosening_drops_word_boundaries_and_opens_bounded_repetitions() {
        assert_eq!(loosen(r"\bcurl\b"), "curl");
        assert_eq!(loosen(r"\Bx\b{start}y"), "xy");
        assert_eq!(loosen(r"a\\b\.\d"), r"a\\b\.\d");
        assert_eq!(loosen(r"(?i:\b(?:a|b)\b)"), "(?i:(?:a|b))");
        assert_eq!(loosen(r"a[^\n]{0,80}b{2}c{1,3}?"), r"a[^\n]{0,}b{2}c{1,}?");
        // Not a repetition: inside a class, a Unicode class, an escape.
        assert_eq!(
            loosen(r"[{0,1}\]{2,3}]\p{L}\x{41}"),
            r"[{0,1}\]{2,3}]\p{L}\x{41}"
        );
        assert_eq!(loosen(r"[]{1,2}]x{1,2}"), r"[]{1,2}]x{1,}");
    }

    #[test]
    fn answers_are_those_of_the_patterns_as_written() {
        let patterns = [
            r"\bcurl\b",
            r"(?i:\bsecretly\b[^\n]{0,20}\bsend\b)",
            r"\bid\b",
            r"a{2,3}b",
        ];
        let set = WordSet::new(&patterns, OPTIONS);
        let one_by_one = WordSet::one_by_one(&patterns, OPTIONS);
        let texts = [
            "curl x",
            "écurl x",
            "é curl x",
            "Secretly — send ça",
            "secretlyé send",
            "provide ça",
            "the id — ça",
            "ça",
            "ſecretly send",
            "secretly and then, much later than that, send",
            "aaaab é",
            "ab aab",
        ];
        for text in texts {
            let want: Vec<usize> = RegexSet::new(patterns)
                .unwrap()
                .matches(text)
                .iter()
                .collect();
            assert_eq!(set.matches(text).0, want, "{text}");
            assert_eq!(one_by_one.matches(text).0, want, "{text}");
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
