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

/// Shortest paragraph, in characters once white space is folded, that
/// counts toward the body key.
pub const MIN_PARAGRAPH_CHARS: usize = 200;

/// Paragraphs the body key is made of.
pub const BODY_KEY_PARAGRAPHS: usize = 3;

/// The body key of a skill: its SKILL.md body's [`BODY_KEY_PARAGRAPHS`]
/// longest paragraphs (blank-line separated, white space folded, each of
/// [`MIN_PARAGRAPH_CHARS`] or more), as a set, as 64 hex digits; empty
/// when the body has fewer such paragraphs. Copies that add a header or a
/// footer, or change the card, the frontmatter or the files around the
/// body keep them; skills that share one boilerplate paragraph do not
/// share all three.
pub fn body_key(skill_md: &str) -> String {
    let mut paragraphs: Vec<String> = paragraphs(body_of(skill_md))
        .into_iter()
        .map(|lines| normalize(&lines))
        .filter(|p| p.chars().count() >= MIN_PARAGRAPH_CHARS)
        .collect();
    if paragraphs.len() < BODY_KEY_PARAGRAPHS {
        return String::new();
    }
    paragraphs.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    paragraphs.truncate(BODY_KEY_PARAGRAPHS);
    paragraphs.sort();
    hex::encode(Sha256::digest(paragraphs.join("\n").as_bytes()))
}

/// The paragraphs of `text`: runs of lines between blank ones (lines of
/// white space only).
fn paragraphs(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !current.is_empty() {
                found.push(std::mem::take(&mut current));
            }
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    if !current.is_empty() {
        found.push(current);
    }
    found
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
    fn three_long_paragraphs_key_copies_whatever_surrounds_them() {
        let paragraph = |topic: &str| format!("{topic}: ").repeat(12) + &"words ".repeat(30);
        let body = [paragraph("merge"), paragraph("split"), paragraph("fill")].join("\n\n");
        let original = format!("---\nname: pdf\ndescription: Read PDFs\n---\n# PDF\n\n{body}\n");
        // Renamed, described anew, its frontmatter pasted again at the top
        // of the body, re-wrapped, and a distributor's footer added.
        let copy = format!(
            "---\nname: pdf-official\ndescription: Other words\nmetadata:\n  author: x\n---\nname: pdf\ndescription: Read PDFs\n\n# PDF\n\n{}\n\n---\n> Converted and distributed by someone\n",
            body.replace(": ", ":\n  ")
        );
        assert_eq!(body_key(&original).len(), 64);
        assert_eq!(body_key(&original), body_key(&copy));
        assert_ne!(key(&original, &[]), key(&copy, &[]), "not an exact copy");
        let edited = original.replace("fill", "sign");
        assert_ne!(body_key(&original), body_key(&edited));
        // A sibling sharing one boilerplate paragraph is not a copy.
        let sibling = format!(
            "# Other\n\n{}",
            [paragraph("merge"), paragraph("rotate"), paragraph("crop")].join("\n\n")
        );
        assert_ne!(body_key(&original), body_key(&sibling));
        // Fewer than three long paragraphs key nothing.
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
