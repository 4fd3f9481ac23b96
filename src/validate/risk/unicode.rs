//! Character classes the rules need and `std` does not name: invisible
//! (format) characters, Latin lookalikes from other scripts, right-to-left
//! letters and emoji. Small hand-kept tables, checked by the tests.

/// What kind of invisible character `c` is, if it is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invisible {
    /// Unicode tag characters (U+E0000-E007F): each mirrors an ASCII one.
    Tag,
    /// Bidi embeddings, overrides and isolates (U+202A-202E, U+2066-2069).
    BidiControl,
    /// Directional marks (LRM, RLM, ALM).
    BidiMark,
    /// Zero-width joiner and non-joiner (U+200C, U+200D).
    Joiner,
    /// Variation selectors (U+FE00-FE0F; the supplement U+E0100-E01EF).
    Selector,
    /// The soft hyphen (U+00AD).
    SoftHyphen,
    /// A byte order mark (U+FEFF).
    ByteOrderMark,
    /// Zero-width spaces, word joiners, invisible operators, Hangul fillers
    /// and every other format character.
    ZeroWidth,
}

/// The kind of invisible character `c` is, or `None` for a visible one
/// (whitespace and controls are not "invisible" here: they are handled as
/// whitespace and escaped in excerpts).
pub fn invisible(c: char) -> Option<Invisible> {
    use Invisible::*;
    // Most text is below the first entry, or between the Hangul filler and
    // the variation selectors (CJK): no table to read.
    if matches!(c as u32, 0..0xAD | 0x3165..0xFE00) {
        return None;
    }
    let kind = match c as u32 {
        0xE0000..=0xE007F => Tag,
        0x202A..=0x202E | 0x2066..=0x2069 => BidiControl,
        0x200E | 0x200F | 0x061C => BidiMark,
        0x200C | 0x200D => Joiner,
        0xFE00..=0xFE0F | 0xE0100..=0xE01EF => Selector,
        0x00AD => SoftHyphen,
        0xFEFF => ByteOrderMark,
        0x200B | 0x2060..=0x2064 | 0x206A..=0x206F | 0x180E | 0x034F => ZeroWidth,
        // Hangul fillers: letters that render as nothing.
        0x115F | 0x1160 | 0x3164 | 0xFFA0 => ZeroWidth,
        // The remaining format (Cf) characters.
        0x0600..=0x0605 | 0x06DD | 0x070F | 0x0890 | 0x0891 | 0x08E2 => ZeroWidth,
        0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F => ZeroWidth,
        0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A => ZeroWidth,
        _ => return None,
    };
    Some(kind)
}

/// The ASCII character a Unicode tag character mirrors (U+E0041 is `A`).
pub fn tag_ascii(c: char) -> Option<char> {
    match c as u32 {
        v @ 0xE0020..=0xE007E => char::from_u32(v - 0xE0000),
        _ => None,
    }
}

/// The Latin letter a Cyrillic, Greek or Armenian letter is drawn like,
/// for the letters that are indistinguishable in common fonts.
pub fn latin_lookalike(c: char) -> Option<char> {
    let latin = match c {
        // Cyrillic, lower case.
        'а' => 'a',
        'е' => 'e',
        'о' => 'o',
        'р' => 'p',
        'с' => 'c',
        'у' => 'y',
        'х' => 'x',
        'ѕ' => 's',
        'і' => 'i',
        'ј' => 'j',
        'ԁ' => 'd',
        'ԛ' => 'q',
        'ԝ' => 'w',
        'һ' => 'h',
        'ӏ' => 'l',
        'к' => 'k',
        // Cyrillic, upper case.
        'А' => 'A',
        'В' => 'B',
        'Е' => 'E',
        'К' => 'K',
        'М' => 'M',
        'Н' => 'H',
        'О' => 'O',
        'Р' => 'P',
        'С' => 'C',
        'Т' => 'T',
        'Х' => 'X',
        'У' => 'Y',
        'Ѕ' => 'S',
        'І' => 'I',
        'Ј' => 'J',
        'Ү' => 'Y',
        'Ԛ' => 'Q',
        'Ԝ' => 'W',
        // Greek, lower case.
        'α' => 'a',
        'ο' => 'o',
        'ν' => 'v',
        'ι' => 'i',
        'κ' => 'k',
        'ρ' => 'p',
        'υ' => 'u',
        // Greek, upper case.
        'Α' => 'A',
        'Β' => 'B',
        'Ε' => 'E',
        'Ζ' => 'Z',
        'Η' => 'H',
        'Ι' => 'I',
        'Κ' => 'K',
        'Μ' => 'M',
        'Ν' => 'N',
        'Ο' => 'O',
        'Ρ' => 'P',
        'Τ' => 'T',
        'Υ' => 'Y',
        'Χ' => 'X',
        // Armenian.
        'օ' => 'o',
        'ս' => 'u',
        'հ' => 'h',
        'ո' => 'n',
        _ => return None,
    };
    Some(latin)
}

/// Whether `c` is a letter of a right-to-left script (Hebrew, Arabic,
/// Syriac, Thaana, N'Ko and their presentation forms).
pub fn is_rtl(c: char) -> bool {
    matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFC | 0x10800..=0x10FFF | 0x1E800..=0x1EFFF)
}

/// Whether `c` is drawn as a pictograph or symbol (emoji and the symbol
/// blocks joiners and selectors legitimately follow).
pub fn is_symbol(c: char) -> bool {
    matches!(c as u32, 0x2100..=0x2BFF | 0x3000..=0x303F | 0x1F000..=0x1FAFF)
}

/// Whether a joiner between `before` and `after` is how the script or an
/// emoji sequence is written (Persian, Indic scripts and emoji need them).
pub fn joiner_is_native(before: Option<char>, after: Option<char>) -> bool {
    let native = |c: Option<char>| {
        c.is_some_and(|c| {
            is_symbol(c)
                || (c.is_alphabetic() && !c.is_ascii() && latin_lookalike(c).is_none())
                || invisible(c) == Some(Invisible::Selector)
        })
    };
    native(before) || native(after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables() {
        assert_eq!(invisible('\u{200B}'), Some(Invisible::ZeroWidth));
        assert_eq!(invisible('\u{E0041}'), Some(Invisible::Tag));
        assert_eq!(tag_ascii('\u{E0041}'), Some('A'));
        assert_eq!(invisible('a'), None);
        assert_eq!(invisible(' '), None);
        assert_eq!(latin_lookalike('с'), Some('c'));
        assert_eq!(latin_lookalike('ж'), None);
        assert!(is_rtl('ש') && !is_rtl('a'));
        assert!(joiner_is_native(Some('👨'), Some('👩')));
        assert!(!joiner_is_native(Some('c'), Some('u')));
    }
}
