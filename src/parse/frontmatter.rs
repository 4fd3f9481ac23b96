//! Finding and reading the YAML frontmatter of a SKILL.md.

use serde_json::{Map, Value};

use super::lenient::read_key_values;
use super::yaml::yaml_to_json;
use crate::validate::diagnostics::{Finding, WarningClass};

/// Where the frontmatter sits in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block<'a> {
    /// The file does not start with a `---` line.
    Absent,
    /// `---` ... `---`: the YAML between, and where the body starts.
    Closed {
        /// The YAML text.
        yaml: &'a str,
        /// Byte offset of the body.
        body_start: usize,
    },
    /// A `---` opening line with no closing one; the text after it.
    Unclosed {
        /// Everything after the opening line.
        rest: &'a str,
    },
}

/// The frontmatter's fields, and what was recovered from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Frontmatter {
    /// Top-level fields.
    pub fields: Map<String, Value>,
    /// Byte offset of the body.
    pub body_start: usize,
    /// A recovery, if there was one.
    pub finding: Option<Finding>,
}

/// Locates the frontmatter as markdown-rs does: an opening `---` line at the
/// very start and the next `---` line closing it (trailing white space allowed).
pub fn locate(text: &str) -> Block<'_> {
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else {
        return Block::Absent;
    };
    if first.trim_end() != "---" || !first.ends_with('\n') {
        return Block::Absent;
    }
    let yaml_start = first.len();
    let mut offset = yaml_start;
    for line in lines {
        if line.trim_end() == "---" {
            return Block::Closed {
                yaml: &text[yaml_start..offset],
                body_start: offset + line.len(),
            };
        }
        offset += line.len();
    }
    Block::Unclosed {
        rest: &text[yaml_start..],
    }
}

/// The 1-based line of each top-level key of `text`'s frontmatter (a line
/// `key:` that is not indented), the first when a key repeats.
pub fn field_lines(text: &str) -> std::collections::BTreeMap<String, usize> {
    let mut lines = std::collections::BTreeMap::new();
    let yaml = match locate(text) {
        Block::Absent => return lines,
        Block::Unclosed { rest } => rest,
        Block::Closed { yaml, .. } => yaml,
    };
    for (n, line) in yaml.lines().enumerate() {
        if line.starts_with([' ', '\t', '#', '-']) {
            continue;
        }
        if let Some((key, _)) = line.split_once(':') {
            let key = key.trim().trim_matches(['"', '\'']);
            if !key.is_empty() {
                // Line 1 is the opening `---`.
                lines.entry(key.to_string()).or_insert(n + 2);
            }
        }
    }
    lines
}

/// Reads the frontmatter of `text`, recovering what strict YAML rejects.
pub fn read(text: &str) -> Frontmatter {
    match locate(text) {
        Block::Absent => Frontmatter {
            fields: Map::new(),
            body_start: 0,
            finding: Some(Finding::at(
                WarningClass::FrontmatterMissing,
                1,
                "no YAML frontmatter; indexed under the folder name",
            )),
        },
        Block::Unclosed { rest } => {
            let head = rest.split("\n\n").next().unwrap_or_default();
            Frontmatter {
                fields: read_key_values(head),
                body_start: 0,
                finding: Some(Finding::at(
                    WarningClass::FrontmatterUnclosed,
                    1,
                    "frontmatter opened with `---` is never closed; fields recovered line by line, whole file indexed as body",
                )),
            }
        }
        Block::Closed { yaml, body_start } => {
            let (fields, finding) = read_yaml(yaml);
            Frontmatter {
                fields,
                body_start,
                finding,
            }
        }
    }
}

