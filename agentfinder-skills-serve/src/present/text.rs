//! Third-party text made fit to hand to an agent (pure), as a type:
//! [`AgentText`] (a string) and [`AgentJson`] (a JSON value) hold only
//! text cleaned here, and every output shape's field that can carry what
//! a skill's author wrote (Agent Finder results, TopGun's objects,
//! `serve`, `find`, MCP, and the errors and health problems that can quote
//! it) is one of them, so an uncleaned string cannot reach an agent by
//! accident: the only ways to make one clean. Both serialize as the plain
//! string or value. The artifact keeps the text as its source wrote it.
//!
//! What can steer an agent without being seen is removed: control
//! characters (Unicode category Cc; line breaks and tabs become spaces in
//! a one-line field), format characters (Cf: tag characters that spell
//! invisible ASCII, zero-width spaces and joiners, bidirectional
//! overrides, the byte-order mark), every other Default_Ignorable_Code_Point
//! (fillers, variation selectors: a run of them can carry hidden data
//! after an emoji; a single text or emoji selector, U+FE0E or U+FE0F,
//! directly after a symbol is kept, so an emoji renders as written), and
//! line and paragraph separators (Zl, Zp, which some readers take for line
//! breaks). The two sentences of the untrusted-content envelope, and their
//! key phrases, are neutralised inside data, so a skill cannot close the
//! envelope it is wrapped in, however they are written: in any case,
//! full-width or in other compatibility forms (NFKC), with look-alike
//! letters of other scripts, with combining marks, percent-encoded in a URL
//! or as an anchor slug ([`fold`]). A description is cut at the Agent
//! Skills specification's 1,024 characters, ending in `…` when cut.

mod fold;
#[cfg(test)]
mod tests;

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use unicode_general_category::{get_general_category, GeneralCategory};

/// The longest description an agent receives, in characters (the Agent
/// Skills specification's limit for `description`).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// The longest name, title or metadata string an agent receives.
pub const MAX_FIELD_CHARS: usize = 1024;

/// What a marker phrase inside data becomes.
pub const NEUTRALISED: &str = "[envelope marker removed]";

/// What a marker phrase inside a URL becomes (no character a URL would
/// have to escape).
pub const NEUTRALISED_IN_URL: &str = "envelope-marker-removed";

/// Text an agent may read: cleaned (see the module documentation). Made
/// only by cleaning ([`AgentText::field`], [`AgentText::url`], [`clean`],
/// `From<&str>`, deserializing, ...); serializes as a plain string.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct AgentText(String);

impl AgentText {
    /// Text already cleaned here: the one constructor that does not clean.
    fn cleaned(text: String) -> Self {
        Self(text)
    }

    /// A one-line field: [`clean`] at [`MAX_FIELD_CHARS`].
    pub fn field(text: &str) -> Self {
        clean(text, MAX_FIELD_CHARS)
    }

    /// A description: [`clean`] at [`MAX_DESCRIPTION_CHARS`].
    pub fn description(text: &str) -> Self {
        clean(text, MAX_DESCRIPTION_CHARS)
    }

    /// A link: as [`AgentText::field`], a marker replaced by
    /// [`NEUTRALISED_IN_URL`] so the link stays one.
    pub fn url(text: &str) -> Self {
        let visible = visible(text, false);
        Self::cleaned(cut(
            &neutralise(&visible, NEUTRALISED_IN_URL),
            MAX_FIELD_CHARS,
        ))
    }

