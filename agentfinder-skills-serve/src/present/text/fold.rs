//! Where the untrusted-content envelope's markers are, however they are
//! written (pure): a text is matched in a folded view of it, each folded
//! letter remembering where it came from, so what is cut is the text as
//! it was written.
//!
//! The folded view of a character is its compatibility decomposition
//! (NFKD: full-width `Ｅ`, circled `Ⓔ`, mathematical `𝐄` and ligatures
//! become their plain letters), look-alike letters of other scripts as the
//! Latin letter they pass for (Cyrillic `е`, Greek `ο`, small capitals
//! `ᴇ`, ...), lowercase, without combining marks (`ë` is `e`; a mark
//! inside a word does not split it). A run of `%XX` escapes is read as
//! the UTF-8 it encodes, so a marker in a URL (`END%20OF%20UNTRUSTED...`,
//! `%D0%B5nd...`) is found too; an anchor slug (`#end-of-untrusted-...`)
//! is words between separators, as any text.

use unicode_general_category::{get_general_category, GeneralCategory};
use unicode_normalization::char::decompose_compatible;

/// A word of the folded view: where it is in the text (bytes) and its
/// folded letters, each as the letter it reads as and another it can
/// read as (the same one but for a few look-alikes: Greek `ν` is `v`,
/// and `n` as the lowercase of `Ν`, as a slug writes it).
#[derive(Debug, PartialEq)]
pub(super) struct Word {
    pub start: usize,
    pub end: usize,
    pub folded: Vec<(char, char)>,
}

/// A character of the text as written (a `%XX` run decoded), with the
/// bytes of the text it stands for.
struct Unit {
    c: char,
    start: usize,
    end: usize,
}

/// The text's characters, `%XX` escapes of UTF-8 decoded.
fn units(text: &str) -> Vec<Unit> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    while at < text.len() {
        if let Some((c, end)) = escaped_char(bytes, at) {
            out.push(Unit { c, start: at, end });
            at = end;
            continue;
        }
        // `at` is on a character boundary: every step is a whole
        // character or a run of ASCII escapes.
        let Some(c) = text[at..].chars().next() else {
            break;
        };
        let end = at + c.len_utf8();
        out.push(Unit { c, start: at, end });
        at = end;
    }
    out
}

/// The byte a `%XX` escape at `at` stands for.
fn escape(bytes: &[u8], at: usize) -> Option<u8> {
    let hex = |b: u8| (b as char).to_digit(16);
    match bytes.get(at..at + 3) {
        Some([b'%', high, low]) => Some((hex(*high)? * 16 + hex(*low)?) as u8),
        _ => None,
    }
}

