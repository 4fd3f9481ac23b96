//! One text the rules read: a file's text or a payload decoded from one.
//! It keeps the text as written (for lines and excerpts) and a normalized
//! copy the patterns match (invisible characters dropped, Latin lookalikes
//! inside Latin words folded to Latin, `\`-continued lines joined), so
//! `cu\u{200B}rl` and `сurl` are still `curl` to them.

use std::borrow::Cow;
use std::ops::Range;

use super::markdown::{self, Layout};
use super::unicode::{invisible, latin_lookalike};

/// What a file is, for which rules read it how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Markdown: prose with code blocks, inline code and comments.
    Markdown,
    /// A program or script: all of it is code.
    Script,
    /// JSON, YAML, TOML and other configuration: code, and hook configs.
    Config,
    /// Other text (`.txt`, `.html`, ...): prose.
    Other,
}

impl Kind {
    /// The kind of the file at `path`, whose text starts with `head`.
    pub fn of(path: &str, head: &str) -> Self {
        let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
        let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
        match ext {
            "md" | "mdx" | "markdown" => Kind::Markdown,
            "sh" | "bash" | "zsh" | "fish" | "ksh" | "py" | "pyw" | "js" | "mjs" | "cjs" | "ts"
            | "mts" | "cts" | "tsx" | "jsx" | "ps1" | "psm1" | "psd1" | "bat" | "cmd" | "rb"
            | "pl" | "pm" | "php" | "lua" | "go" | "rs" | "java" | "kt" | "swift" | "c" | "cc"
            | "cpp" | "h" | "hpp" | "cs" | "r" | "jl" | "vbs" | "applescript" | "scpt" | "awk"
            | "tcl" | "groovy" | "scala" | "dart" | "ex" | "exs" | "nu" | "kts" | "gradle" => {
                Kind::Script
            }
            "json" | "jsonc" | "json5" | "yaml" | "yml" | "toml" | "ini" | "cfg" | "conf"
            | "env" | "xml" | "plist" | "properties" | "reg" | "mobileconfig" | "config"
            | "service" | "timer" | "desktop" => Kind::Config,
            _ if head.starts_with("#!") => Kind::Script,
            _ if matches!(
                name.as_str(),
                "makefile" | "dockerfile" | "justfile" | "rakefile" | "gemfile" | "procfile"
            ) =>
            {
                Kind::Script
            }
            _ => Kind::Other,
        }
    }
}

/// A text, normalized, with its lines and (for Markdown) layout.
pub struct Text<'a> {
    /// As written.
    pub raw: &'a str,
    /// What the patterns match: same lines, invisible characters dropped,
    /// lookalikes in Latin words folded, line continuations joined.
    pub norm: Cow<'a, str>,
    /// Byte offset in `norm` to byte offset in `raw` (empty: the same).
    map: Vec<u32>,
    /// Start of each line of `raw`.
    starts: Vec<usize>,
    /// What the file is.
    pub kind: Kind,
    /// Code blocks, spans and comments of a Markdown text.
    pub layout: Layout,
    /// What a rule module derives from the text once for its several
    /// rules (the credential reads and sends, see `credentials`).
    pub(super) derived: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
}

impl<'a> Text<'a> {
    /// Reads `raw` as a file of `kind`.
    pub fn new(raw: &'a str, kind: Kind) -> Self {
        let (norm, map) = normalize(raw);
        let mut starts = vec![0];
        starts.extend(memchr_all(raw.as_bytes()).map(|i| i + 1));
        let layout = if kind == Kind::Markdown {
            markdown::layout(raw)
        } else {
            Layout::default()
        };
        Self {
            raw,
            norm,
            map,
            starts,
            kind,
            layout,
            derived: std::sync::OnceLock::new(),
        }
    }

    /// The offset in `raw` of offset `i` in `norm`.
    pub fn to_raw(&self, i: usize) -> usize {
        if self.map.is_empty() {
            i
        } else {
            self.map.get(i).map_or(self.raw.len(), |&o| o as usize)
        }
    }

