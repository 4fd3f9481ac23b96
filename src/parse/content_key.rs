//! What makes two skills copies of one another, whatever they are called:
//! the same SKILL.md body and the same shipped files. Pure: it sees bytes.
//!
//! The body is taken without its frontmatter (a renamed copy changes
//! `name`, often `description`), with every run of white space made one
//! space and the ends trimmed (a copy re-indented or re-wrapped by an
//! editor is still a copy). Each shipped file counts by its path in the
//! skill's folder and the SHA-256 of its bytes. A SKILL.md whose body is
//! empty is keyed by its whole text instead, so skills that are only a
//! card are not all one content.

use sha2::{Digest, Sha256};

use super::frontmatter::{locate, Block};

/// One shipped file's part of the key: its path relative to the skill's
/// folder and the SHA-256 of its bytes.
pub fn file_part(path: &str, bytes: &[u8]) -> (String, [u8; 32]) {
    (path.to_string(), Sha256::digest(bytes).into())
}

/// The content key of a skill: `skill_md` (its SKILL.md) and `files` (its
/// shipped files' parts, in any order), as 64 hex digits.
pub fn content_key(skill_md: &str, files: &[(String, [u8; 32])]) -> String {
    let text = skill_md.strip_prefix('\u{feff}').unwrap_or(skill_md);
    let body = match locate(text) {
        Block::Closed { body_start, .. } => &text[body_start.min(text.len())..],
        Block::Absent | Block::Unclosed { .. } => text,
    };
    let mut normalized = normalize(body);
    if normalized.is_empty() {
        normalized = normalize(text);
    }
    let mut sorted: Vec<&(String, [u8; 32])> = files.iter().collect();
    sorted.sort();
    let mut hash = Sha256::new();
    hash.update((normalized.len() as u64).to_le_bytes());
    hash.update(normalized.as_bytes());
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

    #[test]
    fn a_renamed_rewrapped_copy_has_the_same_key() {
        let copy = "---\nname: pdf-official\ndescription: The official PDF skill\nlicense: MIT\n---\n\n#   PDF\r\n\r\nUse\n  pypdf.   \n\n";
        let files = [file_part("scripts/merge.py", b"print(1)\n")];
        assert_eq!(content_key(PDF, &files), content_key(copy, &files));
        assert_eq!(
            content_key(&format!("\u{feff}{PDF}"), &files),
            content_key(PDF, &files)
        );
    }

    #[test]
    fn the_body_and_the_shipped_files_decide() {
        let base = content_key(PDF, &[file_part("a.py", b"x")]);
        let other_body = PDF.replace("pypdf", "pdfplumber");
        assert_ne!(base, content_key(&other_body, &[file_part("a.py", b"x")]));
        assert_ne!(base, content_key(PDF, &[file_part("a.py", b"y")]));
        assert_ne!(base, content_key(PDF, &[file_part("b.py", b"x")]));
        assert_ne!(base, content_key(PDF, &[]));
        // Order of the files does not matter; their set does.
        let two = [file_part("a.py", b"x"), file_part("b.py", b"y")];
        let swapped = [two[1].clone(), two[0].clone()];
        assert_eq!(content_key(PDF, &two), content_key(PDF, &swapped));
    }

    #[test]
    fn cards_without_a_body_are_not_one_content() {
        let a = "---\nname: a\ndescription: Does A\n---\n";
        let b = "---\nname: b\ndescription: Does B\n---\n";
        assert_ne!(content_key(a, &[]), content_key(b, &[]));
        assert_eq!(content_key(a, &[]), content_key(&format!("{a}\n\n"), &[]));
    }
}
