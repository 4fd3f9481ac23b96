//! Parse stage: the bytes of one SKILL.md become frontmatter fields and chunks.
//!
//! Decides whether a file can be used at all (UTF-8, no NUL, not empty, not
//! over the size cap), strips a byte-order mark, reads the frontmatter
//! (recovering what strict YAML rejects) and hands the body to the
//! [`chunk`](crate::chunk) stage. Pure: it sees bytes, never a path or a disk.
//! The stage's one I/O edge is [`read`], which reads every skill file of a
//! snapshot on all cores and hands each one's bytes here.

pub mod content_key;
pub mod frontmatter;
mod lenient;
pub mod read;
mod yaml;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::chunk::{chunk_body, Chunk, ChunkOptions};
use crate::validate::diagnostics::{Finding, Unusable, WarningClass};

pub use frontmatter::{locate as locate_frontmatter, Block as FrontmatterBlock};
pub use lenient::read_key_values;
pub use yaml::{yaml_to_json, YamlError};

/// Limits and chunking for the parse stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseOptions {
    /// Larger files are skipped.
    pub max_file_bytes: u64,
    /// How bodies are cut.
    pub chunking: ChunkOptions,
}

impl Default for ParseOptions {
    fn default() -> Self {
        Self {
            max_file_bytes: 2 * 1024 * 1024,
            chunking: ChunkOptions::default(),
        }
    }
}

/// A SKILL.md, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedSkill {
    /// Frontmatter fields (all of them, `name` and `description` included).
    pub fields: Map<String, Value>,
    /// The 1-based line of each top-level frontmatter key, for findings.
    pub field_lines: std::collections::BTreeMap<String, usize>,
    /// The body's chunks.
    pub chunks: Vec<Chunk>,
    /// What was recovered or odd.
    pub findings: Vec<Finding>,
    /// sha256 of the file's bytes, as they are in the source.
    pub content_sha: String,
}

impl ParsedSkill {
    /// A frontmatter field as text, if it is a non-empty string.
    pub fn text_field(&self, key: &str) -> Option<&str> {
        self.fields
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }
}

/// Parses one SKILL.md.
pub fn parse_skill(bytes: &[u8], options: &ParseOptions) -> Result<ParsedSkill, Unusable> {
    let size = bytes.len() as u64;
    if size > options.max_file_bytes {
        return Err(Unusable::TooLarge {
            size,
            cap: options.max_file_bytes,
        });
    }
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(Unusable::NulByte {
            line: line_at(bytes, at),
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| Unusable::NotUtf8 {
        line: line_at(bytes, e.valid_up_to()),
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(Unusable::Empty);
    }

    let frontmatter = frontmatter::read(text);
    let body = chunk_body(text, frontmatter.body_start, &options.chunking);
    let mut findings: Vec<Finding> = frontmatter.finding.into_iter().collect();
    if let Some(reason) = body.fallback {
        findings.push(Finding::file(WarningClass::MarkdownFallback, reason));
    }
    Ok(ParsedSkill {
        field_lines: frontmatter::field_lines(text),
        fields: frontmatter.fields,
        chunks: body.chunks,
        findings,
        content_sha: hex::encode(Sha256::digest(bytes)),
    })
}

fn line_at(bytes: &[u8], offset: usize) -> usize {
    1 + bytes[..offset].iter().filter(|&&b| b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unusable_files_name_their_reason_and_line() {
        let options = ParseOptions::default();
        assert_eq!(parse_skill(b"", &options), Err(Unusable::Empty));
        assert_eq!(parse_skill(b" \n\n", &options), Err(Unusable::Empty));
        assert_eq!(
            parse_skill(b"ok\nfine\n\xff\xfe", &options),
            Err(Unusable::NotUtf8 { line: 3 })
        );
        assert_eq!(
            parse_skill(b"a\x00b", &options),
            Err(Unusable::NulByte { line: 1 })
        );
        let small = ParseOptions {
            max_file_bytes: 4,
            ..options
        };
        assert_eq!(
            parse_skill(b"hello", &small),
            Err(Unusable::TooLarge { size: 5, cap: 4 })
        );
    }

    #[test]
    fn a_bom_is_ignored_and_the_sha_is_of_the_raw_bytes() {
        let bytes = "\u{feff}---\nname: x\n---\n# T\nbody\n".as_bytes();
        let parsed = parse_skill(bytes, &ParseOptions::default()).unwrap();
        assert!(parsed.findings.is_empty(), "{:?}", parsed.findings);
        assert_eq!(parsed.text_field("name"), Some("x"));
        assert_eq!(parsed.chunks.len(), 1);
        assert_eq!(parsed.chunks[0].line_start, 4);
        assert_eq!(parsed.content_sha, hex::encode(Sha256::digest(bytes)));
    }

    #[test]
    fn frontmatter_never_becomes_a_setext_heading() {
        let parsed =
            parse_skill(b"---\nname: x\n---\nbody text\n", &ParseOptions::default()).unwrap();
        assert_eq!(parsed.chunks.len(), 1);
        assert_eq!(parsed.chunks[0].heading, None);
        assert_eq!(parsed.chunks[0].content, "body text");
    }

    #[test]
    fn a_huge_hostile_file_is_skipped_or_parsed_without_crashing() {
        let hostile = format!("---\nname: x\n---\n{}", "> [".repeat(3_000_000));
        let result = parse_skill(hostile.as_bytes(), &ParseOptions::default());
        assert!(matches!(result, Err(Unusable::TooLarge { .. })));
        let under_cap = format!("---\nname: x\n---\n{}", "> [".repeat(200_000));
        let parsed = parse_skill(under_cap.as_bytes(), &ParseOptions::default()).unwrap();
        assert!(parsed
            .findings
            .iter()
            .any(|f| f.class == WarningClass::MarkdownFallback));
    }
}
