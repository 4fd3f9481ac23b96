//! One file read as code and as instructions: each code unit in normal
//! form is scanned by the pattern rules again (so `c''url … | bash` is
//! `curl … | bash` to them) and read for capabilities; the string
//! literals and heredocs it holds are read again as the shell commands or
//! payloads they are (bounded in depth); prose is read for what it tells
//! the agent.

use std::sync::LazyLock;

use regex::Regex;

use super::capability::{detect_code, detect_prose, Capability, Evidence, Style};
use super::code::{self, looks_like_command, sniff, Lang, Unit};
use super::decode;
use super::text::{Kind, Text};

/// How many times text found inside code is read again (a command in a
/// string in a heredoc is read; one inside that is not).
pub const MAX_NESTING: u8 = 3;
/// Most nested readings per file.
pub const MAX_NESTED_UNITS: usize = 256;

/// What, on a literal's line, runs it or writes it somewhere.
static RUNS_OR_WRITES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:system|popen|Popen|run|call|check_output|check_call|exec\w*|eval|spawn\w*|execFile\w*|Start-Process|Invoke-Expression|iex|Invoke-Command|ProcessBuilder|Runtime|crontab|echo|printf|write\w*|append\w*|Add-Content|Set-Content|Out-File|tee|sh|bash|zsh|cmd|python\d*|node|perl|ruby|php|pwsh|powershell|deno|bun)\b|>>?|\|")
        .unwrap_or_else(|e| panic!("{e}"))
});

/// A line that only prints or logs text.
static PRINTS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:\w+\s*=\s*)?(?:print|console\.(?:log|error|warn|info)|logger\.\w+|logging\.\w+|Write-(?:Host|Output)|puts)\s*\(")
        .unwrap_or_else(|e| panic!("{e}"))
});

/// A line that searches for text: its literals are the patterns sought.
static SEARCHES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bre\.(?:compile|search|match|findall|finditer|sub)\s*\(|\bRegExp\s*\(|\b(?:grep|egrep|rg|findstr)\b|(?i:select-string|-Pattern\b)")
        .unwrap_or_else(|e| panic!("{e}"))
});

/// JSON and YAML string values (hook commands, settings).
static CONFIG_STRING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#""((?:[^"\\\n]|\\.){6,})"|:\s+([^"'\n#][^\n]{5,})$|<string>([^<]{6,})</string>"#)
        .unwrap_or_else(|e| panic!("{e}"))
});

