//! Files whose logic cannot be read: native executables and libraries,
//! bytecode (with or without its source beside it), and encrypted
//! archives. Told by their first bytes (and the extension for bytecode),
//! never by the extension alone: a `.so` that is text is text.

use super::hit::FileHit;
use super::SkillFile;

/// What a binary file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binary {
    /// ELF, Mach-O, PE, or a static library archive.
    Native(&'static str),
    /// Python, Java or WebAssembly bytecode.
    Bytecode(&'static str),
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// What `file` is, if it is compiled code.
pub fn kind(file: &SkillFile<'_>) -> Option<Binary> {
    let b = file.bytes;
    let ext = file
        .path
        .rsplit_once('.')
        .map_or("", |(_, e)| e)
        .to_ascii_lowercase();
    if b.starts_with(b"\x7fELF") {
        return Some(Binary::Native("ELF"));
    }
    if matches!(
        be32(b, 0),
        Some(0xFEEDFACE | 0xFEEDFACF | 0xCEFAEDFE | 0xCFFAEDFE)
    ) {
        return Some(Binary::Native("Mach-O"));
    }
    if be32(b, 0) == Some(0xCAFEBABE) {
        // Fat Mach-O counts architectures (few); a class file's next word
        // is its version (45 and up).
        return Some(if be32(b, 4).is_some_and(|n| n < 30) {
            Binary::Native("Mach-O universal")
        } else {
            Binary::Bytecode("Java class")
        });
    }
    if b.starts_with(b"MZ") {
        let pe = le32(b, 0x3C).map(|o| o as usize);
        if pe.is_some_and(|o| b.get(o..o + 4) == Some(b"PE\0\0")) {
            return Some(Binary::Native("PE"));
        }
    }
    if b.starts_with(b"!<arch>\n") && matches!(ext.as_str(), "a" | "lib") {
        return Some(Binary::Native("static library"));
    }
    if b.starts_with(b"\0asm") {
        return Some(Binary::Bytecode("WebAssembly"));
    }
    if matches!(ext.as_str(), "pyc" | "pyo") && b.get(2..4) == Some(b"\r\n") {
        return Some(Binary::Bytecode("Python bytecode"));
    }
    if matches!(ext.as_str(), "jar" | "war") && b.starts_with(b"PK\x03\x04") {
        return Some(Binary::Bytecode("Java archive"));
    }
    None
}

/// The stem a source file of bytecode at `path` would have, and the
/// source extensions it could have.
fn source_of(path: &str) -> Option<(String, &'static [&'static str])> {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let (stem, ext) = name.rsplit_once('.')?;
    match ext.to_ascii_lowercase().as_str() {
        "pyc" | "pyo" => {
            // __pycache__/mod.cpython-312.pyc is mod.py's, one folder up.
            let stem = stem.split('.').next().unwrap_or(stem);
            let dir = dir
                .strip_suffix("__pycache__")
                .map_or(dir, |d| d.trim_end_matches('/'));
            Some((join(dir, stem), &["py"]))
        }
        "class" => Some((
            stem.split('$').next().unwrap_or(stem).to_string(),
            &["java", "kt", "scala"],
        )),
        "wasm" => Some((
            join(dir, stem),
            &["wat", "rs", "c", "cpp", "go", "zig", "ts", "js"],
        )),
        _ => None,
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Whether the skill ships the source of the bytecode at `path`.
fn has_source(path: &str, files: &[SkillFile<'_>]) -> bool {
    let Some((stem, exts)) = source_of(path) else {
        return false;
    };
    let by_name = !stem.contains('/') && path.ends_with(".class");
    files.iter().any(|f| {
        let Some((p, e)) = f.path.rsplit_once('.') else {
            return false;
        };
        exts.contains(&e)
            && if by_name {
                p.rsplit('/').next() == Some(stem.as_str())
            } else {
                p == stem
            }
    })
}

fn hit(index: usize, what: &str, note: Option<String>) -> Vec<FileHit> {
    vec![FileHit {
        file: index,
        line: None,
        excerpt: format!("[{what}]"),
        note,
    }]
}

/// Native executables and libraries.
pub fn native(index: usize, files: &[SkillFile<'_>]) -> Vec<FileHit> {
    match kind(&files[index]) {
        Some(Binary::Native(what)) => hit(index, what, None),
        _ => Vec::new(),
    }
}

/// Bytecode with no source beside it.
pub fn bytecode_without_source(index: usize, files: &[SkillFile<'_>]) -> Vec<FileHit> {
    match kind(&files[index]) {
        Some(Binary::Bytecode(what)) if !has_source(files[index].path, files) => {
            hit(index, what, None)
        }
        _ => Vec::new(),
    }
}

/// Bytecode shipped beside its source.
pub fn bytecode_with_source(index: usize, files: &[SkillFile<'_>]) -> Vec<FileHit> {
    match kind(&files[index]) {
        Some(Binary::Bytecode(what)) if has_source(files[index].path, files) => {
            hit(index, what, None)
        }
        _ => Vec::new(),
    }
}

/// Why `bytes` are an encrypted archive, if they are one: a zip entry
/// with the encryption bit, a 7z archive using its AES coder, a RAR
/// archive with encrypted headers or files.
pub fn encryption(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"PK\x03\x04") {
        let mut at = 0;
        while let Some(found) = find(&bytes[at..], b"PK\x03\x04") {
            let header = at + found;
            if le16(bytes, header + 6).is_some_and(|flags| flags & 1 == 1) {
                return Some("zip entry with the encryption flag");
            }
            at = header + 4;
        }
        let mut at = 0;
        while let Some(found) = find(&bytes[at..], b"PK\x01\x02") {
            let header = at + found;
            if le16(bytes, header + 8).is_some_and(|flags| flags & 1 == 1) {
                return Some("zip entry with the encryption flag");
            }
            at = header + 4;
        }
        return None;
    }
    if bytes.starts_with(b"7z\xBC\xAF\x27\x1C") {
        // The coders are listed in the header at the end (offset and size
        // in the start header); the AES coder's id there means encryption.
        let offset = bytes
            .get(12..20)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()) as usize);
        let size = bytes
            .get(20..28)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()) as usize);
        let header = offset.zip(size).and_then(|(o, s)| {
            bytes.get(32usize.checked_add(o)?..32usize.checked_add(o)?.checked_add(s)?)
        });
        return header
            .and_then(|h| find(h, b"\x06\xF1\x07\x01"))
            .map(|_| "7z archive using the AES coder");
    }
    if bytes.starts_with(b"Rar!\x1A\x07\x01\x00") {
        // RAR 5: an archive encryption header comes first.
        let header_type = bytes
            .get(12..)
            .and_then(|b| vint(b).and_then(|(_, n)| vint(&b[n..]).map(|(t, _)| t)));
        return (header_type == Some(4)).then_some("RAR archive with encrypted headers");
    }
    if bytes.starts_with(b"Rar!\x1A\x07\x00") {
        // RAR 4: walk the blocks; the main header's 0x80 flag encrypts
        // headers, a file header's 0x04 flag encrypts the file.
        let mut at = 7;
        while let (Some(kind), Some(flags), Some(size)) =
            (bytes.get(at + 2), le16(bytes, at + 3), le16(bytes, at + 5))
        {
            if (*kind == 0x73 && flags & 0x80 != 0) || (*kind == 0x74 && flags & 0x04 != 0) {
                return Some("RAR archive with encrypted content");
            }
            let extra = if flags & 0x8000 != 0 {
                le32(bytes, at + 7).unwrap_or(0) as usize
            } else {
                0
            };
            let next = at + size as usize + extra;
            if size < 7 || next <= at {
                break;
            }
            at = next;
        }
    }
    None
}

/// A RAR 5 variable-length integer and its length.
fn vint(b: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, byte) in b.iter().take(10).enumerate() {
        value |= u64::from(byte & 0x7F) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Encrypted archives.
pub fn encrypted_archive(index: usize, files: &[SkillFile<'_>]) -> Vec<FileHit> {
    match encryption(files[index].bytes) {
        Some(what) => hit(index, what, None),
        None => Vec::new(),
    }
}
