//! The lines of `findings.ndjson`: a warning's or a skipped file's line as
//! it is written (keys in the order `serde_json`'s map gives them, which
//! artifacts already written hold), and what is read back off a line an
//! earlier build wrote: its class, or a file's lines without its
//! `duplicate-name` warnings.

use agentfinder_skills_reader::contract::SkippedFile;

use super::diagnostics::Finding;

/// The `findings.ndjson` line of a warning about `path`.
pub fn finding_line(path: &str, finding: &Finding) -> String {
    line_text(&LineOut {
        class: finding.class.as_str(),
        line: Some(finding.line),
        message: &finding.message,
        path,
        severity: "warning",
    })
}

/// A line of `findings.ndjson` as it is written: the keys in the order
/// `serde_json`'s map gives them (sorted), which files already written use.
#[derive(serde::Serialize)]
struct LineOut<'a> {
    class: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<Option<usize>>,
    message: &'a str,
    path: &'a str,
    severity: &'a str,
}

/// A line, serialised without building a map first (a backfill writes the
/// `duplicate-name` lines of every commit anew).
fn line_text(line: &LineOut<'_>) -> String {
    let mut text = serde_json::to_string(line).unwrap_or_default();
    text.push('\n');
    text
}

/// The class of a line of `findings.ndjson` and whether it is a skipped
/// file's. Lines are written with their keys sorted, so a line made by
/// [`finding_line`] or [`skip_line`] starts with its class and ends with its
/// severity, and both are read off its ends (JSON-decoding every line of
/// every commit was most of what settling a backfill's commit cost); any
/// other line is decoded.
pub(super) fn class_of(line: &str) -> Option<(std::borrow::Cow<'_, str>, bool)> {
    const SKIPPED: &str = ",\"severity\":\"skipped\"}";
    const WARNING: &str = ",\"severity\":\"warning\"}";
    let quick = line.strip_prefix("{\"class\":\"").and_then(|rest| {
        let class = &rest[..rest.find('"')?];
        let skipped = if line.ends_with(SKIPPED) {
            true
        } else if line.ends_with(WARNING) {
            false
        } else {
            return None;
        };
        (!class.contains('\\')).then_some((std::borrow::Cow::Borrowed(class), skipped))
    });
    quick.or_else(|| {
        let decoded = serde_json::from_str::<ClassOf<'_>>(line).ok()?;
        Some((decoded.class, decoded.severity == "skipped"))
    })
}

/// The class of a line of `findings.ndjson` (the rest is skipped unread).
#[derive(serde::Deserialize)]
struct ClassOf<'a> {
    #[serde(borrow)]
    class: std::borrow::Cow<'a, str>,
    severity: &'a str,
}

/// One line of `findings.ndjson`, as
/// [`FindingsLog::count_own`](super::findings::FindingsLog::count_own) reads it.
#[derive(serde::Deserialize)]
pub(super) struct OwnLine<'a> {
    #[serde(borrow)]
    pub(super) path: std::borrow::Cow<'a, str>,
    #[serde(default)]
    pub(super) line: Option<usize>,
    #[serde(borrow)]
    pub(super) class: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    pub(super) message: std::borrow::Cow<'a, str>,
}

/// A file's findings lines without its `duplicate-name` warnings (the
/// class as [`finding_line`] writes it: a quote inside a message is
/// escaped, so no message can hold this text).
pub fn own_lines(lines: &str) -> std::borrow::Cow<'_, str> {
    const DUPLICATE: &str = "\"class\":\"duplicate-name\"";
    if !lines.contains(DUPLICATE) {
        return std::borrow::Cow::Borrowed(lines);
    }
    let kept: String = lines
        .split_inclusive('\n')
        .filter(|line| !line.contains(DUPLICATE))
        .collect();
    std::borrow::Cow::Owned(kept)
}

/// The `findings.ndjson` line of a skipped file.
pub fn skip_line(skipped: &SkippedFile) -> String {
    line_text(&LineOut {
        class: &skipped.class,
        line: None,
        message: &skipped.reason,
        path: &skipped.path,
        severity: "skipped",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::diagnostics::WarningClass;

    #[test]
    fn lines_are_written_as_a_serde_json_map_writes_them() {
        // Artifacts written before hold lines made by `json!` (a sorted
        // map); entries reused from them must compare equal.
        let message = "quote \" backslash \\ tab \t nul \u{0} é \u{2028} `code`";
        for line in [None, Some(7)] {
            let finding = Finding {
                line,
                ..Finding::file(WarningClass::NameMismatch, message)
            };
            let old = serde_json::json!({"severity": "warning", "path": "a/é/SKILL.md",
                "line": line, "class": "name-mismatch", "message": message});
            assert_eq!(finding_line("a/é/SKILL.md", &finding), format!("{old}\n"));
        }
        let skipped = SkippedFile {
            path: "b/SKILL.md".into(),
            class: "empty".into(),
            reason: message.into(),
        };
        let old = serde_json::json!({"severity": "skipped", "path": "b/SKILL.md",
            "class": "empty", "message": message});
        assert_eq!(skip_line(&skipped), format!("{old}\n"));
    }

    #[test]
    fn a_class_read_off_a_line_is_the_one_json_decoding_reads() {
        // Messages and paths that hold the very text read off a line's ends.
        let tricky = r#"x","severity":"skipped"} {"class":"empty"#;
        let finding = Finding::at(WarningClass::NameMismatch, 3, tricky);
        let skipped = SkippedFile {
            path: format!("{tricky}/SKILL.md"),
            class: "not-utf8".into(),
            reason: tricky.into(),
        };
        let lines = [
            finding_line(tricky, &finding),
            skip_line(&skipped),
            // Another writer's key order: decoded, not read off its ends.
            r#"{"severity":"skipped","class":"empty"}"#.to_string(),
        ];
        for line in &lines {
            let line = line.trim_end();
            let decoded: serde_json::Value = serde_json::from_str(line).unwrap();
            let read = class_of(line).unwrap();
            assert_eq!(read.0, decoded["class"].as_str().unwrap(), "{line}");
            assert_eq!(read.1, decoded["severity"] == "skipped", "{line}");
        }
        assert_eq!(class_of("{\"class\":\"empty\", not json"), None);
    }
}
