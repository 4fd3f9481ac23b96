//! What one line of code says, read by small rules the patterns cannot
//! express: whether it writes to a path, whether a package or host is a
//! misspelling of a popular one, and how prose splits into paragraphs.

use crate::validate::risk::signals::{POPULAR_PACKAGES, REAL_INDEXES};

/// Whether the line writes to what starts at `at`: after a redirection or
/// `tee`, as the last word of `cp`/`mv`/`install`/`ln`, in a call that
/// opens it for writing, or on a line that edits it in place.
pub fn writes_to(line: &str, at: usize) -> bool {
    let before = line[..at].trim_end_matches(|c: char| {
        c.is_alphanumeric()
            || matches!(
                c,
                '~' | '$' | '{' | '}' | '/' | '.' | '_' | '-' | '"' | '\''
            )
    });
    let before = before.trim_end();
    let word = before
        .rsplit(|c: char| c.is_whitespace() || c == '(')
        .next()
        .unwrap_or("");
    if before.ends_with('>') || matches!(word, "tee" | "-a") {
        return true;
    }
    let first = line.split_whitespace().next().unwrap_or("");
    let first = first.rsplit('/').next().unwrap_or(first);
    let last_word = !line[at..].trim().contains(char::is_whitespace);
    if matches!(first, "cp" | "mv" | "install" | "ln") && last_word {
        return true;
    }
    if matches!(first, "sed" | "perl") && line.contains(" -i") {
        return true;
    }
    const CALLS: &[&str] = &[
        "writeFile",
        "appendFile",
        "Add-Content",
        "Set-Content",
        "Out-File",
        "write_text",
        "write_bytes",
        "createWriteStream",
        "copyfile",
        "copy2",
        "shutil.copy",
    ];
    let opened = line[..at].rfind("open(").is_some_and(|i| {
        let call = &line[i..];
        ["'w", "\"w", "'a", "\"a"].iter().any(|m| call.contains(m))
    });
    opened || CALLS.iter().any(|c| line[..at].contains(c))
}

/// Whether `host` is a cloud metadata service.
pub fn is_metadata(host: &str) -> bool {
    matches!(
        host,
        "169.254.169.254" | "metadata.google.internal" | "fd00:ec2::254"
    )
}

/// Hosts code is fetched from, whose one-letter misspellings are squats.
const FORGES: &[&str] = &[
    "github.com",
    "gitlab.com",
    "pypi.org",
    "npmjs.com",
    "npmjs.org",
    "githubusercontent.com",
    "pythonhosted.org",
    "golang.org",
    "crates.io",
];

/// Whether `host` is one edit away from a forge or index.
pub fn lookalike_of_forge(host: &str) -> bool {
    !FORGES.contains(&host) && FORGES.iter().any(|f| one_edit(host, f))
}

/// The paragraphs of `prose` (lines up to a blank one, joined by spaces,
/// at most 2,000 bytes each), with the offset each starts at.
pub fn paragraphs(prose: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    let mut offset = 0;
    for line in prose.split('\n') {
        let at = offset;
        offset += line.len() + 1;
        if line.trim().is_empty() {
            out.extend(current.take());
            continue;
        }
        match &mut current {
            Some((_, text)) if text.len() < 2000 => {
                text.push(' ');
                text.push_str(line.trim());
            }
            Some(_) => {
                out.extend(current.take());
                current = Some((at, line.trim().to_string()));
            }
            None => current = Some((at, line.trim().to_string())),
        }
    }
    out.extend(current);
    out
}

/// The package on an install line one edit away from a popular one.
pub fn typosquat(line: &str) -> Option<&str> {
    let config = !line.contains(" install") && !line.contains(" add ");
    // In a config, a package is a whole quoted value (`"@scope/name"`, a
    // dependency's key), never a word of a description.
    if config {
        return line
            .split('"')
            .skip(1)
            .step_by(2)
            .filter(|value| !value.contains(char::is_whitespace))
            .map(|value| {
                let value = value.rsplit('/').next().unwrap_or(value);
                value
                    .split(['=', '<', '>', '~', '[', '@'])
                    .next()
                    .unwrap_or("")
            })
            .find(|w| squats(w));
    }
    line.split(|c: char| c.is_whitespace() || c == ',')
        .skip_while(|w| !config && !matches!(*w, "install" | "add" | "i" | "-y" | "npx" | "uvx"))
        .skip(usize::from(!config))
        .map(|w| {
            let w = w.trim_matches(|c| matches!(c, '"' | '\'' | ';' | ')' | '[' | ']'));
            // `@scope/name@1.2`: the name.
            let w = w.rsplit('/').next().unwrap_or(w);
            w.split(['=', '<', '>', '~', '[', '@']).next().unwrap_or("")
        })
        .find(|w| squats(w))
}

/// Whether a config line takes a popular package from a URL that is not
/// its real index nor a code forge (`"lodash": "git+https://forge-cdn.example/lodash.git"`).
pub fn popular_from_elsewhere(line: &str) -> bool {
    use crate::validate::risk::hosts::is_under;
    // Forges, and the CDNs that serve the real packages as modules.
    const HOMES: &[&str] = &[
        "github.com",
        "gitlab.com",
        "codeload.github.com",
        "bitbucket.org",
        "esm.sh",
        "cdn.jsdelivr.net",
        "unpkg.com",
        "deno.land",
        "jsr.io",
        "cdn.skypack.dev",
    ];
    let mut quoted = line.split('"').skip(1).step_by(2);
    let (Some(name), Some(value)) = (quoted.next(), quoted.next()) else {
        return false;
    };
    let name = name.rsplit('/').next().unwrap_or(name).to_ascii_lowercase();
    let Some(rest) = value
        .trim_start_matches("git+")
        .strip_prefix("https://")
        .or_else(|| value.trim_start_matches("git+").strip_prefix("http://"))
    else {
        return false;
    };
    let host = rest
        .split(['/', ':', '#'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    POPULAR_PACKAGES.contains(&name.as_str())
        && !REAL_INDEXES
            .iter()
            .chain(HOMES)
            .any(|real| is_under(&host, real))
}

/// Whether `name` (a package name, no flag) is one edit away from a
/// popular package and not one itself.
fn squats(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    !name.starts_with('-')
        && name.len() >= 4
        && !POPULAR_PACKAGES.contains(&name.as_str())
        && POPULAR_PACKAGES.iter().any(|p| one_edit(&name, p))
}

/// Whether `a` is one insertion, deletion, substitution or swap of two
/// neighbours away from `b`.
pub fn one_edit(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a == b || a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (ra, rb) = (&a[prefix..], &b[prefix..]);
    match ra.len().cmp(&rb.len()) {
        std::cmp::Ordering::Equal => {
            ra[1..] == rb[1..]
                || (ra.len() >= 2 && ra[0] == rb[1] && ra[1] == rb[0] && ra[2..] == rb[2..])
        }
        std::cmp::Ordering::Greater => ra[1..] == *rb,
        std::cmp::Ordering::Less => *ra == rb[1..],
    }
}

#[cfg(test)]
mod tests {
    use super::one_edit;

    #[test]
    fn one_edit_finds_misspellings_only() {
        assert!(one_edit("reqeusts", "requests"));
        assert!(one_edit("requets", "requests"));
        assert!(one_edit("colourama", "colorama"));
        assert!(!one_edit("requests", "requests"));
        assert!(!one_edit("flask", "django"));
    }
}
