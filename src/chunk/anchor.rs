//! GitHub heading anchors (`#section-title`), as github.com renders them.

use std::collections::HashMap;

/// Hands out GitHub anchors for the headings of one file, numbering repeats
/// (`usage`, `usage-1`, `usage-2`) as GitHub does.
#[derive(Debug, Default)]
pub struct AnchorSet {
    seen: HashMap<String, usize>,
}

impl AnchorSet {
    /// The anchor of the next heading titled `title`.
    pub fn next(&mut self, title: &str) -> String {
        let base = slug(title);
        let count = self.seen.entry(base.clone()).or_insert(0);
        let anchor = if *count == 0 {
            base
        } else {
            format!("{base}-{count}")
        };
        *count += 1;
        anchor
    }
}

/// GitHub's slug: lowercase; letters, digits, `-` and `_` kept; spaces become
/// `-`; everything else dropped.
pub fn slug(title: &str) -> String {
    title
        .trim()
        .chars()
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_match_github() {
        assert_eq!(slug("Quick Start: CLI & API"), "quick-start-cli--api");
        assert_eq!(slug("Über `code` (v2.0)"), "über-code-v20");
        assert_eq!(slug("snake_case-name"), "snake_case-name");
    }

    #[test]
    fn repeats_are_numbered() {
        let mut anchors = AnchorSet::default();
        assert_eq!(anchors.next("Usage"), "usage");
        assert_eq!(anchors.next("Usage"), "usage-1");
        assert_eq!(anchors.next("usage"), "usage-2");
        assert_eq!(anchors.next("Other"), "other");
    }
}
