//! Splitting one section that is longer than `max_chars`.
//!
//! The section's blocks (paragraphs, list items, tables, code blocks, ...)
//! are packed greedily into parts. A block longer than `max_chars` on its own
//! (a huge code block, say) is split by lines; a single line longer than that
//! stays whole, the one case where a chunk may exceed the limit. Each part
//! after the first starts with up to `overlap_chars` of the text before it,
//! cut at a line start (or a space) inside that window, and never more than
//! the part leaves room for.

use std::ops::Range;

use super::{ChunkOptions, Section};

/// Byte ranges of the parts of `section`, overlap included.
pub(super) fn split_section(
    text: &str,
    section: &Section,
    options: &ChunkOptions,
) -> Vec<Range<usize>> {
    let range = section.range.clone();
    let max = options.max_chars.max(1);
    if chars(text, &range) <= max {
        return vec![range];
    }
    let overlap = options.overlap_chars.min(max / 2);
    let later_budget = max - overlap;

    let mut pieces = Vec::new();
    let ends = section
        .boundaries
        .iter()
        .skip(1)
        .copied()
        .chain([range.end]);
    for (start, end) in section.boundaries.iter().copied().zip(ends) {
        let block = start..end;
        if chars(text, &block) > max {
            pieces.extend(lines(text, block));
        } else {
            pieces.push(block);
        }
    }

    let mut parts: Vec<(Range<usize>, usize)> = Vec::new();
    let mut current: Option<(Range<usize>, usize)> = None;
    for piece in pieces {
        let len = chars(text, &piece);
        current = match current {
            None => Some((piece, len)),
            Some((open, open_len)) => {
                let budget = if parts.is_empty() { max } else { later_budget };
                if open_len + len > budget && open_len > 0 {
                    parts.push((open, open_len));
                    Some((piece, len))
                } else {
                    Some((open.start..piece.end, open_len + len))
                }
            }
        };
    }
    parts.extend(current);

    let mut result = Vec::with_capacity(parts.len());
    for (index, (part, len)) in parts.into_iter().enumerate() {
        let room = max.saturating_sub(len).min(overlap);
        let start = if index == 0 || room == 0 {
            part.start
        } else {
            overlap_start(text, range.start, part.start, room)
        };
        result.push(start..part.end);
    }
    result
}

/// Where the overlap before `at` starts: at most `room` characters back, not
/// before `floor`, moved forward to the first line start (else the first
/// white space) inside that window.
fn overlap_start(text: &str, floor: usize, at: usize, room: usize) -> usize {
    let window_start = text[floor..at]
        .char_indices()
        .rev()
        .nth(room.saturating_sub(1))
        .map_or(floor, |(i, _)| floor + i);
    let window = &text[window_start..at];
    if let Some(i) = window.find('\n') {
        if window_start + i + 1 < at {
            return window_start + i + 1;
        }
    }
    match window.find(char::is_whitespace) {
        Some(i) => {
            let after = window_start + i + window[i..].chars().next().map_or(1, char::len_utf8);
            if after < at {
                after
            } else {
                window_start
            }
        }
        None => window_start,
    }
}

fn lines(text: &str, block: Range<usize>) -> impl Iterator<Item = Range<usize>> + '_ {
    let base = block.start;
    text[block]
        .split_inclusive('\n')
        .scan(base, |offset, line| {
            let start = *offset;
            *offset += line.len();
            Some(start..*offset)
        })
}

fn chars(text: &str, range: &Range<usize>) -> usize {
    text[range.clone()].chars().count()
}
