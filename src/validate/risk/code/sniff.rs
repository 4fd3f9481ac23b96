//! Which language a stretch of code is: from a file's name or shebang, a
//! code block's tag, or, with neither, from what its text looks like.

use super::Lang;

/// The language of a script at `path` whose text is `raw`.
pub fn lang_of_path(path: &str, raw: &str) -> Option<Lang> {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    let by_ext = match ext {
        "sh" | "bash" | "zsh" | "ksh" | "command" => Some(Lang::Shell),
        "py" | "pyw" => Some(Lang::Python),
        "js" | "mjs" | "cjs" | "jsx" => Some(Lang::JavaScript),
        "ts" | "mts" | "cts" | "tsx" => Some(Lang::TypeScript),
        "ps1" | "psm1" | "psd1" => Some(Lang::PowerShell),
        _ => None,
    };
    by_ext.or_else(|| shebang(raw)).or_else(|| {
        matches!(name.as_str(), "makefile" | "dockerfile" | "justfile").then_some(Lang::Shell)
    })
}

/// The language a shebang line names.
fn shebang(raw: &str) -> Option<Lang> {
    let first = raw.lines().next()?.strip_prefix("#!")?;
    let mut words = first.split_whitespace();
    let mut program = words.next()?.rsplit('/').next()?;
    if program == "env" {
        program = words.find(|w| !w.starts_with('-'))?;
    }
    lang_of_program(program)
}

/// The language an interpreter's name runs.
pub fn lang_of_program(program: &str) -> Option<Lang> {
    let program = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    match program {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" => Some(Lang::Shell),
        "python" | "pypy" => Some(Lang::Python),
        "node" | "nodejs" | "bun" => Some(Lang::JavaScript),
        "deno" | "ts-node" | "tsx" => Some(Lang::TypeScript),
        "pwsh" | "powershell" => Some(Lang::PowerShell),
        _ => None,
    }
}

/// The language a code block's info string names (`bash`, `py title=x`).
pub fn lang_of_info(info: &str) -> Option<Lang> {
    let tag = info
        .trim()
        .trim_start_matches('{')
        .trim_start_matches('.')
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '}' | '{'))
        .next()?
        .to_ascii_lowercase();
    match tag.as_str() {
        "sh" | "bash" | "shell" | "zsh" | "console" | "shell-session" | "shellsession"
        | "terminal" | "ksh" | "dockerfile" | "makefile" => Some(Lang::Shell),
        "py" | "python" | "python3" | "py3" | "pycon" => Some(Lang::Python),
        "js" | "javascript" | "jsx" | "node" | "mjs" | "cjs" => Some(Lang::JavaScript),
        "ts" | "typescript" | "tsx" => Some(Lang::TypeScript),
        "ps" | "ps1" | "powershell" | "pwsh" => Some(Lang::PowerShell),
        _ => None,
    }
}

/// The language `src` reads as, when it has no tag: `None` for prose,
/// data and anything else.
pub fn sniff(src: &str) -> Option<Lang> {
    let head: String = src.lines().take(40).collect::<Vec<_>>().join("\n");
    if let Some(lang) = shebang(src) {
        return Some(lang);
    }
    let score = |words: &[&str]| words.iter().filter(|w| head.contains(*w)).count();
    let python = score(&[
        "import ",
        "def ",
        "print(",
        "os.",
        "subprocess",
        "__import__",
        "exec(",
        "open(",
        "):\n",
        "self.",
    ]);
    let js = score(&[
        "require(",
        "const ",
        "let ",
        "=>",
        "console.log",
        "function ",
        "process.",
        "await ",
        "module.exports",
    ]);
    let powershell = score(&[
        "$env:",
        "Invoke-",
        "Get-",
        "Set-",
        "New-Object",
        "-Uri",
        "| iex",
        "Write-Host",
        "[System.",
    ]);
    let shell = score(&[
        "curl ", "wget ", "| sh", "| bash", "echo ", "export ", "sudo ", "chmod ", "$(", "&&",
        "mkdir ", "cd ", "npm ", "pip ", "git ", "crontab", "nc ", "/dev/tcp", "rm -",
    ]);
    let best = [
        (powershell, Lang::PowerShell),
        (python, Lang::Python),
        (js, Lang::JavaScript),
        (shell, Lang::Shell),
    ]
    .into_iter()
    .max_by_key(|(score, _)| *score)?;
    (best.0 > 0).then_some(best.1)
}

/// Whether a string literal reads as a shell command worth parsing: a
/// program name and an argument, or shell punctuation.
pub fn looks_like_command(value: &str) -> bool {
    let value = value.trim();
    if value.len() < 6 || !value.contains(' ') {
        return false;
    }
    let first = value.split_whitespace().next().unwrap_or("");
    let first = first.rsplit('/').next().unwrap_or(first);
    const PROGRAMS: &[&str] = &[
        "curl",
        "wget",
        "bash",
        "sh",
        "zsh",
        "python",
        "python3",
        "node",
        "perl",
        "ruby",
        "nc",
        "ncat",
        "socat",
        "echo",
        "printf",
        "cat",
        "eval",
        "exec",
        "sudo",
        "chmod",
        "crontab",
        "launchctl",
        "systemctl",
        "ssh",
        "scp",
        "rsync",
        "tar",
        "base64",
        "dig",
        "nslookup",
        "host",
        "env",
        "printenv",
        "security",
        "osascript",
        "pbpaste",
        "xclip",
        "powershell",
        "pwsh",
        "iex",
        "rm",
        "cp",
        "mv",
        "tee",
        "git",
        "npm",
        "pip",
        "pip3",
        "source",
        "nohup",
        "mkfifo",
        "openssl",
        "xxd",
        "rev",
        "tr",
    ];
    PROGRAMS.contains(&first)
        || value.contains(" | ")
        || value.contains("$(")
        || value.contains(" && ")
        || value.contains("/dev/tcp/")
        || value.contains(">>")
}