    /// The 1-based line of offset `i` of `raw`.
    pub fn line_of(&self, i: usize) -> u32 {
        self.starts.partition_point(|&s| s <= i).max(1) as u32
    }

    /// The line of `raw` holding offset `i`, without its newline.
    pub fn line_at(&self, i: usize) -> Range<usize> {
        let n = self.line_of(i) as usize;
        let start = self.starts[n - 1];
        let end = self.starts.get(n).map_or(self.raw.len(), |&s| s - 1);
        start..end.max(start)
    }

    /// Whether offset `i` of `raw` is in code.
    pub fn in_code(&self, i: usize) -> bool {
        match self.kind {
            Kind::Markdown => self.layout.in_code(i),
            Kind::Script | Kind::Config => true,
            Kind::Other => false,
        }
    }

    /// Whether offset `i` of `raw` is configuration (a config file, or a
    /// Markdown file's frontmatter).
    pub fn in_config(&self, i: usize) -> bool {
        match self.kind {
            Kind::Config => true,
            Kind::Markdown => self.layout.in_frontmatter(i),
            _ => false,
        }
    }

    /// The stretch of `raw` read as one unit around offset `i`: a whole
    /// script, a Markdown code block, else the line.
    pub fn segment(&self, i: usize) -> Range<usize> {
        match self.kind {
            Kind::Script => 0..self.raw.len(),
            // A config's entries are independent (one hook command per
            // line); the file is not one program.
            Kind::Config => self.line_at(i),
            Kind::Markdown => self
                .layout
                .code_region(i)
                .unwrap_or_else(|| self.line_at(i)),
            Kind::Other => self.line_at(i),
        }
    }

    /// Where the inline code span holding offset `i` starts, if one does.
    pub fn inline_start(&self, i: usize) -> Option<usize> {
        let spans = &self.layout.inline;
        let k = spans.partition_point(|r| r.end <= i);
        spans.get(k).filter(|r| r.start <= i).map(|r| r.start)
    }

    /// Where the inline code span holding offset `i` ends, if one does.
    pub fn inline_end(&self, i: usize) -> Option<usize> {
        let spans = &self.layout.inline;
        let k = spans.partition_point(|r| r.end <= i);
        spans.get(k).filter(|r| r.start <= i).map(|r| r.end)
    }

    /// A short excerpt of the line holding `raw[at..]`, safe to print.
    pub fn excerpt(&self, at: usize) -> String {
        excerpt(
            &self.raw[self.line_at(at)],
            at - self.line_at(at).start,
            |_| false,
        )
    }
}

/// The offsets of the newlines in `bytes`.
fn memchr_all(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .map(|(i, _)| i)
}

/// `raw` normalized for the patterns, and the offset map (empty when each
/// offset is unchanged).
fn normalize(raw: &str) -> (Cow<'_, str>, Vec<u32>) {
    let plain = raw.is_ascii()
        || !raw
            .chars()
            .any(|c| invisible(c).is_some() || latin_lookalike(c).is_some());
    if plain {
        return if raw.contains("\\\n") {
            (Cow::Owned(raw.replace("\\\n", "  ")), Vec::new())
        } else {
            (Cow::Borrowed(raw), Vec::new())
        };
    }
    let folded = mixed_words(raw);
    let mut out = String::with_capacity(raw.len());
    let mut map = Vec::with_capacity(raw.len() + 1);
    let mut words = folded.iter().peekable();
    let mut chars = raw.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        while words.peek().is_some_and(|w| w.end <= i) {
            words.next();
        }
        let in_mixed = words.peek().is_some_and(|w| w.start <= i);
        let c = if invisible(c).is_some() {
            continue;
        } else if (c == '\\' && chars.peek().is_some_and(|&(_, n)| n == '\n'))
            || (c == '\n' && raw[..i].ends_with('\\'))
        {
            // A continued line joins the next: `\` and its newline become spaces.
            ' '
        } else if in_mixed {
            latin_lookalike(c).unwrap_or(c)
        } else {
            c
        };
        let start = out.len();
        out.push(c);
        map.extend((start..out.len()).map(|_| i as u32));
    }
    map.push(raw.len() as u32);
    (Cow::Owned(out), map)
}

