//! `.claude-plugin/marketplace.json`: plugin descriptions and a version.

use std::collections::HashMap;

use serde_json::Value;

/// What the builder takes from a marketplace file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marketplace {
    /// `metadata.version`.
    pub version: Option<String>,
    /// `plugins[].description` by `plugins[].name`.
    pub descriptions: HashMap<String, String>,
}

/// Parses a marketplace file; the error names the line.
pub fn parse_marketplace(bytes: &[u8]) -> Result<Marketplace, (usize, String)> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| (e.line(), e.to_string()))?;
    let Value::Object(root) = value else {
        return Err((1, "expected a JSON object".into()));
    };
    let version = root
        .get("metadata")
        .and_then(|m| m.get("version"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let descriptions = root
        .get("plugins")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let name = p.get("name")?.as_str()?;
            let description = p.get("description")?.as_str()?;
            Some((name.to_string(), description.to_string()))
        })
        .collect();
    Ok(Marketplace {
        version,
        descriptions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_version_and_descriptions() {
        let m = parse_marketplace(
            br#"{"metadata": {"version": "1.2.0"}, "plugins": [{"name": "pdf", "description": "PDF tools"}, {"name": 3}]}"#,
        )
        .unwrap();
        assert_eq!(m.version.as_deref(), Some("1.2.0"));
        assert_eq!(m.descriptions["pdf"], "PDF tools");
        assert_eq!(m.descriptions.len(), 1);
    }

    #[test]
    fn errors_name_the_line() {
        let (line, _) = parse_marketplace(b"{\n\"a\": 1,\n}").unwrap_err();
        assert_eq!(line, 3);
    }
}
