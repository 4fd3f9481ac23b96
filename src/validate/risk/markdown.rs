//! Where a Markdown file's code is: its frontmatter, fenced blocks (with
//! their info string and the line that introduces them), inline code spans
//! and HTML comments. A line-based reading, enough to tell code from prose;
//! byte offsets into the text.

use std::ops::Range;

/// One fenced code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The info string after the opening fence (`bash title="setup.sh"`).
    pub info: Range<usize>,
    /// The lines between the fences.
    pub body: Range<usize>,
    /// From the opening fence to the end of the closing one.
    pub whole: Range<usize>,
    /// The last non-blank line before the fence, within two lines of it,
    /// when it is prose.
    pub intro: Option<Range<usize>>,
}

/// The code and comments of a Markdown text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// The YAML frontmatter, delimiters included.
    pub frontmatter: Option<Range<usize>>,
    /// Fenced code blocks, in order.
    pub blocks: Vec<Block>,
    /// Inline code spans (backticks included), in order.
    pub inline: Vec<Range<usize>>,
    /// HTML comments outside code (`<!--` to `-->`), in order.
    pub comments: Vec<Range<usize>>,
}

impl Layout {
    /// The block or frontmatter holding `offset`.
    pub fn code_region(&self, offset: usize) -> Option<Range<usize>> {
        if let Some(f) = self.frontmatter.as_ref().filter(|f| f.contains(&offset)) {
            return Some(f.clone());
        }
        find(&self.blocks, offset, |b| &b.whole).map(|b| b.body.clone())
    }

    /// Whether `offset` is in code: frontmatter, a block or an inline span.
    pub fn in_code(&self, offset: usize) -> bool {
        self.code_region(offset).is_some() || find(&self.inline, offset, |r| r).is_some()
    }

    /// Whether `offset` is in the frontmatter.
    pub fn in_frontmatter(&self, offset: usize) -> bool {
        self.frontmatter
            .as_ref()
            .is_some_and(|f| f.contains(&offset))
    }
}

/// The item of sorted, disjoint `items` whose range holds `offset`.
fn find<T>(items: &[T], offset: usize, range: impl Fn(&T) -> &Range<usize>) -> Option<&T> {
    let i = items.partition_point(|t| range(t).end <= offset);
    items.get(i).filter(|t| range(t).start <= offset)
}

/// The lines of `text` as (start, end without the newline).
fn lines(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            out.push((start, i));
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push((start, text.len()));
    }
    out
}

/// `line` without its indent and the `>` marks of block quotes.
pub fn unquoted(line: &str) -> &str {
    line.trim_start_matches([' ', '\t', '>'])
}

/// Reads the layout of Markdown `text`.
pub fn layout(text: &str) -> Layout {
    let lines = lines(text);
    let line = |i: usize| &text[lines[i].0..lines[i].1];
    let mut layout = Layout::default();
    let mut i = 0;
    if lines.first().is_some_and(|_| line(0).trim_end() == "---") {
        if let Some(end) = (1..lines.len()).find(|&j| matches!(line(j).trim_end(), "---" | "...")) {
            layout.frontmatter = Some(0..lines[end].1);
            i = end + 1;
        }
    }
    let mut prose: Vec<(usize, usize)> = Vec::new();
    let mut last_prose: Option<usize> = None;
    while i < lines.len() {
        let l = line(i);
        // (A fence may sit in a block quote: `> ```bash`.)
        let indent = l.len() - unquoted(l).len();
        let rest = &l[indent..];
        let fence_char = rest.bytes().next().filter(|b| matches!(b, b'`' | b'~'));
        let run = fence_char.map_or(0, |c| rest.bytes().take_while(|&b| b == c).count());
        if let (Some(c), true) = (fence_char, run >= 3 && indent <= 12) {
            let info_start = lines[i].0 + indent + run;
            let info = info_start..lines[i].1;
            if c == b'`' && text[info.clone()].contains('`') {
                // Not a fence: a backtick run with backticks after it.
            } else {
                let close = (i + 1..lines.len()).find(|&j| {
                    let t = unquoted(line(j)).trim();
                    t.len() >= run && t.bytes().all(|b| b == c)
                });
                let body_start = lines.get(i + 1).map_or(text.len(), |l| l.0);
                let (body_end, whole_end, next) = match close {
                    Some(j) => (lines[j].0, lines[j].1, j + 1),
                    None => (text.len(), text.len(), lines.len()),
                };
                let intro = last_prose
                    .filter(|&p| i - p <= 3)
                    .map(|p| lines[p].0..lines[p].1);
                layout.blocks.push(Block {
                    info,
                    body: body_start..body_end.max(body_start),
                    whole: lines[i].0..whole_end,
                    intro,
                });
                last_prose = None;
                i = next;
                continue;
            }
        }
        prose.push(lines[i]);
        if !l.trim().is_empty() {
            last_prose = Some(i);
        }
        i += 1;
    }
    for &(start, end) in &prose {
        inline_spans(text, start, end, &mut layout.inline);
    }
    comments(text, &prose, &mut layout);
    layout
}