    /// A Markdown body: [`clean_body`].
    pub fn body(text: &str) -> Self {
        clean_body(text)
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl Deref for AgentText {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for AgentText {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for AgentText {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AgentText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Cleans, as a one-line field ([`AgentText::field`]).
impl From<&str> for AgentText {
    fn from(text: &str) -> Self {
        Self::field(text)
    }
}

/// Cleans, as a one-line field ([`AgentText::field`]).
impl From<String> for AgentText {
    fn from(text: String) -> Self {
        Self::field(&text)
    }
}

impl From<AgentText> for String {
    fn from(text: AgentText) -> Self {
        text.0
    }
}

impl From<AgentText> for Value {
    fn from(text: AgentText) -> Self {
        Value::String(text.0)
    }
}

/// Cleaned as it is read, as a one-line field.
impl<'de> Deserialize<'de> for AgentText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|text| Self::field(&text))
    }
}

macro_rules! text_eq {
    ($($other:ty),*) => {$(
        impl PartialEq<$other> for AgentText {
            fn eq(&self, other: &$other) -> bool {
                self.0.as_str() == AsRef::<str>::as_ref(other)
            }
        }
        impl PartialEq<AgentText> for $other {
            fn eq(&self, other: &AgentText) -> bool {
                AsRef::<str>::as_ref(self) == other.0.as_str()
            }
        }
    )*};
}
text_eq!(str, &str, String);

/// A JSON value an agent may read: every string in it (keys included)
/// cleaned as a one-line field. Made only by cleaning
/// ([`AgentJson::clean`], [`clean_value`], deserializing); serializes as
/// the value; reads as a [`Value`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct AgentJson(Value);

impl AgentJson {
    /// `value` with every string in it cleaned ([`clean_value`]).
    pub fn clean(value: Value) -> Self {
        clean_value(value)
    }

    /// An empty object.
    pub fn empty_object() -> Self {
        Self(Value::Object(Map::new()))
    }

    /// The value.
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    /// The value, owned.
    pub fn into_value(self) -> Value {
        self.0
    }
}

impl Deref for AgentJson {
    type Target = Value;
    fn deref(&self) -> &Value {
        &self.0
    }
}

impl From<AgentJson> for Value {
    fn from(value: AgentJson) -> Self {
        value.0
    }
}

/// Cleaned as it is read.
impl<'de> Deserialize<'de> for AgentJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(clean_value)
    }
}

/// What a character becomes in text an agent reads.
enum Kept {
    /// Itself.
    Char(char),
    /// A line break (Cc line breaks, Zl, Zp).
    Break,
    /// A tab.
    Tab,
    /// A text or emoji presentation selector: kept once after a symbol.
    Selector(char),
    /// Nothing (other Cc, every Cf, every other default-ignorable).
    Dropped,
}

/// Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt):
/// characters that show nothing where they are not supported.
fn default_ignorable(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}'..='\u{1160}'
        | '\u{17B4}'..='\u{17B5}' | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{3164}'
        | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}' | '\u{FFF0}'..='\u{FFF8}'
        | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
}

fn kept(c: char) -> Kept {
    match c {
        '\n' | '\r' | '\u{2028}' | '\u{2029}' => Kept::Break,
        '\t' => Kept::Tab,
        // ASCII, most text: only its controls go.
        c if c.is_ascii() => match c.is_ascii_control() {
            true => Kept::Dropped,
            false => Kept::Char(c),
        },
        '\u{FE0E}' | '\u{FE0F}' => Kept::Selector(c),
        c if default_ignorable(c) => Kept::Dropped,
        c => match get_general_category(c) {
            GeneralCategory::Control | GeneralCategory::Format => Kept::Dropped,
            GeneralCategory::LineSeparator | GeneralCategory::ParagraphSeparator => Kept::Break,
            _ => Kept::Char(c),
        },
    }
}

/// Whether a presentation selector after `c` is kept: `c` is a symbol
/// (an emoji's base).
fn takes_selector(c: char) -> bool {
    get_general_category(c) == GeneralCategory::OtherSymbol
        || ('\u{1F000}'..='\u{1FAFF}').contains(&c)
}

/// `text` without what an agent would not see; line breaks and tabs kept
/// when `multiline` (`\r\n` one break), else single spaces.
fn visible(text: &str, multiline: bool) -> String {
    let mut out = String::with_capacity(text.len());
    // The last character kept, when a selector may follow it.
    let mut base: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let next = match kept(c) {
            Kept::Char(c) => c,
            Kept::Break if multiline => {
                if c == '\r' && chars.peek() == Some(&'\n') {
                    chars.next();
                }
                '\n'
            }
            Kept::Tab if multiline => '\t',
            Kept::Break | Kept::Tab => ' ',
            Kept::Selector(s) => {
                if base.take().is_some_and(takes_selector) {
                    out.push(s);
                }
                continue;
            }
            Kept::Dropped => continue,
        };
        out.push(next);
        base = Some(next);
    }
    out
}

/// `text` cut to `max_chars` characters, the last of which is `…` when
/// it was cut.
fn cut(text: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max_chars * 4));
    let mut count = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if count + 1 == max_chars && chars.clone().next().is_some() {
            out.push('…');
            return out;
        }
        if count == max_chars {
            break;
        }
        out.push(c);
        count += 1;
    }
    out
}