/// The character a run of `%XX` escapes at `at` encodes (UTF-8), and the
/// end of its escapes.
fn escaped_char(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let first = escape(bytes, at)?;
    let len = match first {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    let mut encoded = [first, 0, 0, 0];
    for (n, slot) in encoded.iter_mut().enumerate().take(len).skip(1) {
        *slot = escape(bytes, at + 3 * n)?;
    }
    let c = std::str::from_utf8(&encoded[..len]).ok()?.chars().next()?;
    Some((c, at + 3 * len))
}

/// The Latin letter a letter of another script (or a Latin letter with
/// no decomposition) passes for, and another it can pass for: the
/// letter its capital passes for, when a slug wrote it lowercase (Greek
/// `ν` reads `v`, but is the `Ν` of `N`), or in italics. Case matters
/// (Greek `Η` passes for `h`, `η` for `n`). `I` and `1` pass for `l` too.
fn look_alike(c: char) -> Option<(char, char)> {
    let two = match c {
        'н' => ('h', 'n'),
        'и' => ('u', 'n'),
        'і' | 'ι' => ('i', 'l'),
        'І' | 'Ι' | 'I' | '1' => ('l', 'i'),
        'ν' => ('v', 'n'),
        'η' => ('n', 'h'),
        'υ' => ('u', 'y'),
        'μ' => ('u', 'm'),
        'τ' => ('t', 't'),
        _ => return look_alike_one(c).map(|l| (l, l)),
    };
    Some(two)
}

/// The one Latin letter `c` passes for (see [`look_alike`]).
fn look_alike_one(c: char) -> Option<char> {
    Some(match c {
        // Cyrillic.
        'А' | 'а' | 'Ӑ' | 'ӑ' => 'a',
        'В' | 'в' | 'Ь' | 'ь' => 'b',
        'С' | 'с' => 'c',
        'Ԁ' | 'ԁ' => 'd',
        'Е' | 'е' | 'Ё' | 'ё' | 'Є' | 'є' => 'e',
        'Һ' | 'һ' | 'Н' => 'h',
        'Ӏ' | 'ӏ' => 'l',
        'Ј' | 'ј' => 'j',
        'К' | 'к' => 'k',
        'М' | 'м' => 'm',
        'П' | 'п' => 'n',
        'О' | 'о' => 'o',
        'Р' | 'р' => 'p',
        'Ԛ' | 'ԛ' => 'q',
        'г' => 'r',
        'Ѕ' | 'ѕ' => 's',
        'Т' | 'т' => 't',
        'Џ' | 'џ' => 'u',
        'Ѵ' | 'ѵ' => 'v',
        'Ԝ' | 'ԝ' | 'Ѡ' | 'ѡ' => 'w',
        'Х' | 'х' => 'x',
        'У' | 'у' | 'Ү' | 'ү' => 'y',
        // Greek.
        'Α' | 'α' => 'a',
        'Β' | 'β' => 'b',
        'Ϲ' | 'ϲ' => 'c',
        'Ε' | 'ε' => 'e',
        'Η' => 'h',
        'ϳ' => 'j',
        'Κ' | 'κ' => 'k',
        'Μ' => 'm',
        'Ν' => 'n',
        'Ο' | 'ο' | 'σ' => 'o',
        'Ρ' | 'ρ' => 'p',
        'Τ' => 't',
        'ω' => 'w',
        'Χ' | 'χ' => 'x',
        'Υ' | 'γ' => 'y',
        'Ζ' => 'z',
        // Armenian.
        'օ' => 'o',
        'ս' => 'u',
        'ո' => 'n',
        'հ' => 'h',
        // Cherokee capitals.
        'Ꭺ' => 'a',
        'Ᏼ' => 'b',
        'Ꮯ' => 'c',
        'Ꭰ' => 'd',
        'Ꭼ' => 'e',
        'Ꮋ' => 'h',
        'Ꮶ' => 'k',
        'Ꮮ' => 'l',
        'Ꮇ' => 'm',
        'Ꮲ' => 'p',
        'Ꮪ' => 's',
        'Ꭲ' => 't',
        'Ꮩ' => 'v',
        'Ꮃ' => 'w',
        'Ꮓ' => 'z',
        // Latin letters without a decomposition, small capitals.
        'ı' | 'ɩ' | 'ɪ' => 'i',
        'ȷ' | 'ᴊ' => 'j',
        'ɑ' | 'ᴀ' => 'a',
        'ʙ' => 'b',
        'ᴄ' => 'c',
        'đ' | 'ᴅ' => 'd',
        'ᴇ' => 'e',
        'ɡ' | 'ɢ' => 'g',
        'ħ' | 'ʜ' => 'h',
        'ᴋ' => 'k',
        'ł' | 'ƚ' | 'ʟ' => 'l',
        'ᴍ' => 'm',
        'ɴ' => 'n',
        'ᴏ' | '0' => 'o',
        'ᴘ' => 'p',
        'ʀ' => 'r',
        'ꜱ' => 's',
        'ᴛ' => 't',
        'ᴜ' => 'u',
        'ᴠ' => 'v',
        'ᴡ' => 'w',
        'ʏ' => 'y',
        'ᴢ' => 'z',
        _ => return None,
    })
}

fn is_mark(c: char) -> bool {
    !c.is_ascii()
        && matches!(
            get_general_category(c),
            GeneralCategory::NonspacingMark
                | GeneralCategory::SpacingMark
                | GeneralCategory::EnclosingMark
        )
}

/// `c` folded (see the module documentation), into `out`.
fn fold_into(c: char, out: &mut Vec<(char, char)>) {
    // ASCII, most text: its letters lowercase, or a look-alike's.
    if c.is_ascii() {
        out.push(look_alike(c).unwrap_or_else(|| {
            let lower = c.to_ascii_lowercase();
            (lower, lower)
        }));
        return;
    }
    let mut push = |d: char| match look_alike(d) {
        Some(latin) => out.push(latin),
        None => {
            for lower in d.to_lowercase() {
                if !is_mark(lower) {
                    out.push((lower, lower));
                }
            }
        }
    };
    match look_alike(c) {
        Some(latin) => out.push(latin),
        None => decompose_compatible(c, |d| {
            // A decomposition may itself hold a look-alike (`Ӑ` is `А`
            // and a breve).
            if !is_mark(d) {
                push(d)
            }
        }),
    }
}

/// The words of `text` in its folded view: runs of letters and digits
/// (combining marks inside a run do not end it), each with the bytes of
/// `text` it spans.
pub(super) fn words(text: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut current: Option<Word> = None;
    let mut folded = Vec::new();
    for unit in units(text) {
        folded.clear();
        fold_into(unit.c, &mut folded);
        if folded.is_empty() && is_mark(unit.c) {
            // A mark on its own: part of the word it sits in.
            if let Some(word) = current.as_mut() {
                word.end = unit.end;
            }
            continue;
        }
        for &f in &folded {
            if f.0.is_alphanumeric() {
                let word = current.get_or_insert_with(|| Word {
                    start: unit.start,
                    end: unit.end,
                    folded: Vec::new(),
                });
                word.end = unit.end;
                word.folded.push(f);
            } else if let Some(word) = current.take() {
                words.push(word);
            }
        }
        if folded.is_empty() {
            if let Some(word) = current.take() {
                words.push(word);
            }
        }
    }
    words.extend(current);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `word` reads as `part`, letter by letter, either way.
    fn reads(word: &Word, part: &str) -> bool {
        word.folded.len() == part.chars().count()
            && part
                .chars()
                .zip(&word.folded)
                .all(|(want, (one, other))| want == *one || want == *other)
    }

    fn folded(text: &str) -> Vec<String> {
        words(text)
            .into_iter()
            .map(|w| w.folded.iter().map(|f| f.0).collect())
            .collect()
    }

    #[test]
    fn look_alikes_full_width_and_marks_fold_to_plain_words() {
        assert_eq!(folded("ЕND оf"), ["end", "of"]);
        assert_eq!(folded("ＥＮＤ　ＯＦ"), ["end", "of"]);
        assert_eq!(folded("𝐄𝐍𝐃 ⓔⓝⓓ ᴇɴᴅ"), ["end", "end", "end"]);
        assert_eq!(folded("e\u{301}nd ün"), ["end", "un"]);
        assert_eq!(folded("ΕΧΤΕRΝΑL ΟF"), ["external", "of"]);
        assert_eq!(folded("EXTERNAl c0ntent"), ["external", "content"]);
        // A capital's look-alike, lowercase (as a slug writes it), reads
        // both ways.
        let slug = words("co\u{3bd}\u{3c4}ent");
        assert!(reads(&slug[0], "content") && reads(&slug[0], "covtent"));
        assert!(reads(&words("EXTERNAI")[0], "external"));
    }

    #[test]
    fn escapes_are_read_as_what_they_encode_and_spans_are_the_texts() {
        let text = "x/END%20OF%20%D0%B5nd/y%zz%";
        let found = words(text);
        let spans: Vec<&str> = found.iter().map(|w| &text[w.start..w.end]).collect();
        assert_eq!(spans, ["x", "END", "OF", "%D0%B5nd", "y", "zz"]);
        assert!(reads(&found[3], "end"));
        // Not UTF-8, or cut short: the characters as written.
        assert_eq!(folded("%FFab %E2%82"), ["ffab", "e2", "82"]);
    }
}