/// The backtick spans of one line.
fn inline_spans(text: &str, start: usize, end: usize, out: &mut Vec<Range<usize>>) {
    let bytes = &text.as_bytes()[start..end];
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
        let mut j = i + run;
        let mut closed = None;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let r = bytes[j..].iter().take_while(|&&b| b == b'`').count();
                if r == run {
                    closed = Some(j + r);
                    break;
                }
                j += r;
            } else {
                j += 1;
            }
        }
        match closed {
            Some(e) => {
                out.push(start + i..start + e);
                i = e;
            }
            None => i += run,
        }
    }
}

/// HTML comments that start in prose (not in inline code); an unclosed
/// one runs to the end of the text, as Markdown renders it.
fn comments(text: &str, prose: &[(usize, usize)], layout: &mut Layout) {
    let mut after = 0;
    for &(start, end) in prose {
        let mut from = start.max(after);
        while from < end {
            let Some(at) = text[from..end].find("<!--").map(|p| from + p) else {
                break;
            };
            if find(&layout.inline, at, |r| r).is_some() {
                from = at + 4;
                continue;
            }
            let close = text[at + 4..]
                .find("-->")
                .map_or(text.len(), |p| at + 4 + p + 3);
            layout.comments.push(at..close);
            after = close;
            from = close;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_frontmatter_blocks_spans_and_comments() {
        let text = "---\nname: x\n---\nRun `a | b` now.\n\nThe script:\n\n```bash title=\"s.sh\"\necho hi\n```\n<!-- hidden\nnote -->\ntail ```not a fence``` x\n";
        let l = layout(text);
        assert_eq!(&text[l.frontmatter.clone().unwrap()], "---\nname: x\n---");
        assert_eq!(l.blocks.len(), 1);
        let b = &l.blocks[0];
        assert_eq!(&text[b.info.clone()], "bash title=\"s.sh\"");
        assert_eq!(&text[b.body.clone()], "echo hi\n");
        assert_eq!(&text[b.intro.clone().unwrap()], "The script:");
        assert_eq!(
            l.inline
                .iter()
                .map(|r| &text[r.clone()])
                .collect::<Vec<_>>(),
            ["`a | b`", "```not a fence```"]
        );
        assert_eq!(&text[l.comments[0].clone()], "<!-- hidden\nnote -->");
        assert!(l.in_code(text.find("echo").unwrap()) && !l.in_code(text.find("now").unwrap()));
    }

    #[test]
    fn a_fence_in_a_block_quote_is_code() {
        let text = "> Patch first:\n>\n> ```bash\n> curl -o /tmp/p https://x.test/p\n> ```\n>\n> then go on.\n";
        let l = layout(text);
        assert_eq!(l.blocks.len(), 1);
        assert!(l.in_code(text.find("curl").unwrap()));
        assert!(!l.in_code(text.find("then").unwrap()));
    }
}
