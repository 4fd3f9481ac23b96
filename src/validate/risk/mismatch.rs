//! A script shown in `SKILL.md` that differs from the file the skill
//! ships under that name. A code block shows a file when its info string
//! names it (```` ```bash scripts/setup.sh ````, `title="setup.sh"`), or
//! when the line just before it introduces the file's contents ("`setup.sh`:",
//! "contents of setup.sh") rather than a way to run it. A block with an
//! elision (`...`, `# ...`, "truncated") is an excerpt: its lines must
//! appear in the file, in order; any other block must be the file.

use std::sync::LazyLock;

use regex::Regex;

use super::hit::FileHit;
use super::markdown::{layout, Block};
use super::text::{excerpt, Kind};
use super::{SkillFile, SkillFiles};

/// An intro line that says how to run the file or what to change in it,
/// not what it holds.
static RUN_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:run|runs|running|execute|call|invoke|usage|use|using|with|example|examples|before|after|output|install|pass|test|edit|modify|change|update|add|set|configure|replace|append|insert|customi[sz]e|adjust)\b").expect("run words")
});
/// An intro line that presents contents.
static CONTENT_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:contents?\s+of|source\s+of|looks\s+like|as\s+follows|following|contains|is\s*:)",
    )
    .expect("content words")
});
/// An elision line.
static ELISION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:#|//|--|;|/\*|\*|<!--|rem)?\s*(?:\.\.\.|\x{2026}|\[\.\.\.\]|\(\.\.\.\)|etc\.?)|\btruncated\b|\bomitted\b|\brest of\b|\.\.\.\s*$").expect("elision")
});

/// Languages and the extensions of files they can show.
const LANGUAGES: &[(&[&str], &[&str])] = &[
    (
        &["bash", "sh", "shell", "zsh", "console", "shellscript"],
        &["sh", "bash", "zsh", ""],
    ),
    (&["python", "py", "python3"], &["py", ""]),
    (&["javascript", "js", "node", "mjs"], &["js", "mjs", "cjs"]),
    (&["typescript", "ts"], &["ts", "mts"]),
    (&["json", "jsonc"], &["json", "jsonc"]),
    (&["yaml", "yml"], &["yaml", "yml"]),
    (&["powershell", "ps1", "pwsh"], &["ps1", "psm1"]),
    (&["ruby", "rb"], &["rb"]),
    (&["toml"], &["toml"]),
];

fn extension(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or("", |(_, e)| e)
}

/// Whether a block in `language` can show the file at `path`.
fn compatible(language: &str, path: &str) -> bool {
    let language = language.to_ascii_lowercase();
    match LANGUAGES
        .iter()
        .find(|(names, _)| names.contains(&language.as_str()))
    {
        Some((_, exts)) => exts.contains(&extension(path)),
        None => true,
    }
}

/// The shipped file `word` names: its path (with or without `./`), or a
/// basename no other shipped file has.
fn named<'a>(word: &str, files: &'a [(usize, &'a str)]) -> Option<(usize, &'a str)> {
    let word = word.trim_matches(|c: char| {
        matches!(
            c,
            '`' | '*' | '"' | '\'' | '(' | ')' | '[' | ']' | ',' | ':' | '{' | '}'
        )
    });
    let word = word.strip_prefix("./").unwrap_or(word);
    if word.is_empty() || !word.contains('.') {
        return None;
    }
    if let Some(&(i, p)) = files.iter().find(|(_, p)| *p == word) {
        return Some((i, p));
    }
    let mut same = files
        .iter()
        .filter(|(_, p)| p.rsplit('/').next() == Some(word));
    match (same.next(), same.next()) {
        (Some(&(i, p)), None) => Some((i, p)),
        _ => None,
    }
}

fn lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

/// The file a block shows, if any.
fn shown_file<'a>(
    skill_md: &str,
    block: &Block,
    files: &'a [(usize, &'a str)],
) -> Option<(usize, &'a str)> {
    let info = &skill_md[block.info.clone()];
    let language = info
        .split(|c: char| c.is_whitespace() || c == '{' || c == ':')
        .next()
        .unwrap_or("");
    let labelled = info
        .split(|c: char| c.is_whitespace() || matches!(c, '=' | ':' | '{' | '}' | ','))
        .find_map(|w| named(w, files));
    let body = &skill_md[block.body.clone()];
    let found = labelled.or_else(|| {
        let intro = &skill_md[block.intro.clone()?];
        let presents = intro
            .trim_end()
            .trim_end_matches(['*', '`', ')', ' '])
            .ends_with(':')
            || CONTENT_WORDS.is_match(intro);
        if !presents || RUN_WORDS.is_match(intro) {
            return None;
        }
        let (i, path) = intro.split_whitespace().find_map(|w| named(w, files))?;
        let base = path.rsplit('/').next().unwrap_or(path);
        (!body.contains(base)).then_some((i, path))
    })?;
    (compatible(language, found.1) && lines(body).len() >= 2).then_some(found)
}

