//! A file downloaded and then made executable or run (in one script or
//! code block), and URLs that name a raw public IP address.

use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

use super::hit::{Context, Hit};
use super::hosts;
use super::markdown::unquoted;
use super::text::Text;

/// Downloads that write a file.
static DOWNLOAD: LazyLock<Regex> = LazyLock::new(|| {
    RegexBuilder::new(r"\b(?:curl|wget|urlretrieve)\b|(?i:\binvoke-webrequest\b|\biwr\b|\bstart-bitstransfer\b|\bcertutil\b[^\n]*-urlcache|\bbitsadmin\b[^\n]*/transfer)")
        .unicode(false)
        .build()
        .expect("download pattern")
});

/// URLs whose host starts like an address.
static IP_URL: LazyLock<Regex> = LazyLock::new(|| {
    RegexBuilder::new(
        r"(?i:\b(?:https?|ftp|wss?|tcp)://)(?:[^\s/@]*@)?(\[[0-9a-fA-F:.]+\]|[0-9][0-9a-fA-FxX.]*)",
    )
    .unicode(false)
    .build()
    .expect("ip url pattern")
});

/// Downloads looked at per text, and lines after each searched for a run.
const MAX_DOWNLOADS: usize = 64;
const LOOK_AHEAD_LINES: usize = 200;

/// The file a download command line writes, and the URL it fetches.
fn output_of(line: &str) -> Option<(String, String)> {
    let tokens: Vec<&str> = line
        .split_whitespace()
        .map(|t| t.trim_matches(|c| matches!(c, '"' | '\'' | '`' | '(' | ')' | ';' | ',')))
        .collect();
    let url = tokens.iter().find(|t| t.contains("://"))?.to_string();
    let remote_name = || {
        url.split(['?', '#'])
            .next()
            .unwrap_or("")
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_string()
    };
    let curl = tokens.contains(&"curl");
    let wget = tokens.contains(&"wget");
    let mut name = None;
    for (i, t) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1).map(|s| s.to_string());
        let flags = t.strip_prefix('-').filter(|f| !f.starts_with('-'));
        match *t {
            "--output" | "--output-document" | "-OutFile" | "-outfile" | "-Destination"
            | "-destination" | ">" => name = next,
            _ if t.starts_with("--output-document=") => {
                name = t.split_once('=').map(|(_, v)| v.to_string())
            }
            _ if curl && flags.is_some_and(|f| f.ends_with('o')) => name = next,
            _ if curl && flags.is_some_and(|f| f.contains('O')) || *t == "--remote-name" => {
                name = Some(remote_name())
            }
            _ if wget && flags.is_some_and(|f| f.ends_with('O')) => name = next,
            _ if wget && flags.is_some_and(|f| f.contains('O')) => {
                name = t.split_once('O').map(|(_, v)| v.to_string())
            }
            _ => {}
        }
    }
    if name.is_none() && wget {
        name = Some(remote_name());
    }
    // Windows' own downloaders name the file after the URL
    // (`certutil -urlcache -split -f URL FILE`, `bitsadmin /transfer j URL FILE`).
    let lower = line.to_ascii_lowercase();
    if name.is_none() && (lower.contains("certutil") || lower.contains("bitsadmin")) {
        let at = tokens.iter().position(|t| t.contains("://"))?;
        name = tokens
            .get(at + 1)
            .filter(|t| !t.starts_with(['>', '-', '/']) || t.contains(['\\', '.']))
            .map(|t| t.to_string());
    }
    if line.contains("urlretrieve") {
        name = line.rsplit(',').next().map(|s| {
            s.trim_matches(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ')'))
                .to_string()
        });
    }
    let name = name?;
    let base = name.rsplit(['/', '\\']).next().unwrap_or("").to_string();
    // A name held in a variable (`-o "$tmp"`) is matched as written.
    let base = if base.contains('$') { name } else { base };
    // A name computed by a command (`$(date ...)`) cannot be followed.
    if base.contains("$(") || base.contains('`') {
        return None;
    }
    (!base.is_empty() && base != "-" && base != "null").then_some((base, url))
}