/// What reading asks of the pattern rules (the engine's): to scan code
/// in normal form, and to file what is found inside one line of the file
/// on that line.
pub trait Patterns {
    /// Scans `normal`, code in normal form whose line `i` comes from the
    /// file's line `lines[i]` (0-based).
    fn scan(&mut self, normal: &Text<'_>, lines: &[u32]);
    /// Starts gathering what is found inside one line of the file.
    fn enter(&mut self);
    /// Files what was gathered since the matching `enter` on `line`
    /// (1-based).
    fn leave(&mut self, line: u32);
    /// Says that part of the file was not read as code, and why.
    fn gave_up(&mut self, why: &str);
}

/// Reads `text` (the file at `path`) as code and instructions: its code
/// in normal form goes to `patterns`, its capabilities to `evidence`.
pub fn read(
    text: &Text<'_>,
    path: &str,
    patterns: &mut dyn Patterns,
    evidence: &mut Vec<Evidence>,
) {
    let mut reader = Reader {
        path,
        patterns,
        evidence,
        units: 0,
    };
    for unit in code::units(text, path) {
        reader.unit(&unit, 0);
    }
    let line_of = |at: usize| text.line_of(at);
    match text.kind {
        Kind::Other if is_package_list(path) => {
            detect_code(path, text.raw, Style::Config, &line_of, reader.evidence)
        }
        Kind::Markdown | Kind::Other => {
            detect_prose(path, text.raw, &line_of, reader.evidence);
            // An HTML comment is hidden from the user, not from the agent:
            // the commands in it (`run: curl ...` too) are read as code.
            for range in &text.layout.comments {
                let commands: String = text.raw[range.clone()]
                    .lines()
                    .map(|l| {
                        l.trim()
                            .trim_start_matches("- ")
                            .trim_start_matches("run:")
                            .trim()
                    })
                    .filter(|l| looks_like_command(l))
                    .map(|l| format!("{l}\n"))
                    .collect();
                if !commands.is_empty() {
                    let line = text.line_of(range.start).saturating_sub(1);
                    reader.nested(Lang::Shell, &commands, line, 1);
                }
            }
        }
        Kind::Config => {
            detect_code(path, text.raw, Style::Config, &line_of, reader.evidence);
            for caps in CONFIG_STRING.captures_iter(text.raw) {
                let Some(m) = caps.get(1).or_else(|| caps.get(2)).or_else(|| caps.get(3)) else {
                    continue;
                };
                let value = code::unescape(m.as_str());
                let line = text.line_of(m.start()).saturating_sub(1);
                reader.text_found(&value, line, 1, true);
            }
            // YAML's block scalars (`run: |` in a CI workflow) hold scripts.
            for (line, block) in block_scalars(text.raw) {
                reader.text_found(&block, line, 1, true);
            }
        }
        // A script in a language with no grammar here (Go, Ruby, Perl,
        // PHP...) is read line by line as it is written: as one program
        // (a path named on one line, read on another), or as shell.
        Kind::Script if reader.units == 0 => {
            // Names bound to literals put in, and literals joined
            // (`"pam_" + "per" + "mit.so"`), lines kept.
            let bound = code::bind_literals(text.raw);
            let joined = code::join_literals(&bound);
            let normal = Text::new(&joined, Kind::Script);
            if joined.as_ref() != text.raw {
                let lines: Vec<u32> = (0..normal.line_of(joined.len())).collect();
                reader.patterns.scan(&normal, &lines);
            }
            let style = if is_program_language(path, text.raw) {
                Style::Program
            } else {
                Style::Shell
            };
            let line_of = |at: usize| normal.line_of(at);
            detect_code(path, normal.raw, style, &line_of, reader.evidence)
        }
        Kind::Script => {}
    }
    for payload in decode::payloads(text) {
        let line = text.line_of(payload.at).saturating_sub(1);
        reader.text_found(&payload.text, line, 1, true);
    }
}

struct Reader<'r> {
    path: &'r str,
    patterns: &'r mut dyn Patterns,
    evidence: &'r mut Vec<Evidence>,
    units: usize,
}

impl Reader<'_> {
    /// Reads one unit of code at `depth`.
    fn unit(&mut self, unit: &Unit<'_>, depth: u8) {
        self.units += 1;
        let Some(rendered) = code::render(unit) else {
            return;
        };
        if rendered.cut {
            self.patterns
                .gave_up("code too intricate to read whole: the rest of it was scanned as written");
        }
        let normal = Text::new(&rendered.text, Kind::Script);
        self.patterns.scan(&normal, &rendered.lines);
        let index = code::LineIndex::new(&rendered);
        let line_of = |at: usize| index.line_of(at) + 1;
        let style = match unit.lang {
            Lang::Shell => Style::Shell,
            _ => Style::Program,
        };
        detect_code(self.path, &rendered.text, style, &line_of, self.evidence);
        if depth >= MAX_NESTING {
            return;
        }
        for literal in &rendered.literals {
            if unit.lang != Lang::Shell {
                let line = literal.line;
                detect_prose(self.path, &literal.value, &|_| line + 1, self.evidence);
            }
            let around = index.line_text(literal.line);
            let runs = RUNS_OR_WRITES.is_match(&around)
                && !PRINTS.is_match(&around)
                && !SEARCHES.is_match(&around);
            self.text_found(&literal.value, literal.line, depth + 1, runs);
        }
        for (lang, literal) in &rendered.embedded {
            match lang.or_else(|| sniff(&literal.value)) {
                Some(lang) => self.nested(lang, &literal.value, literal.line, depth + 1),
                None => {
                    let line = literal.line;
                    detect_code(
                        self.path,
                        &literal.value,
                        Style::Shell,
                        &|_| line + 1,
                        self.evidence,
                    );
                    detect_prose(self.path, &literal.value, &|_| line + 1, self.evidence);
                }
            }
        }
    }

    /// Text found inside code at file line `line` (0-based): a command
    /// in a string, or a payload it encodes.
    /// `runs`: whether the code around it runs or writes it (a command
    /// in `print(...)` is text; in `os.system(...)` it is a command).
    fn text_found(&mut self, value: &str, line: u32, depth: u8, runs: bool) {
        if depth > MAX_NESTING || self.units >= MAX_NESTED_UNITS {
            return;
        }
        if runs && looks_like_command(value) {
            self.nested(Lang::Shell, value, line, depth);
        } else if let Some(lang) = runs.then(|| sniff(value)).flatten() {
            // `python3 -c '...'`, `node -e "..."`.
            self.nested(lang, value, line, depth);
        }
        for (how, decoded) in decode::literal_payloads(value) {
            // Code hidden by rot13 or reversal has no honest reason.
            if matches!(how, "rot13" | "reversed text") {
                self.evidence.push(Evidence {
                    capability: Capability::DecodeEval,
                    file: self.path.to_string(),
                    line: line + 1,
                    excerpt: super::text::excerpt(&format!("{how}: {decoded}"), 0, |_| false),
                    hosts: Vec::new(),
                });
            }
            let lang = sniff(&decoded).unwrap_or(Lang::Shell);
            self.nested(lang, &decoded, line, depth);
            detect_prose(self.path, &decoded, &|_| line + 1, self.evidence);
        }
    }

    /// Reads `src`, found at file line `line`, as a unit of `lang`, every
    /// line of it placed on that line.
    fn nested(&mut self, lang: Lang, src: &str, line: u32, depth: u8) {
        if self.units >= MAX_NESTED_UNITS {
            return;
        }
        let before = self.evidence.len();
        let unit = Unit {
            lang,
            src,
            first_line: 0,
        };
        // Found inside one line of the file: every finding is on it.
        self.patterns.enter();
        self.unit(&unit, depth);
        self.patterns.leave(line + 1);
        for e in &mut self.evidence[before..] {
            e.line = line + 1;
        }
    }
}

