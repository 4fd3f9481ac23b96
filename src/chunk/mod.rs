//! Chunk stage: a SKILL.md body becomes search-sized pieces.
//!
//! The body is parsed with markdown-rs (GFM and the frontmatter construct on,
//! so the YAML's closing `---` can never turn into a setext heading) and cut
//! into one section per top-level heading, ATX or setext; the text before the
//! first heading is a section of its own. A `#` line inside a code fence is
//! code, never a heading, because the cut follows the AST, not the lines.
//! Sections are contiguous byte ranges of the body, so no byte is lost:
//! every non-blank byte after the frontmatter lands in at least one chunk.
//! Sections longer than `max_chars` are split by [`split`] at block
//! boundaries.
//!
//! Pure: strings in, chunks out. No file, git or network access.

mod anchor;
mod guard;
mod split;

use std::ops::Range;

use markdown::mdast::Node;

pub use anchor::{slug, AnchorSet};

/// How a body is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkOptions {
    /// Longest chunk in characters, except where one line alone is longer.
    pub max_chars: usize,
    /// Characters of trailing context repeated at the start of the next part.
    pub overlap_chars: usize,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        Self {
            max_chars: 12_000,
            overlap_chars: 800,
        }
    }
}

/// One chunk of a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Section number in the file, from 0.
    pub ordinal: u32,
    /// Chunk number within the section, from 0.
    pub part: u32,
    /// Number of chunks of the section.
    pub parts: u32,
    /// The section's heading text; `None` for the text before the first heading.
    pub heading: Option<String>,
    /// Heading texts from the outermost to this section's own.
    pub heading_path: Vec<String>,
    /// GitHub anchor of the section's heading.
    pub anchor: Option<String>,
    /// Markdown source of the chunk, blank lines around it removed.
    pub content: String,
    /// Byte range of `content` in the text given to [`chunk_body`].
    pub bytes: Range<usize>,
    /// First line of the chunk, 1-based.
    pub line_start: u32,
    /// Last line of the chunk, 1-based, inclusive.
    pub line_end: u32,
}

/// The chunks of a body, and why the Markdown structure was not used if it was not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkedBody {
    /// Chunks in file order.
    pub chunks: Vec<Chunk>,
    /// Set when the body was cut as plain lines instead of by its Markdown
    /// structure (pathologically nested input, or a parser error).
    pub fallback: Option<String>,
}

/// Limits on what is handed to markdown-rs, whose recursion can exhaust the
/// stack on deeply nested input and whose running time grows faster than
/// linearly with some inputs (measured on 1.0.0, release build: 200 KB of
/// `*_` takes 42 s, 200 KB of `[` 8 s, a 20,000-row table 6.5 s, 1 MB with
/// 80,000 headings 32 s). Past a limit the body is cut as plain lines, with a
/// warning, and the build goes on.
#[derive(Debug, Clone, Copy)]
pub struct ParserLimits {
    /// Deepest block-quote/list nesting, or unclosed `[`/`(` run in one block.
    pub max_nesting: usize,
    /// Longest run of text between blank lines, outside code fences.
    pub max_block_bytes: usize,
    /// Most emphasis and bracket delimiters in one such block.
    pub max_block_delimiters: usize,
    /// Longest body parsed as Markdown.
    pub max_body_bytes: usize,
}

/// The limits the chunker applies.
pub const PARSER_LIMITS: ParserLimits = ParserLimits {
    max_nesting: 256,
    max_block_bytes: 64 * 1024,
    max_block_delimiters: 5_000,
    max_body_bytes: 512 * 1024,
};

/// A section before splitting: its heading and where its blocks start.
struct Section {
    heading: Option<(u8, String)>,
    range: Range<usize>,
    /// Start offsets of the section's blocks (and of each list item); the
    /// first is the section's start.
    boundaries: Vec<usize>,
}

/// Cuts `text[body_start..]` into chunks. Offsets and lines refer to `text`.
pub fn chunk_body(text: &str, body_start: usize, options: &ChunkOptions) -> ChunkedBody {
    let (sections, fallback) = match markdown_sections(text, body_start) {
        Ok(sections) => (sections, None),
        Err(reason) => (vec![plain_section(text, body_start)], Some(reason)),
    };
    let lines = LineIndex::new(text);
    let mut anchors = AnchorSet::default();
    let mut stack: Vec<(u8, String)> = Vec::new();
    let mut chunks = Vec::new();
    let mut ordinal = 0u32;
    for section in sections {
        let (heading, heading_path, anchor) = match &section.heading {
            Some((depth, title)) => {
                while stack.last().is_some_and(|(d, _)| d >= depth) {
                    stack.pop();
                }
                stack.push((*depth, title.clone()));
                let path = stack.iter().map(|(_, t)| t.clone()).collect();
                (Some(title.clone()), path, Some(anchors.next(title)))
            }
            None => (None, Vec::new(), None),
        };
        let parts: Vec<Range<usize>> = split::split_section(text, &section, options)
            .into_iter()
            .map(|range| trim_blank(text, range))
            .filter(|range| !range.is_empty())
            .collect();
        if parts.is_empty() {
            continue;
        }
        let count = parts.len() as u32;
        for (part, range) in parts.into_iter().enumerate() {
            chunks.push(Chunk {
                ordinal,
                part: part as u32,
                parts: count,
                heading: heading.clone(),
                heading_path: heading_path.clone(),
                anchor: anchor.clone(),
                content: text[range.clone()].to_string(),
                line_start: lines.line_of(range.start),
                line_end: lines.line_of(range.end.saturating_sub(1).max(range.start)),
                bytes: range,
            });
        }
        ordinal += 1;
    }
    ChunkedBody { chunks, fallback }
}

