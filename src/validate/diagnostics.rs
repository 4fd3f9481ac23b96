//! What a build tells an operator about its input: why a file was skipped,
//! and what was recovered or looks wrong in a file that was kept.

use std::fmt;

/// Kinds of warning; each has a stable name that `--strict` and the
/// manifest use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WarningClass {
    /// YAML rejected the frontmatter; `name` and `description` were recovered line by line.
    FrontmatterRecovered,
    /// The frontmatter is YAML but not a mapping; recovered line by line.
    FrontmatterNotMapping,
    /// The file has no frontmatter; indexed under its folder name.
    FrontmatterMissing,
    /// The frontmatter's closing `---` is missing; the whole file is the body.
    FrontmatterUnclosed,
    /// `name` breaks the Agent Skills rules (1-64 lowercase letters, digits, hyphens).
    NameInvalid,
    /// `name` differs from the skill's folder name.
    NameMismatch,
    /// `description` is missing or empty.
    DescriptionMissing,
    /// `description` is longer than 1024 characters.
    DescriptionTooLong,
    /// There is no `name` (the folder's name stands in).
    NameMissing,
    /// `compatibility` is longer than 500 characters.
    CompatibilityTooLong,
    /// `metadata` is not a map of strings to strings.
    MetadataInvalid,
    /// A frontmatter field the Agent Skills specification does not define.
    FieldUnknown,
    /// Two skills have the same name; both are kept.
    DuplicateName,
    /// The Markdown was cut as plain lines (hostile nesting, parser failure).
    MarkdownFallback,
    /// A symlinked SKILL.md was indexed as an alias of the file it points to.
    SymlinkAlias,
    /// `.claude-plugin/marketplace.json` could not be read.
    MarketplaceInvalid,
    /// A file the skill ships could not be read (left out of its risk
    /// findings and content key).
    ShippedUnreadable,
}

impl WarningClass {
    /// Every class, for `--help` and validation of `--strict` names.
    pub const ALL: [WarningClass; 17] = [
        Self::FrontmatterRecovered,
        Self::FrontmatterNotMapping,
        Self::FrontmatterMissing,
        Self::FrontmatterUnclosed,
        Self::NameInvalid,
        Self::NameMismatch,
        Self::DescriptionMissing,
        Self::DescriptionTooLong,
        Self::NameMissing,
        Self::CompatibilityTooLong,
        Self::MetadataInvalid,
        Self::FieldUnknown,
        Self::DuplicateName,
        Self::MarkdownFallback,
        Self::SymlinkAlias,
        Self::MarketplaceInvalid,
        Self::ShippedUnreadable,
    ];

    /// Stable kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FrontmatterRecovered => "frontmatter-recovered",
            Self::FrontmatterNotMapping => "frontmatter-not-mapping",
            Self::FrontmatterMissing => "frontmatter-missing",
            Self::FrontmatterUnclosed => "frontmatter-unclosed",
            Self::NameInvalid => "name-invalid",
            Self::NameMismatch => "name-mismatch",
            Self::DescriptionMissing => "description-missing",
            Self::DescriptionTooLong => "description-too-long",
            Self::NameMissing => "name-missing",
            Self::CompatibilityTooLong => "compatibility-too-long",
            Self::MetadataInvalid => "metadata-invalid",
            Self::FieldUnknown => "field-unknown",
            Self::DuplicateName => "duplicate-name",
            Self::MarkdownFallback => "markdown-fallback",
            Self::SymlinkAlias => "symlink-alias",
            Self::MarketplaceInvalid => "marketplace-invalid",
            Self::ShippedUnreadable => "shipped-unreadable",
        }
    }

    /// Parses a stable name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

impl fmt::Display for WarningClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A warning about one place in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What kind of warning.
    pub class: WarningClass,
    /// 1-based line in the file, where one applies.
    pub line: Option<usize>,
    /// What was found, and what was done about it.
    pub message: String,
}

impl Finding {
    /// A finding at `line`.
    pub fn at(class: WarningClass, line: usize, message: impl Into<String>) -> Self {
        Self {
            class,
            line: Some(line),
            message: message.into(),
        }
    }

    /// A finding about the file as a whole.
    pub fn file(class: WarningClass, message: impl Into<String>) -> Self {
        Self {
            class,
            line: None,
            message: message.into(),
        }
    }
}

/// Why a file cannot be used at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// Zero bytes, or only white space.
    Empty,
    /// Larger than the configured cap.
    TooLarge {
        /// Size of the file.
        size: u64,
        /// The cap.
        cap: u64,
    },
    /// Not valid UTF-8.
    NotUtf8 {
        /// 1-based line of the first invalid byte.
        line: usize,
    },
    /// Contains a NUL byte (a binary file).
    NulByte {
        /// 1-based line of the first NUL.
        line: usize,
    },
    /// A symlink that leaves the tree or points to no SKILL.md in it.
    Symlink {
        /// Where it points.
        target: String,
    },
    /// The path is not valid UTF-8.
    PathNotUtf8,
    /// The path holds a character an agent would not see (a control,
    /// format or separator character: a line break, a zero-width space,
    /// a tag character, a bidirectional override).
    PathUnsafe {
        /// The first such character.
        character: char,
    },
    /// The source could not produce the file's bytes.
    Unreadable {
        /// Why.
        reason: String,
    },
}

impl Unusable {
    /// Stable kebab-case name of the reason.
    pub fn class(&self) -> &'static str {
        match self {
            Self::Empty => "empty",
            Self::TooLarge { .. } => "too-large",
            Self::NotUtf8 { .. } => "not-utf8",
            Self::NulByte { .. } => "nul-byte",
            Self::Symlink { .. } => "symlink",
            Self::PathNotUtf8 => "path-not-utf8",
            Self::PathUnsafe { .. } => "path-unsafe",
            Self::Unreadable { .. } => "unreadable",
        }
    }
}

impl fmt::Display for Unusable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("file is empty"),
            Self::TooLarge { size, cap } => {
                write!(
                    f,
                    "file is {size} bytes, over the {cap}-byte cap (max_file_bytes)"
                )
            }
            Self::NotUtf8 { line } => write!(f, "line {line}: not valid UTF-8"),
            Self::NulByte { line } => write!(f, "line {line}: contains a NUL byte (binary file?)"),
            Self::Symlink { target } => {
                write!(
                    f,
                    "symlink to `{target}`, which is not a SKILL.md inside the tree"
                )
            }
            Self::PathNotUtf8 => f.write_str("path is not valid UTF-8"),
            Self::PathUnsafe { character } => write!(
                f,
                "path holds U+{:04X}, a character an agent would not see (control, format or separator): its skill could hide text in its own links and ids",
                u32::from(*character)
            ),
            Self::Unreadable { reason } => write!(f, "cannot read: {reason}"),
        }
    }
}

/// The first character of `path` an agent reading it would not see: a
/// control (Unicode category Cc, line breaks included), format (Cf: zero-
/// width, tag and bidirectional characters) or line or paragraph
/// separator (Zl, Zp). A skill whose path holds one is skipped.
pub fn unsafe_path_char(path: &str) -> Option<char> {
    use unicode_general_category::{get_general_category, GeneralCategory};
    path.chars().find(|&c| {
        matches!(
            get_general_category(c),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
        )
    })
}
