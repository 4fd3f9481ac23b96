//! Tests of the risk rules: per class, an attack written for it, evasions
//! of it, and honest skills that mention the thing and must not trip it.
//! Every skill here is written for the test; none is copied from a real
//! collection.

mod archive;
mod capabilities;
mod credentials;
mod decode;
mod download;
mod general;
mod generalised;
mod hidden;
mod homoglyph;
mod manipulation;
mod mismatch;
mod opaque;
mod padding;
mod prefilter;

use super::{scan, RiskFinding, Severity, SkillFile, SkillFiles};

/// The findings of a skill of `repo` with text files `(path, content)`.
pub fn scan_repo(repo: &str, files: &[(&str, &str)]) -> Vec<RiskFinding> {
    let files: Vec<SkillFile<'_>> = files
        .iter()
        .map(|(path, text)| SkillFile {
            path,
            bytes: text.as_bytes(),
            executable: path.ends_with(".sh"),
        })
        .collect();
    scan(
        &SkillFiles {
            repo: "someone/skills",
            files: &files,
        }
        .with_repo(repo),
    )
}

/// The findings of a skill of `someone/skills` with text files.
pub fn scan_text(files: &[(&str, &str)]) -> Vec<RiskFinding> {
    scan_repo("someone/skills", files)
}

/// The findings of a skill with files given as bytes.
pub fn scan_bytes(files: &[(&str, &[u8])]) -> Vec<RiskFinding> {
    let files: Vec<SkillFile<'_>> = files
        .iter()
        .map(|(path, bytes)| SkillFile {
            path,
            bytes,
            executable: false,
        })
        .collect();
    scan(&SkillFiles {
        repo: "someone/skills",
        files: &files,
    })
}

impl<'a> SkillFiles<'a> {
    fn with_repo(self, repo: &'a str) -> Self {
        Self { repo, ..self }
    }
}

/// The highest severity of `class` among `findings`, if any.
pub fn level(findings: &[RiskFinding], class: &str) -> Option<Severity> {
    findings
        .iter()
        .filter(|f| f.class == class)
        .map(|f| f.severity)
        .max()
}

/// The finding of `class` (the first, most severe).
pub fn finding<'f>(findings: &'f [RiskFinding], class: &str) -> &'f RiskFinding {
    findings
        .iter()
        .find(|f| f.class == class)
        .unwrap_or_else(|| panic!("no {class} finding in {findings:#?}"))
}

/// Asserts `findings` have no finding of `class`, showing them if they do.
pub fn assert_none(findings: &[RiskFinding], class: &str) {
    let of: Vec<&RiskFinding> = findings.iter().filter(|f| f.class == class).collect();
    assert!(of.is_empty(), "unexpected {class}: {of:#?}");
}

/// A SKILL.md with `body` under a frontmatter.
pub fn skill_md(body: &str) -> String {
    format!("---\nname: demo\ndescription: A demo skill.\n---\n\n# Demo\n\n{body}\n")
}