/// Where `shown` departs from `file`: `None` when it is the file (or, with
/// an elision, an excerpt of it); else the index of the first shown line
/// not in the file, or `shown.len()` when the file has more.
fn departure(shown: &[&str], file: &[&str]) -> Option<usize> {
    if shown == file {
        return None;
    }
    if shown.iter().any(|l| ELISION.is_match(l)) {
        let mut rest = file.iter();
        for (k, line) in shown.iter().enumerate() {
            if !ELISION.is_match(line) && !rest.any(|f| f == line) {
                return Some(k);
            }
        }
        return None;
    }
    let first_difference = shown
        .iter()
        .zip(file)
        .position(|(a, b)| a != b)
        .unwrap_or(shown.len().min(file.len()));
    // A block that starts like a whole script (a shebang) claims to be
    // the file; any other block whose lines are all in the file, in
    // order, is an excerpt of it.
    if !shown.first().is_some_and(|l| l.starts_with("#!")) {
        let mut rest = file.iter();
        if shown.iter().all(|line| rest.any(|f| f == line)) {
            return None;
        }
        let mut rest = file.iter();
        return shown.iter().position(|line| !rest.any(|f| f == line));
    }
    Some(first_difference)
}

/// Code blocks of `SKILL.md` that show a shipped file and differ from it.
pub fn shown_differs(skill: &SkillFiles<'_>) -> Vec<FileHit> {
    let Some(md_index) = skill.files.iter().position(|f| f.path == "SKILL.md") else {
        return Vec::new();
    };
    let Ok(skill_md) = std::str::from_utf8(skill.files[md_index].bytes) else {
        return Vec::new();
    };
    let texts: Vec<(usize, &str, &str)> = skill
        .files
        .iter()
        .enumerate()
        // Scripts: what runs. A config or data file shown as an example of
        // its format is not the file's logic.
        .filter(|(i, f)| {
            *i != md_index
                && (f.executable
                    || Kind::of(
                        f.path,
                        std::str::from_utf8(&f.bytes[..f.bytes.len().min(2)]).unwrap_or(""),
                    ) == Kind::Script)
        })
        .filter_map(|(i, f): (usize, &SkillFile<'_>)| {
            Some((i, f.path, std::str::from_utf8(f.bytes).ok()?))
        })
        .collect();
    let files: Vec<(usize, &str)> = texts.iter().map(|&(i, p, _)| (i, p)).collect();
    let mut out = Vec::new();
    for block in layout(skill_md).blocks {
        let Some((index, path)) = shown_file(skill_md, &block, &files) else {
            continue;
        };
        let Some(&(_, _, content)) = texts.iter().find(|(i, _, _)| *i == index) else {
            continue;
        };
        let body = &skill_md[block.body.clone()];
        let (shown, file) = (lines(body), lines(content));
        let Some(k) = departure(&shown, &file) else {
            continue;
        };
        let line = skill_md[..block.body.start].matches('\n').count() as u32 + 1;
        let what = match shown.get(k) {
            Some(l) => format!("shown: {}", excerpt(l, 0, |_| false)),
            None => format!(
                "shown: {} lines; `{path}` has {} (first extra: {})",
                shown.len(),
                file.len(),
                excerpt(file.get(k).unwrap_or(&""), 0, |_| false)
            ),
        };
        out.push(FileHit {
            file: md_index,
            line: Some(line),
            excerpt: what,
            note: Some(format!("the block shows `{path}`")),
        });
    }
    out
}