/// Whether `line` makes `name` executable or runs it.
fn runs(line: &str, name: &str) -> bool {
    let line = unquoted(line);
    // cmd's `if exist F start "" /b F`: what runs is after the test.
    let line = match (line.starts_with("if "), line.find(" start ")) {
        (true, Some(at)) => &line[at + 1..],
        _ => line,
    };
    if !line.contains(name) {
        return false;
    }
    if line.contains("chmod")
        && (line.contains("+x")
            || line.split_whitespace().any(|t| {
                t.len() >= 3
                    && t.bytes().all(|b| b.is_ascii_digit())
                    && t.bytes().rev().take(3).any(|b| (b - b'0') & 1 == 1)
            }))
    {
        return true;
    }
    // (`&` is PowerShell's call operator; `start /b` and `start ""` cmd's.)
    let words: Vec<&str> = line
        .split_whitespace()
        .skip_while(|w| matches!(*w, "sudo" | "exec" | "nohup" | "&" | "-E"))
        .collect();
    let words: Vec<&str> = match words.first() {
        Some(&"start") | Some(&"START") => words
            .into_iter()
            .skip(1)
            .skip_while(|w| w.starts_with('/') || *w == "\"\"")
            .collect(),
        _ => words,
    };
    let is_name = |w: &str| {
        let w = w.trim_matches(|c| matches!(c, '"' | '\'' | ';' | '`' | ')'));
        w == name || w.ends_with(&format!("/{name}")) || w.ends_with(&format!("\\{name}"))
    };
    match words.as_slice() {
        [first, ..] if is_name(first) => true,
        // A package installer handed the file, wherever in its arguments
        // (`msiexec /q /i x.msi`, `code --install-extension x.vsix`).
        // (Not a constraints file: `pip install -c c.txt x` installs x.)
        [installer, rest @ ..]
            if installs(installer, rest)
                && rest.iter().enumerate().any(|(k, w)| {
                    is_name(w) && !(k > 0 && matches!(rest[k - 1], "-c" | "--constraint"))
                }) =>
        {
            true
        }
        [runner, second, ..] => {
            let runner = runner.rsplit('/').next().unwrap_or(runner);
            matches!(
                runner,
                "bash"
                    | "sh"
                    | "zsh"
                    | "source"
                    | "."
                    | "python"
                    | "python3"
                    | "node"
                    | "perl"
                    | "ruby"
                    | "pwsh"
                    | "powershell"
                    | "Start-Process"
                    | "open"
            ) && is_name(second)
        }
        _ => false,
    }
}

/// Whether `program` with `args` installs a package file it is given
/// (not `dpkg -c`, `rpm -qpl`: those list what a package holds).
fn installs(program: &str, args: &[&str]) -> bool {
    let program = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let program = program.strip_suffix(".exe").unwrap_or(program);
    let flag = |pred: &dyn Fn(&str) -> bool| {
        args.iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && pred(&a[1..]))
    };
    match program.to_ascii_lowercase().as_str() {
        "msiexec" | "installer" | "add-appxpackage" | "add-apppackage" | "hdiutil" => true,
        "dpkg" => flag(&|f| f.contains('i')) || args.contains(&"--install"),
        "rpm" => flag(&|f| (f.contains('i') || f.contains('U')) && !f.contains('q')),
        "code" | "code-insiders" | "codium" | "cursor" | "windsurf" => {
            args.contains(&"--install-extension")
        }
        "pip" | "pip3" | "npm" | "pnpm" | "yarn" | "gem" | "apt" | "apt-get" | "dnf" | "yum" => {
            args.iter()
                .any(|a| matches!(*a, "install" | "i" | "add" | "localinstall"))
        }
        _ => false,
    }
}

/// Downloads made executable or run later in the same script or block.
pub fn download_then_run(text: &Text<'_>, context: &Context<'_>) -> Vec<Hit> {
    let mut out = Vec::new();
    let mut seen_lines = Vec::new();
    for m in DOWNLOAD.find_iter(text.norm.as_bytes()).take(MAX_DOWNLOADS) {
        let at = text.to_raw(m.start());
        let line = text.line_at(at);
        if seen_lines.contains(&line.start) || !text.in_code(at) {
            continue;
        }
        seen_lines.push(line.start);
        let Some((name, url)) = output_of(unquoted(&text.raw[line.clone()])) else {
            continue;
        };
        let segment = text.segment(at);
        let after = text.raw[line.end.min(segment.end)..segment.end]
            .lines()
            .take(LOOK_AHEAD_LINES);
        let same_line_rest = text.raw[line.clone()]
            .split("&&")
            .skip(1)
            .any(|part| runs(part, &name));
        let ran = same_line_rest
            || after
                .clone()
                .any(|l| l.split("&&").any(|part| runs(part, &name)));
        if !ran {
            continue;
        }
        let target = hosts::target(&url, context.owner);
        out.push(
            Hit {
                host: target.map(|t| t.kind),
                ..Hit::at(at)
            }
            .note(format!("`{name}` is made executable or run after")),
        );
    }
    out
}

/// URLs whose host is a public IP address.
pub fn raw_ip_urls(text: &Text<'_>, _: &Context<'_>) -> Vec<Hit> {
    let mut out = Vec::new();
    for caps in IP_URL.captures_iter(text.norm.as_bytes()) {
        let host = String::from_utf8_lossy(&caps[1]);
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim_end_matches('.');
        if hosts::ip_is_local(host) == Some(false) {
            out.push(Hit::at(text.to_raw(caps.get(0).map_or(0, |m| m.start()))));
        }
    }
    out
}
