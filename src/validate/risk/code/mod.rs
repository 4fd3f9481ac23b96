//! Code read as code: the shipped scripts of a skill and the code blocks
//! of its Markdown, parsed with tree-sitter's grammars (shell, Python,
//! JavaScript, TypeScript, PowerShell) and rendered again in a normal
//! form the rules can read whatever the spelling: quotes inside words
//! (`c''url`), escapes (`$'\x63url'`, `"\u0065val"`), `${IFS}`, literal
//! concatenation (`'ev' + 'al'`), names bound to literal strings
//! (`H=evil; curl https://$H/x`), `getattr(__import__('os'), 'system')`,
//! a pipeline continued on the next line. The string literals it meets
//! are kept too, so commands inside them (`os.system("...")`, a crontab
//! line) and payloads they encode are read again.
//!
//! Pure: text in, [`Rendered`] out. Nothing here decides what is risky.

mod bind;
mod render;
mod script;
mod shell;
mod sniff;

pub use bind::bind_literals;
pub use render::unescape;
pub use sniff::{lang_of_info, lang_of_path, looks_like_command, sniff};

use super::text::{Kind, Text};

/// Inputs larger than this are not parsed (their text is still scanned).
pub const MAX_PARSE_BYTES: usize = 512 * 1024;

/// The languages read as code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    /// POSIX shells and bash.
    Shell,
    /// Python.
    Python,
    /// JavaScript (and JSX).
    JavaScript,
    /// TypeScript (and TSX).
    TypeScript,
    /// PowerShell.
    PowerShell,
}

/// One stretch of code in a file: a whole script, or a code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit<'a> {
    /// Its language.
    pub lang: Lang,
    /// Its text.
    pub src: &'a str,
    /// The 0-based line of the file it starts on.
    pub first_line: u32,
}

/// A string literal met in code, with its value resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    /// The 0-based line of the file it starts on.
    pub line: u32,
    /// Its value (escapes decoded, concatenations folded).
    pub value: String,
}

/// Code in its normal form.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rendered {
    /// One statement a line, spelled plainly.
    pub text: String,
    /// For each line of `text`, the 0-based line of the file it comes from.
    pub lines: Vec<u32>,
    /// The string literals met, resolved.
    pub literals: Vec<Literal>,
    /// Heredoc bodies and other embedded programs, with the language
    /// their reader names (`python3 - <<EOF`), when it names one.
    pub embedded: Vec<(Option<Lang>, Literal)>,
    /// Whether the rendering spent its budget and copied the rest as
    /// written.
    pub cut: bool,
}

