//! Text an agent reads and a person does not see: invisible characters
//! (tag characters, variation-selector runs, bidi controls, zero-width
//! characters) and HTML comments in Markdown that address the agent.
//!
//! Invisible characters are read in runs, and a run the writing needs is
//! left alone: a joiner in an emoji sequence or in Persian and Indic text,
//! one variation selector, a subdivision flag's tags, directional marks in
//! right-to-left text, a byte order mark at the start, a soft hyphen in
//! prose. Each other run gets one category, most telling first.

use std::sync::LazyLock;

use regex::Regex;

use super::hit::{Context, Hit};
use super::text::{excerpt, Kind, Text};
use super::unicode::{invisible, is_rtl, joiner_is_native, tag_ascii, Invisible};

/// What an invisible run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Category {
    Tags,
    Selectors,
    Bidi,
    InWord,
    Run,
    InCode,
    InProse,
}

/// A run of invisible characters.
struct Run {
    start: usize,
    category: Category,
    spelled: String,
}

/// Hits a check returns per text (the engine keeps fewer).
const MAX_HITS: usize = 64;

/// Runs at least this long are an encoding, not an accident.
const LONG_RUN: usize = 3;

fn runs(text: &Text<'_>) -> Vec<Run> {
    let raw = text.raw;
    if raw.is_ascii() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut chars = raw.char_indices().peekable();
    let mut before: Option<char> = None;
    // Whether the current line has right-to-left letters, read once per
    // line (a long line full of runs must not be read once per run).
    let mut rtl: Option<(std::ops::Range<usize>, bool)> = None;
    while let Some((start, c)) = chars.next() {
        let Some(first) = invisible(c) else {
            before = Some(c);
            continue;
        };
        let mut kinds = vec![first];
        let mut spelled: String = tag_ascii(c).into_iter().collect();
        while let Some(&(_, n)) = chars.peek() {
            let Some(kind) = invisible(n) else { break };
            kinds.push(kind);
            spelled.extend(tag_ascii(n));
            chars.next();
        }
        let after = chars.peek().map(|&(_, n)| n);
        let line = text.line_at(start);
        if rtl.as_ref().is_none_or(|(range, _)| *range != line) {
            let has_rtl = text.raw[line.clone()].chars().any(is_rtl);
            rtl = Some((line, has_rtl));
        }
        let rtl_line = rtl.as_ref().is_some_and(|(_, has)| *has);
        if let Some(category) = categorize(text, start, &kinds, (before, after), rtl_line) {
            out.push(Run {
                start,
                category,
                spelled,
            });
        }
    }
    out
}

fn categorize(
    text: &Text<'_>,
    start: usize,
    kinds: &[Invisible],
    (before, after): (Option<char>, Option<char>),
    rtl_line: bool,
) -> Option<Category> {
    use Invisible::*;
    let has = |k: Invisible| kinds.contains(&k);
    let only = |allowed: &[Invisible]| kinds.iter().all(|k| allowed.contains(k));
    let in_code = text.in_code(start);
    if has(Tag) {
        let flag = before == Some('\u{1F3F4}') && only(&[Tag]) && kinds.len() <= 7;
        return (!flag).then_some(Category::Tags);
    }
    if only(&[Selector, Joiner]) {
        let selectors = kinds.iter().filter(|k| **k == Selector).count();
        let supplement = text.raw[start..]
            .chars()
            .take(kinds.len())
            .any(|c| c as u32 >= 0xE0100);
        if (supplement && selectors >= 2) || selectors >= LONG_RUN {
            return Some(Category::Selectors);
        }
        if selectors == kinds.len() || joiner_is_native(before, after) {
            return None;
        }
    }
    if has(BidiControl) {
        return (in_code || !rtl_line).then_some(Category::Bidi);
    }
    if only(&[BidiMark]) && rtl_line {
        return None;
    }
    // A byte order mark where a file starts (files joined keep theirs), or
    // an invisible character put before a fence to show it literally.
    let line_start = text.raw[..start]
        .trim_end_matches([' ', '\t'])
        .ends_with('\n')
        || text.raw[..start].trim_end_matches([' ', '\t']).is_empty();
    if line_start && (only(&[ByteOrderMark]) || matches!(after, Some('`' | '~'))) {
        return None;
    }
    if only(&[SoftHyphen]) && !(in_code && text.kind != Kind::Config) {
        return None;
    }
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    Some(if kinds.len() >= LONG_RUN {
        Category::Run
    } else if word(before) && word(after) {
        Category::InWord
    } else if in_code {
        Category::InCode
    } else {
        Category::InProse
    })
}

