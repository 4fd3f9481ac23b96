//! What makes two skills copies of one another, whatever they are called:
//! the same SKILL.md body and the same shipped files. Pure: it sees bytes.
//!
//! The body is taken without its frontmatter (a renamed copy changes
//! `name`, often `description`), with every run of white space made one
//! space and the ends trimmed (a copy re-indented or re-wrapped by an
//! editor is still a copy). The frontmatter's other fields count, as
//! parsed (a copy that adds `allowed-tools` or hooks is not the original). Each shipped file counts by its path in the
//! skill's folder and the SHA-256 of its bytes. A SKILL.md whose body is
//! empty is keyed by its whole text instead, so skills that are only a
//! card are not all one content.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::frontmatter::{locate, Block};

/// One shipped file's part of the key: its path relative to the skill's
/// folder and the SHA-256 of its bytes.
pub fn file_part(path: &str, bytes: &[u8]) -> (String, [u8; 32]) {
    (path.to_string(), Sha256::digest(bytes).into())
}

/// Shortest body, in characters once white space is folded, that keys
/// copies by itself: shorter ones ("See README.md") are shared by skills
/// that are not copies.
pub const MIN_BODY_CHARS: usize = 200;

/// The body key of a skill: its SKILL.md body alone (as [`content_key`]
/// reads it), as 64 hex digits; empty under [`MIN_BODY_CHARS`].
pub fn body_key(skill_md: &str) -> String {
    let body = normalize(body_of(skill_md));
    if body.chars().count() < MIN_BODY_CHARS {
        return String::new();
    }
    hex::encode(Sha256::digest(body.as_bytes()))
}

/// The body of `skill_md`: after its frontmatter, without a byte-order mark.
fn body_of(skill_md: &str) -> &str {
    let text = skill_md.strip_prefix('\u{feff}').unwrap_or(skill_md);
    match locate(text) {
        Block::Closed { body_start, .. } => &text[body_start.min(text.len())..],
        Block::Absent | Block::Unclosed { .. } => text,
    }
}

/// The content key of a skill: `skill_md` (its SKILL.md), `fields` (its
/// frontmatter as parsed; `name` and `description` are left out) and
/// `files` (its shipped files' parts, in any order), as 64 hex digits.
pub fn content_key(
    skill_md: &str,
    fields: &Map<String, Value>,
    files: &[(String, [u8; 32])],
) -> String {
    let mut normalized = normalize(body_of(skill_md));
    if normalized.is_empty() {
        normalized = normalize(skill_md);
    }
    let mut sorted: Vec<&(String, [u8; 32])> = files.iter().collect();
    sorted.sort();
    let others: Map<String, Value> = fields
        .iter()
        .filter(|(k, _)| k.as_str() != "name" && k.as_str() != "description")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // Keys in order (serde_json's map is sorted): the same fields, the
    // same text.
    let others = Value::Object(others).to_string();
    let mut hash = Sha256::new();
    for part in [normalized.as_bytes(), others.as_bytes()] {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part);
    }
    for (path, digest) in sorted {
        hash.update((path.len() as u64).to_le_bytes());
        hash.update(path.as_bytes());
        hash.update(digest);
    }
    hex::encode(hash.finalize())
}

/// `text` with every run of white space one space, trimmed.
fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PDF: &str = "---\nname: pdf\ndescription: Read PDFs\n---\n# PDF\n\nUse pypdf.\n";

    fn key(text: &str, files: &[(String, [u8; 32])]) -> String {
        let fields = crate::parse::parse_skill(text.as_bytes(), &Default::default())
            .map(|p| p.fields)
            .unwrap_or_default();
        content_key(text, &fields, files)
    }

    #[test]
    fn a_renamed_rewrapped_copy_has_the_same_key() {
        let copy = "---\nname: pdf-official\ndescription: The official PDF skill\n---\n\n#   PDF\r\n\r\nUse\n  pypdf.   \n\n";
        let files = [file_part("scripts/merge.py", b"print(1)\n")];
        assert_eq!(key(PDF, &files), key(copy, &files));
        assert_eq!(key(&format!("\u{feff}{PDF}"), &files), key(PDF, &files));
    }

    #[test]
    fn the_body_and_the_shipped_files_decide() {
        let base = key(PDF, &[file_part("a.py", b"x")]);
        let other_body = PDF.replace("pypdf", "pdfplumber");
        assert_ne!(base, key(&other_body, &[file_part("a.py", b"x")]));
        assert_ne!(base, key(PDF, &[file_part("a.py", b"y")]));
        assert_ne!(base, key(PDF, &[file_part("b.py", b"x")]));
        assert_ne!(base, key(PDF, &[]));
        // Order of the files does not matter; their set does.
        let two = [file_part("a.py", b"x"), file_part("b.py", b"y")];
        let swapped = [two[1].clone(), two[0].clone()];
        assert_eq!(key(PDF, &two), key(PDF, &swapped));
    }

    #[test]
    fn fields_besides_name_and_description_count() {
        let hooked = "---\nname: pdf\ndescription: Read PDFs\nallowed-tools: Bash\n---\n# PDF\n\nUse pypdf.\n";
        assert_ne!(key(PDF, &[]), key(hooked, &[]));
        let renamed = PDF.replace("name: pdf", "name: pdf-copy");
        assert_eq!(key(PDF, &[]), key(&renamed, &[]));
    }

    #[test]
    fn a_long_body_keys_copies_whatever_surrounds_it() {
        let body = "Merge, split and fill PDF forms with pypdf. ".repeat(6);
        let original = format!("---\nname: pdf\ndescription: Read PDFs\n---\n{body}");
        let copy = format!(
            "---\nname: pdf-official\ndescription: Other words\nmetadata:\n  author: x\n---\n\n{}",
            body.replace(". ", ".\n")
        );
        assert_eq!(body_key(&original).len(), 64);
        assert_eq!(body_key(&original), body_key(&copy));
        assert_ne!(key(&original, &[]), key(&copy, &[]), "not an exact copy");
        assert_ne!(
            body_key(&original),
            body_key(&original.replace("pypdf", "qpdf"))
        );
        // A short body keys nothing.
        assert_eq!(body_key(PDF), "");
    }

    #[test]
    fn cards_without_a_body_are_not_one_content() {
        let a = "---\nname: a\ndescription: Does A\n---\n";
        let b = "---\nname: b\ndescription: Does B\n---\n";
        assert_ne!(key(a, &[]), key(b, &[]));
        assert_eq!(key(a, &[]), key(&format!("{a}\n\n"), &[]));
    }
}