fn read_yaml(yaml: &str) -> (Map<String, Value>, Option<Finding>) {
    // The YAML starts on line 2 of the file.
    match yaml_to_json(yaml) {
        Ok(Value::Object(fields)) => (fields, None),
        Ok(Value::Null) => (Map::new(), None),
        Ok(other) => (
            read_key_values(yaml),
            Some(Finding::at(
                WarningClass::FrontmatterNotMapping,
                2,
                format!(
                    "frontmatter is a YAML {}, not a mapping; fields recovered line by line",
                    json_kind(&other)
                ),
            )),
        ),
        Err(error) => (
            read_key_values(yaml),
            Some(Finding::at(
                WarningClass::FrontmatterRecovered,
                error.line + 1,
                format!(
                    "YAML rejected the frontmatter ({}); fields recovered line by line",
                    error.message
                ),
            )),
        ),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "sequence",
        Value::Object(_) => "mapping",
        _ => "scalar",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field<'a>(f: &'a Frontmatter, key: &str) -> &'a str {
        f.fields[key].as_str().unwrap()
    }

    #[test]
    fn block_scalars_keep_descriptions() {
        let text = "---\nname: pdf\ndescription: >-\n  Reads PDFs\n  and forms.\n---\n# Body\n";
        let f = read(text);
        assert_eq!(f.finding, None);
        assert_eq!(field(&f, "description"), "Reads PDFs and forms.");
        assert_eq!(&text[f.body_start..], "# Body\n");

        let f = read("---\nname: x\ndescription: |\n  line one\n  line two\n---\n");
        assert_eq!(field(&f, "description"), "line one\nline two\n");
    }

    #[test]
    fn pipe_with_text_on_one_line_is_recovered_with_its_line() {
        let f = read("---\nname: x\ndescription: | Does things\n---\nbody\n");
        let finding = f.finding.clone().unwrap();
        assert_eq!(finding.class, WarningClass::FrontmatterRecovered);
        assert_eq!(finding.line, Some(3));
        assert_eq!(field(&f, "description"), "Does things");
    }

    #[test]
    fn unquoted_colons_and_star_or_bracket_values_are_recovered() {
        for (line, expected) in [
            ("description: Use when: asked", "Use when: asked"),
            ("description: *important* skill", "*important* skill"),
            ("description: [beta] tool, really", "[beta] tool, really"),
        ] {
            let text = format!("---\nname: x\n{line}\n---\n");
            let f = read(&text);
            assert_eq!(
                f.finding.as_ref().map(|w| w.class),
                Some(WarningClass::FrontmatterRecovered),
                "{line}"
            );
            assert_eq!(field(&f, "description"), expected);
            assert_eq!(field(&f, "name"), "x");
        }
    }

    #[test]
    fn dates_and_numbers_become_strings_and_extra_fields_stay() {
        let f = read("---\nname: x\ndate: 2024-05-01\nversion: 1.0\nlicense: MIT\nmetadata:\n  tags: [a, b]\n---\n");
        assert_eq!(f.finding, None);
        assert_eq!(f.fields["date"], json!("2024-05-01"));
        assert_eq!(f.fields["version"], json!("1.0"));
        assert_eq!(f.fields["metadata"], json!({"tags": ["a", "b"]}));
    }

    #[test]
    fn missing_unclosed_and_non_mapping_frontmatter() {
        let f = read("# Just markdown\n");
        assert_eq!(f.finding.unwrap().class, WarningClass::FrontmatterMissing);
        assert_eq!(f.body_start, 0);

        let f = read("---\nname: x\ndescription: y\n\n# Body\n");
        assert_eq!(
            f.finding.clone().unwrap().class,
            WarningClass::FrontmatterUnclosed
        );
        assert_eq!(field(&f, "name"), "x");
        assert_eq!(f.body_start, 0);

        let f = read("---\n- a\n- b\n---\nbody\n");
        assert_eq!(
            f.finding.unwrap().class,
            WarningClass::FrontmatterNotMapping
        );
        assert!(f.fields.is_empty());
    }

    #[test]
    fn crlf_frontmatter_is_found() {
        let text = "---\r\nname: x\r\n---\r\nbody\r\n";
        let f = read(text);
        assert_eq!(f.finding, None);
        assert_eq!(field(&f, "name"), "x");
        assert_eq!(&text[f.body_start..], "body\r\n");
    }
}