fn hits(text: &Text<'_>, category: Category) -> Vec<Hit> {
    runs(text)
        .into_iter()
        .filter(|r| r.category == category)
        .take(MAX_HITS)
        .map(|r| {
            let hit = Hit::at(r.start);
            if r.spelled.is_empty() {
                hit
            } else {
                let shown = excerpt(&r.spelled, 0, |_| false);
                hit.excerpt(format!("{} [tags spell: {shown}]", text.excerpt(r.start)))
            }
        })
        .collect()
}

/// Tag characters (subdivision flags aside).
pub fn tag_characters(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    hits(text, Category::Tags)
}

/// Runs of variation selectors.
pub fn selector_runs(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    hits(text, Category::Selectors)
}

/// Bidi overrides and isolates (in code, or in a line with no
/// right-to-left letters).
pub fn bidi_controls(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    hits(text, Category::Bidi)
}

/// An invisible character between two letters or digits.
pub fn invisible_in_word(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    hits(text, Category::InWord)
}

/// Three or more invisible characters in a row.
pub fn invisible_runs(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    hits(text, Category::Run)
}

/// Another invisible character, in code.
pub fn invisible_in_code(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    hits(text, Category::InCode)
}

/// Another invisible character, in prose.
pub fn invisible_in_prose(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    hits(text, Category::InProse)
}

/// Words that address an agent: a name used as a vocative ("AI agent:",
/// "Claude,"), a note to it, a greeting, "if you are an AI", or "you
/// must" (not its name in a path like `agents-and-tools/`).
static AGENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?im)(?:^|<!--)[\s\-*#>]*(?:ai\s+)?(?:ai|assistant|agent|claude|codex|chatgpt|llm|copilot|gemini)\s*[:,]|\b(?:note|instructions?|message|reminder|maintenance)s?\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:ai|assistant|agent|model|llm|claude|codex|copilot)s?\b|\(\s*for\s+the\s+(?:ai|assistant|agent|model|llm)\b|\b(?:dear|hey|hello|attention)\s+(?:ai|assistant|agent|model|llm|claude)\b|\bif\s+you\s+are\s+(?:an?\s+)?(?:ai|assistant|agent|llm|language\s+model|claude)\b|\byou\s+(?:must|should|will|need\s+to|have\s+to|are\s+now)\b|\b(?:claude|codex|the\s+(?:ai|assistant|agent|model))\s+(?:must|should|needs\s+to|has\s+to)\b").expect("agent pattern")
});
/// Instructions in a comment.
static IMPERATIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:always|never|must|run|execute|install|download|send|upload|post|fetch|read|open|delete|remove|write|call|invoke|ignore|do\s+not|don'?t|make\s+sure|remember\s+to)\b").expect("imperative pattern")
});
/// Instructions that override the agent's or conceal from the user.
static DANGEROUS: LazyLock<Regex> = LazyLock::new(|| {
    use super::steering::{CONCEAL, COVERT_ACTS, HIDDEN_EXTRAS, OVERRIDE};
    Regex::new(&format!(
        "(?i){OVERRIDE}|{CONCEAL}|{COVERT_ACTS}|{HIDDEN_EXTRAS}"
    ))
    .expect("dangerous pattern")
});
/// A command that runs something.
static COMMAND: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:curl|wget|bash|sh\s+-c|powershell|iex|eval|exec|python3?\s+-c|chmod\s+\+x|base64\s+-d)\b").expect("command pattern")
});

/// The HTML comments of a Markdown text with their content.
fn comments<'t>(text: &'t Text<'_>) -> impl Iterator<Item = (usize, &'t str)> + 't {
    let markdown = text.kind == Kind::Markdown;
    text.layout
        .comments
        .iter()
        .filter(move |_| markdown)
        .map(move |r| (r.start, &text.raw[r.clone()]))
}

fn comment_hit(at: usize, content: &str) -> Hit {
    let inner = content.trim_start_matches("<!--").trim_end_matches("-->");
    let first = inner
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    Hit::at(at).excerpt(excerpt(&format!("<!-- {first}"), 0, |_| false))
}

/// Whether a comment overrides instructions, keeps things from the user,
/// or tells the agent to run a command.
fn dangerous(comment: &str) -> bool {
    DANGEROUS.is_match(comment) || (AGENT.is_match(comment) && COMMAND.is_match(comment))
}

/// Comments that override instructions, keep things from the user, or
/// tell the agent to run a command.
pub fn comment_instructions(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    comments(text)
        .filter(|(_, c)| dangerous(c))
        .map(|(at, c)| comment_hit(at, c))
        .collect()
}

/// Comments that address the agent with instructions.
pub fn comment_to_agent(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    comments(text)
        .filter(|(_, c)| AGENT.is_match(c) && IMPERATIVE.is_match(c) && !dangerous(c))
        .map(|(at, c)| comment_hit(at, c))
        .collect()
}
