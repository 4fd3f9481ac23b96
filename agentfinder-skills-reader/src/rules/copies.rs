//! What copies of a skill share (pure): the key a query typed as a
//! skill's name is compared by, and a skill's card. The serving side's
//! results pipeline folds copies into one result by them; the embedded
//! engine indexes names by [`name_key`].

/// A skill's name as a query typed to find it is compared: lowercase, and
/// every run of characters that are not letters or digits one hyphen, at
/// neither end (`PDF Tools`, `pdf_tools` and `pdf-tools` are one name).
pub fn name_key(text: &str) -> String {
    let mut key = String::with_capacity(text.len());
    let mut gap = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if gap && !key.is_empty() {
                key.push('-');
            }
            gap = false;
            key.extend(c.to_lowercase());
        } else {
            gap = true;
        }
    }
    key
}

/// A skill's card, what copies of it share: its name and description,
/// compared without case or spacing. `None` without a description (two
/// skills of one name and no description may be anything).
pub fn card_text(name: &str, description: &str) -> Option<String> {
    let words = |text: &str| -> String {
        text.split_whitespace()
            .map(str::to_lowercase)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let description = words(description);
    (!description.is_empty()).then(|| format!("{}\n{description}", name_key(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_compare_without_case_or_separators() {
        assert_eq!(name_key("PDF Tools"), "pdf-tools");
        assert_eq!(name_key("  pdf__tools!"), "pdf-tools");
        assert_eq!(name_key("docx"), "docx");
        assert_eq!(name_key("--"), "");
        assert_eq!(
            card_text("PDF", "Read  PDF\nfiles"),
            Some("pdf\nread pdf files".into())
        );
        assert_eq!(card_text("pdf", "  "), None);
    }
}