/// `text` without what can steer an agent unseen (see the module
/// documentation; line breaks and tabs become single spaces), envelope
/// markers neutralised, and cut to `max_chars` characters, the last of
/// which is `…` when it was cut.
pub fn clean(text: &str, max_chars: usize) -> AgentText {
    let visible = visible(text, false);
    AgentText::cleaned(cut(&neutralise(&visible, NEUTRALISED), max_chars))
}

/// A Markdown body for an agent: as [`clean`], but its lines and tabs kept
/// (a line or paragraph separator is a line break), and uncut.
pub fn clean_body(text: &str) -> AgentText {
    AgentText::cleaned(neutralise(&visible(text, true), NEUTRALISED))
}

/// Phrases of the untrusted-content envelope's two sentences
/// ([`super::topgun::UNTRUSTED_OPEN`], [`super::topgun::UNTRUSTED_CLOSE`]),
/// as their letters: what a forged marker inside data would say, whatever
/// separates its words, or splits them (`E N D  O F ...`). The words a
/// phrase starts and ends in are cut whole, so one glued to its neighbours
/// by an escape (`\nEND OF UNTRUSTED CONTENTS`) is cut all the same, while
/// prose such as "sanitizes untrusted content" is left alone.
const MARKER_PHRASES: [&str; 2] = ["endofuntrustedcontent", "untrustedexternalcontent"];

/// `text` with every phrase of [`MARKER_PHRASES`] replaced by
/// [`NEUTRALISED`] (see [`neutralise`]).
pub fn neutralise_markers(text: &str) -> String {
    neutralise(text, NEUTRALISED)
}

/// Whether `letters` from `at` read as `phrase` (ASCII).
fn reads_at(letters: &[((char, char), usize)], at: usize, phrase: &str) -> bool {
    phrase.len() <= letters.len() - at
        && phrase
            .chars()
            .zip(&letters[at..])
            .all(|(want, ((one, other), _))| want == *one || want == *other)
}

/// `text` with every phrase of [`MARKER_PHRASES`] replaced by
/// `replacement`: matched in the text's folded view ([`fold`]: any case,
/// compatibility forms, look-alike letters, combining marks, percent
/// escapes), its letters one after another whatever separates them
/// (spaces, punctuation, line breaks, hyphens of a slug), from the start
/// of the word it begins in to the end of the word it ends in
/// (`xEND OF UNTRUSTED CONTENTS`), so that data cannot end the envelope it
/// is in or open another.
fn neutralise(text: &str, replacement: &str) -> String {
    let words = fold::words(text);
    // The folded letters one after another, each with its word.
    let letters: Vec<((char, char), usize)> = words
        .iter()
        .enumerate()
        .flat_map(|(n, word)| word.folded.iter().map(move |&f| (f, n)))
        .collect();
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    while at < letters.len() {
        match MARKER_PHRASES
            .iter()
            .find(|phrase| reads_at(&letters, at, phrase))
        {
            Some(phrase) => {
                let first = letters[at].1;
                let last = letters[at + phrase.len() - 1].1;
                cuts.push((words[first].start, words[last].end));
                // On from the word after the last one cut.
                at += phrase.len();
                while at < letters.len() && letters[at].1 == last {
                    at += 1;
                }
            }
            None => at += 1,
        }
    }
    if cuts.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (start, end) in cuts {
        out.push_str(&text[from..start]);
        out.push_str(replacement);
        from = end;
    }
    out.push_str(&text[from..]);
    out
}

/// A description for an agent: [`clean`] at [`MAX_DESCRIPTION_CHARS`].
pub fn description(text: &str) -> AgentText {
    AgentText::description(text)
}

/// `value` with every string in it (keys included) [`clean`]ed at
/// [`MAX_FIELD_CHARS`].
pub fn clean_value(value: Value) -> AgentJson {
    AgentJson(cleaned_value(value))
}

/// `map` with every string in it (keys included) [`clean`]ed at
/// [`MAX_FIELD_CHARS`], as an object.
pub fn clean_map(map: Map<String, Value>) -> AgentJson {
    AgentJson(Value::Object(cleaned_map(map)))
}

fn cleaned_value(value: Value) -> Value {
    match value {
        Value::String(text) => Value::String(AgentText::field(&text).0),
        Value::Array(items) => Value::Array(items.into_iter().map(cleaned_value).collect()),
        Value::Object(map) => Value::Object(cleaned_map(map)),
        other => other,
    }
}

fn cleaned_map(map: Map<String, Value>) -> Map<String, Value> {
    map.into_iter()
        .map(|(key, value)| (AgentText::field(&key).0, cleaned_value(value)))
        .collect()
}