/// The words (letters, with invisible characters inside them) that mix
/// ASCII Latin letters with lookalikes from another script.
pub fn mixed_words(raw: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = None;
    let (mut latin, mut lookalike) = (0, 0);
    let mut close =
        |start: &mut Option<usize>, end: usize, latin: &mut usize, lookalike: &mut usize| {
            if let Some(s) = start.take() {
                if *latin > 0 && *lookalike > 0 {
                    out.push(s..end);
                }
            }
            (*latin, *lookalike) = (0, 0);
        };
    for (i, c) in raw.char_indices() {
        if c.is_alphabetic() || (start.is_some() && invisible(c).is_some()) {
            start.get_or_insert(i);
            if c.is_ascii_alphabetic() {
                latin += 1;
            } else if latin_lookalike(c).is_some() {
                lookalike += 1;
            }
        } else {
            close(&mut start, i, &mut latin, &mut lookalike);
        }
    }
    close(&mut start, raw.len(), &mut latin, &mut lookalike);
    out
}

/// Longest excerpt, in characters, before escaping.
pub const EXCERPT_CHARS: usize = 160;

/// An excerpt of `line` around byte `at`: cut to about 160 characters,
/// trimmed, with control and invisible characters (and those `also`
/// picks) written as `\u{...}` so the excerpt prints as what it is.
pub fn excerpt(line: &str, at: usize, also: impl Fn(char) -> bool) -> String {
    let at = floor_char(line, at.min(line.len()));
    let chars_before = line[..at].chars().count();
    let total = line.chars().count();
    let skip = if total <= EXCERPT_CHARS {
        0
    } else {
        chars_before.saturating_sub(40).min(total - EXCERPT_CHARS)
    };
    let mut out = String::new();
    if skip > 0 {
        out.push('…');
    }
    for c in line.chars().skip(skip).take(EXCERPT_CHARS) {
        if c == '\t' {
            out.push(' ');
        } else if c.is_control() || invisible(c).is_some() || also(c) {
            out.push_str(&format!("\\u{{{:04X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    if skip + EXCERPT_CHARS < total {
        out.push('…');
    }
    out.trim().to_string()
}

/// The largest char boundary of `s` at or before `i`.
pub fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_invisible_and_lookalike_letters_keeping_lines() {
        let raw = "ok\ncu\u{200B}rl x | bаsh\nпривет с миром\n";
        let t = Text::new(raw, Kind::Script);
        assert_eq!(t.norm, "ok\ncurl x | bash\nпривет с миром\n");
        let at = t.norm.find("bash").unwrap();
        assert_eq!(t.line_of(t.to_raw(at)), 2);
        assert_eq!(&raw[t.to_raw(at)..t.to_raw(at) + 1], "b");
        let cont = Text::new("curl x \\\n  | sh\n", Kind::Script);
        assert_eq!(cont.norm, "curl x     | sh\n");
    }

    #[test]
    fn excerpts_are_short_and_escaped() {
        assert_eq!(
            excerpt("  a\u{200B}b\u{1b}[31m ", 0, |_| false),
            "a\\u{200B}b\\u{001B}[31m"
        );
        let long = format!("{}curl{}", "x".repeat(300), "y".repeat(300));
        let e = excerpt(&long, 300, |_| false);
        assert!(e.starts_with('…') && e.ends_with('…') && e.contains("curl"));
        assert_eq!(e.chars().count(), EXCERPT_CHARS + 2);
    }
}