/// markdown-rs options: GFM (tables, strikethrough, ...) with frontmatter.
fn parse_options() -> markdown::ParseOptions {
    let mut options = markdown::ParseOptions::gfm();
    options.constructs.frontmatter = true;
    options
}

fn markdown_sections(text: &str, body_start: usize) -> Result<Vec<Section>, String> {
    prescreen(&text[body_start..], &PARSER_LIMITS)?;
    // markdown-rs has panicked on odd but valid input (`a\n---\n---\na\n---`);
    // a panic there must cost one file its structure, not the build.
    let parsed = guard::catch_quietly(|| markdown::to_mdast(text, &parse_options()))
        .map_err(|panic| format!("Markdown parser panicked ({panic}); chunked as plain text"))?;
    let root = parsed.map_err(|e| format!("Markdown parser error ({e}); chunked as plain text"))?;
    let mut sections = vec![Section {
        heading: None,
        range: body_start..text.len(),
        boundaries: vec![body_start],
    }];
    for node in root.children().into_iter().flatten() {
        let Some(position) = node.position() else {
            continue;
        };
        let start = position.start.offset;
        if start < body_start {
            continue;
        }
        let current = sections.last_mut().expect("sections start non-empty");
        match node {
            Node::Heading(heading) => {
                current.range.end = start;
                sections.push(Section {
                    heading: Some((heading.depth, collapse_whitespace(&node.to_string()))),
                    range: start..text.len(),
                    boundaries: vec![start],
                });
            }
            Node::List(list) => {
                current.boundaries.push(start);
                let items = list.children.iter().filter_map(|item| item.position());
                current
                    .boundaries
                    .extend(items.map(|p| p.start.offset).skip(1));
            }
            _ => current.boundaries.push(start),
        }
    }
    for section in &mut sections {
        let range = section.range.clone();
        section.boundaries.retain(|b| range.contains(b));
        section.boundaries.dedup();
        if section.boundaries.first() != Some(&range.start) {
            section.boundaries.insert(0, range.start);
        }
    }
    Ok(sections)
}

/// The whole body as one heading-less section whose blocks are its lines.
fn plain_section(text: &str, body_start: usize) -> Section {
    let mut boundaries = vec![body_start];
    boundaries.extend(
        text[body_start..]
            .match_indices('\n')
            .map(|(i, _)| body_start + i + 1)
            .filter(|&b| b < text.len()),
    );
    Section {
        heading: None,
        range: body_start..text.len(),
        boundaries,
    }
}

/// Checks `body` against `limits` before markdown-rs sees it; the error
/// says which limit was passed.
pub fn prescreen(body: &str, limits: &ParserLimits) -> Result<(), String> {
    let fail = |what: String| Err(format!("{what}; chunked as plain text"));
    if body.len() > limits.max_body_bytes {
        return fail(format!(
            "body of {} bytes is over the {}-byte Markdown limit",
            body.len(),
            limits.max_body_bytes
        ));
    }
    let (mut in_fence, mut block_bytes, mut delimiters, mut open) = (false, 0, 0, 0usize);
    for (index, line) in body.lines().enumerate() {
        let line_no = index + 1;
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        if in_fence {
            continue;
        }
        if line.trim().is_empty() {
            (block_bytes, delimiters, open) = (0, 0, 0);
            continue;
        }
        let nesting = container_markers(line).max((line.len() - trimmed.len()) / 2);
        block_bytes += line.len() + 1;
        for b in line.bytes() {
            match b {
                b'[' | b'(' => open += 1,
                b']' | b')' => open = open.saturating_sub(1),
                _ => {}
            }
            delimiters += usize::from(matches!(b, b'*' | b'_' | b'[' | b']'));
        }
        if nesting.max(open) > limits.max_nesting {
            return fail(format!(
                "body line {line_no}: Markdown nested {} levels deep (limit {})",
                nesting.max(open),
                limits.max_nesting
            ));
        }
        if block_bytes > limits.max_block_bytes {
            return fail(format!(
                "body line {line_no}: a block of over {} bytes without a blank line",
                limits.max_block_bytes
            ));
        }
        if delimiters > limits.max_block_delimiters {
            return fail(format!(
                "body line {line_no}: over {} emphasis/bracket delimiters in one block",
                limits.max_block_delimiters
            ));
        }
    }
    Ok(())
}

/// Block quote markers and list bullets opening `line`, each a nesting level.
fn container_markers(line: &str) -> usize {
    let bytes = line.as_bytes();
    let (mut i, mut depth) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b' ' | b'\t' => i += 1,
            b'>' => {
                depth += 1;
                i += 1;
            }
            b'-' | b'*' | b'+' if matches!(bytes.get(i + 1), Some(b' ' | b'\t')) => {
                depth += 1;
                i += 2;
            }
            _ => break,
        }
    }
    depth
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `range` without blank lines before it and white space after it.
fn trim_blank(text: &str, range: Range<usize>) -> Range<usize> {
    let slice = &text[range.clone()];
    let end = range.start + slice.trim_end().len();
    let mut start = range.start;
    for line in text[range.start..end].split_inclusive('\n') {
        if line.trim().is_empty() {
            start += line.len();
        } else {
            break;
        }
    }
    start.min(end)..end
}

/// Maps byte offsets to 1-based line numbers.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { starts }
    }

    fn line_of(&self, offset: usize) -> u32 {
        self.starts.partition_point(|&s| s <= offset) as u32
    }
}

#[cfg(test)]
mod tests;