// The plain readings [`LineIndex`] answers as: each call reads `text`
// from its start.
#[cfg(test)]
impl Rendered {
    /// The file line (0-based) of byte `at` of `text`.
    pub fn line_of(&self, at: usize) -> u32 {
        let index = self.text.as_bytes()[..at.min(self.text.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.lines
            .get(index)
            .or(self.lines.last())
            .copied()
            .unwrap_or(0)
    }
}

#[cfg(test)]
impl Rendered {
    /// The lines of `text` that come from file line `line` (0-based).
    pub fn line_text(&self, line: u32) -> String {
        self.text
            .split('\n')
            .zip(&self.lines)
            .filter(|(_, l)| **l == line)
            .map(|(t, _)| t)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The lines of a [`Rendered`] read once, for the many look-ups of one
/// unit: the file line of an offset in logarithmic time, the text of a
/// file line by one hash look-up (reading `text` from its start for each
/// was quadratic on a long script full of literals).
pub struct LineIndex<'r> {
    rendered: &'r Rendered,
    newlines: Vec<usize>,
    by_line: std::collections::HashMap<u32, Vec<&'r str>>,
}

impl<'r> LineIndex<'r> {
    /// Indexes `rendered`.
    pub fn new(rendered: &'r Rendered) -> Self {
        let newlines = rendered
            .text
            .bytes()
            .enumerate()
            .filter(|(_, b)| *b == b'\n')
            .map(|(i, _)| i)
            .collect();
        let mut by_line: std::collections::HashMap<u32, Vec<&str>> = Default::default();
        for (text, line) in rendered.text.split('\n').zip(&rendered.lines) {
            by_line.entry(*line).or_default().push(text);
        }
        Self {
            rendered,
            newlines,
            by_line,
        }
    }

    /// See [`Rendered::line_of`].
    pub fn line_of(&self, at: usize) -> u32 {
        let at = at.min(self.rendered.text.len());
        let index = self.newlines.partition_point(|&p| p < at);
        let lines = &self.rendered.lines;
        lines.get(index).or(lines.last()).copied().unwrap_or(0)
    }

    /// See [`Rendered::line_text`].
    pub fn line_text(&self, line: u32) -> String {
        self.by_line
            .get(&line)
            .map(|texts| texts.join("\n"))
            .unwrap_or_default()
    }
}

/// Adjacent string literals joined, in code no grammar here reads:
/// `"a" + "b"`, Perl and PHP's `"a" . "b"` and Lua's `"a" .. "b"` become
/// `"ab"` (`"." + "aws"` becomes `".aws"`). Literals are found by walking
/// each line from its start, escapes skipped; lines are kept, so line
/// numbers hold.
pub fn join_literals(src: &str) -> std::borrow::Cow<'_, str> {
    if !src.contains(['"', '\'']) {
        return std::borrow::Cow::Borrowed(src);
    }
    let mut out = String::with_capacity(src.len());
    for line in src.split_inclusive('\n') {
        join_line(line, &mut out);
    }
    std::borrow::Cow::Owned(out)
}

/// One line of [`join_literals`].
fn join_line(line: &str, out: &mut String) {
    // The literals of the line: (start, end) of each, quotes included.
    let bytes = line.as_bytes();
    let mut literals: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let quote = bytes[i];
        if quote != b'"' && quote != b'\'' {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < bytes.len() && bytes[j] != quote && bytes[j] != b'\n' {
            j += if bytes[j] == b'\\' { 2 } else { 1 };
        }
        if j < bytes.len() && bytes[j] == quote {
            literals.push((i, j + 1));
            i = j + 1;
        } else {
            i += 1;
        }
    }
    let joins = |a: (usize, usize), b: (usize, usize)| {
        bytes[a.0] == bytes[b.0]
            && matches!(line[a.1..b.0].trim_matches([' ', '\t']), "+" | "." | "..")
    };
    let mut written = 0;
    let mut k = 0;
    while k < literals.len() {
        let mut last = k;
        while last + 1 < literals.len() && joins(literals[last], literals[last + 1]) {
            last += 1;
        }
        if last > k {
            let (start, quote) = (literals[k].0, &line[literals[k].0..literals[k].0 + 1]);
            out.push_str(&line[written..start]);
            out.push_str(quote);
            for &(a, b) in &literals[k..=last] {
                out.push_str(&line[a + 1..b - 1]);
            }
            out.push_str(quote);
            written = literals[last].1;
        }
        k = last + 1;
    }
    out.push_str(&line[written..]);
}

/// The code units of `text`: a script whole, each code block of a
/// Markdown file with a language tag or whose text reads as code.
pub fn units<'a>(text: &Text<'a>, path: &str) -> Vec<Unit<'a>> {
    match text.kind {
        Kind::Script => lang_of_path(path, text.raw)
            .map(|lang| Unit {
                lang,
                src: text.raw,
                first_line: 0,
            })
            .into_iter()
            .collect(),
        Kind::Markdown => text
            .layout
            .blocks
            .iter()
            .filter_map(|block| {
                let src = &text.raw[block.body.clone()];
                let info = &text.raw[block.info.clone()];
                let lang = lang_of_info(info)
                    .or_else(|| info.trim().is_empty().then(|| sniff(src)).flatten())?;
                Some(Unit {
                    lang,
                    src,
                    first_line: text.line_of(block.body.start).saturating_sub(1),
                })
            })
            .collect(),
        Kind::Config | Kind::Other => Vec::new(),
    }
}

/// `unit` in its normal form (`None` when it is too large to parse or
/// the grammar cannot read it at all).
pub fn render(unit: &Unit<'_>) -> Option<Rendered> {
    if unit.src.len() > MAX_PARSE_BYTES {
        return None;
    }
    let mut rendered = match unit.lang {
        Lang::Shell => shell::render(unit.src)?,
        lang => script::render(lang, unit.src)?,
    };
    for line in &mut rendered.lines {
        *line += unit.first_line;
    }
    for literal in &mut rendered.literals {
        literal.line += unit.first_line;
    }
    for (_, literal) in &mut rendered.embedded {
        literal.line += unit.first_line;
    }
    Some(rendered)
}

#[cfg(test)]
mod tests;
