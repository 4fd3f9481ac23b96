//! What a check reports, and what it is told: shared by the checks and
//! the engine that turns hits into findings.

use super::hosts::HostKind;

/// Where a check found something in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// Byte offset in the text as written.
    pub at: usize,
    /// Where the fetch it found goes, for rules whose severity depends
    /// on it.
    pub host: Option<HostKind>,
    /// The excerpt, when the line at `at` is not the right one (decoded
    /// hidden text, a character made visible).
    pub excerpt: Option<String>,
    /// What to add to the rule's why for this hit.
    pub note: Option<String>,
    /// Whether the words around it read as documentation (a label, never
    /// a lower severity).
    pub documented: bool,
}

impl Hit {
    /// A hit at `at` with nothing more to say.
    pub fn at(at: usize) -> Self {
        Self {
            at,
            host: None,
            excerpt: None,
            note: None,
            documented: false,
        }
    }

    /// With `excerpt` as its excerpt.
    pub fn excerpt(mut self, excerpt: String) -> Self {
        self.excerpt = Some(excerpt);
        self
    }

    /// With `note` added to the why.
    pub fn note(mut self, note: String) -> Self {
        self.note = Some(note);
        self
    }
}

/// Where a file- or skill-level check found something.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHit {
    /// Index of the file in the skill's files.
    pub file: usize,
    /// 1-based line, when the thing is text.
    pub line: Option<u32>,
    /// What was found, safe to print.
    pub excerpt: String,
    /// What to add to the rule's why.
    pub note: Option<String>,
}

/// What a text check knows about the text it reads.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The publishing repository's owner.
    pub owner: &'a str,
    /// How many decodings deep the text is (0: a file as shipped).
    pub depth: u8,
}
