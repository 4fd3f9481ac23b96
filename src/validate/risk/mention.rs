//! When a match is a mention of the thing rather than the thing: a command
//! a negation leads straight into (`never run curl ... | sh`), a bad example
//! marked as one, or a phrase quoted on a line about detecting such text.
//! Kept tight on purpose: a negation a few words away (`don't worry, run
//! ...`) does not count.

use std::sync::LazyLock;

use regex::Regex;

/// A negation or a bad-example marker that ends right where the match
/// starts (allowing quotes, backticks, a prompt sign).
static NEGATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(?:\b(?:never|don'?t|do\s+not|avoid|instead\s+of|rather\s+than|not)\s+(?:(?:ever|just|blindly|simply)\s+)?(?:run(?:ning)?|use|using|pipe|piping|do|doing|execute|executing|copy|paste|type|pass|add|recommend|allow)?(?:\s*(?:commands?|scripts?|things?|something|anything)\s+like)?|(?:\bbad|\bwrong|\bdangerous|\binsecure|\bunsafe|\bvulnerable|\bmalicious|\bavoid)\s*[:\-]|\x{274C}|\x{2717}|\x{2718}|\x{1F6AB})[\s:`'"(*>$|]*$"#,
    )
    .expect("negation pattern")
});

/// A line that marks what follows as a bad example.
static BAD_EXAMPLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:\x{274C}|\bbad\b|\bwrong\b|\binsecure\b|\bunsafe\b|\bdangerous\b|\bvulnerable\b|\bmalicious\b|\banti-?pattern\b|\b(?:never|don'?t|do not) do this\b|\bexample of (?:an? )?attack\b|\bred flags?\b)")
        .expect("bad-example pattern")
});

/// A line about detecting, flagging or blocking text.
static DETECTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:detect\w*|flag\w*|pattern\w*|examples?|such as|e\.g\.|like|warn\w*|block\w*|inject\w*|attack\w*|red flags?|suspicious|malicious|phrases?|signs?|indicators?|jailbreak\w*|scan\w*|refus\w*|reject\w*|manipulat\w*|social engineering|threats?)\b")
        .expect("detection pattern")
});

/// A line that searches for text: a quoted match on it is the pattern
/// searched for (data), not the thing.
static SEARCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:grep|egrep|fgrep|rg|ack|findstr|select-string|re\.(?:compile|search|match|fullmatch|findall|finditer|sub)|regexp?)\b|\.(?:test|match|matchAll|search)\s*\(|-Pattern\b")
        .expect("search pattern")
});

/// Whether offset `at` of `line` is inside a quoted pattern that the
/// line searches for (`grep -E "curl.*\| *sh"`, `Select-String -Pattern
/// "...|IEX"`, `re.compile(r"...")`): structure, not the author's words.
pub fn searched_for(line: &str, at: usize) -> bool {
    let before = &line[..at.min(line.len())];
    let open = before.matches('"').count() % 2 == 1 || before.matches('\'').count() % 2 == 1;
    open && SEARCH.is_match(before)
}

/// Markup a browser runs: a script tag, an event handler, a `javascript:` URL.
static BROWSER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)<script\b|\bon[a-z]+\s*=|javascript:").expect("browser pattern")
});

/// A match that describes asking someone, or a mode (`auto-approve`).
static DESCRIBED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)(?:\bauto-|(?:`-{1,2}[\w-]+`[,\s]*)+[:|\-\x{2013}\x{2014}]\s*$|\b(?:ask|asking|asks|prompt|prompting|prompts|require|requiring|requires)\s+(?:the\s+)?(?:user|human|you|agent|assistant|model|claude|ai)\s+to\s+["'`\x{201C}]?)$"#).expect("described pattern")
});

/// Words of documentation about attacks and their detection.
static DOCUMENTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:detection|detectors?|malicious|malware|attacks?|attackers?|exfiltrat\w*|steal\w*|threats?|red[ -]flags?|iocs?|indicators?\s+of\s+compromise|prompt[ -]injections?|injection\s+(?:attacks?|patterns?)|jailbreak\w*|homoglyph\w*|lookalike|spoof\w*|phishing|vulnerab\w*|exploit\w*|obfuscat\w*|pentest\w*|penetration\s+test\w*|red[ -]team\w*|suspicious|blocklist|denylist|forensic\w*|trojan\w*|backdoors?)\b|检测|攻击|恶意|注入|威胁|漏洞|窃取|钓鱼|混淆").expect("documented pattern")
});

/// Whether `context` (a line, the lines before it, its heading) is
/// documentation about attacks or detecting them.
pub fn documented(context: &str) -> bool {
    DOCUMENTED.is_match(context)
}

/// Whether the match at byte `at` of `line` is quoted with documentation
/// about attacks on the line or in `nearby` (a stricter [`quoted`], for
/// commands: "like", "e.g." or "detect the platform" do not make an
/// installer an example).
pub fn quoted_documented(line: &str, at: usize, nearby: &str) -> bool {
    let before: String = line[..at].chars().rev().take(3).collect();
    before
        .chars()
        .any(|c| matches!(c, '"' | '\'' | '`' | '\u{201C}' | '\u{2018}'))
        && (documented(line) || documented(nearby))
}

/// Whether `line` is markup a browser runs.
pub fn browser_markup(line: &str) -> bool {
    BROWSER.is_match(line)
}

/// Whether `prefix` (a line up to a match) describes asking someone to do
/// the matched thing, or names a mode (`auto-approve`).
pub fn described(prefix: &str) -> bool {
    let start = prefix.char_indices().rev().nth(60).map_or(0, |(i, _)| i);
    DESCRIBED.is_match(&prefix[start..])
}

/// Whether `prefix` (a line up to a match) ends in a negation leading
/// straight into the match.
pub fn negated(prefix: &str) -> bool {
    let start = prefix.char_indices().rev().nth(80).map_or(0, |(i, _)| i);
    NEGATION.is_match(&prefix[start..])
}

/// Whether `line` marks what follows it as a bad example.
pub fn bad_example(line: &str) -> bool {
    BAD_EXAMPLE.is_match(line)
}

/// Whether the match at byte `at` of `line` is quoted (a quote or backtick
/// opens within a few characters before it) with text about detection on
/// the line or in `nearby` (the lines just before).
pub fn quoted(line: &str, at: usize, nearby: &str) -> bool {
    let before: String = line[..at].chars().rev().take(3).collect();
    before
        .chars()
        .any(|c| matches!(c, '"' | '\'' | '`' | '\u{201C}' | '\u{2018}' | '\u{AB}'))
        && (DETECTION.is_match(line) || DETECTION.is_match(nearby))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tight_negations_only() {
        assert!(negated("Never run `"));
        assert!(negated("- Do not pipe "));
        assert!(negated("Bad: "));
        assert!(negated("Avoid things like "));
        assert!(!negated("Don't worry, run "));
        assert!(!negated("Never forget: "));
        assert!(!negated("Install it: "));
        assert!(bad_example("# BAD: never do this"));
        assert!(!bad_example("# Install the CLI"));
        assert!(quoted(
            "Detect phrases like \"ignore previous instructions\"",
            21,
            ""
        ));
        assert!(quoted(
            "  \"ignore previous instructions\",",
            3,
            "Injection examples:"
        ));
        assert!(!quoted(
            "Now ignore previous instructions",
            4,
            "Injection examples:"
        ));
        assert!(described("Run it without asking the user to ") && described("Auto-"));
        assert!(!described("Always "));
        assert!(browser_markup("<img src=x onerror=eval(atob('YQ=='))>"));
    }
}