/// The block scalars of a YAML text (`key: |` and the lines indented
/// under it), each dedented, with the 0-based line of its key.
fn block_scalars(raw: &str) -> Vec<(u32, String)> {
    const MAX_BLOCKS: usize = 64;
    let lines: Vec<&str> = raw.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() && out.len() < MAX_BLOCKS {
        let head = lines[i].trim_end();
        let opens = head
            .rsplit_once(':')
            .is_some_and(|(_, tail)| matches!(tail.trim(), "|" | ">" | "|-" | ">-" | "|+" | ">+"));
        if !opens {
            i += 1;
            continue;
        }
        let key_indent = head.len() - head.trim_start().len();
        let body: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > key_indent)
            .copied()
            .collect();
        let indent = body
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.len() - l.trim_start().len())
            .min()
            .unwrap_or(0);
        let block: String = body
            .iter()
            .map(|l| l.get(indent..).unwrap_or("").to_string() + "\n")
            .collect();
        if !block.trim().is_empty() {
            out.push((i as u32, block));
        }
        i += 1 + body.len();
    }
    out
}

/// Whether `path` is a package list (`requirements.txt`, `constraints.txt`,
/// `pip.conf`, `.npmrc`...), read as configuration.
fn is_package_list(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    (name.starts_with("requirements") || name.starts_with("constraints")) && name.ends_with(".txt")
        || matches!(
            name.as_str(),
            "pip.conf" | ".npmrc" | ".yarnrc" | "pipfile" | "go.mod"
        )
}

/// Whether the file at `path` (whose text is `raw`) is in a programming
/// language with no grammar here (not shell): its lines are one
/// program's. Known by the file name's extension, else by its `#!` line.
fn is_program_language(path: &str, raw: &str) -> bool {
    const PROGRAMS: &[&str] = &[
        "go", "rb", "pl", "pm", "php", "lua", "rs", "java", "kt", "swift", "cs", "scala", "r",
        "jl", "dart", "ex", "exs", "c", "cc", "cpp", "h", "hpp", "groovy", "tcl",
    ];
    const INTERPRETERS: &[&str] = &["ruby", "perl", "php", "lua", "tclsh", "groovy", "Rscript"];
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((_, ext)) => PROGRAMS.contains(&ext.to_ascii_lowercase().as_str()),
        None => raw.lines().next().is_some_and(|first| {
            first.starts_with("#!")
                && first
                    .split(['/', ' '])
                    .any(|word| INTERPRETERS.iter().any(|i| word.trim() == *i))
        }),
    }
}
