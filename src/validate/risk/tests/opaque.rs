use super::*;
use Severity::*;

fn elf() -> Vec<u8> {
    let mut b = b"\x7fELF\x02\x01\x01\0".to_vec();
    b.resize(256, 0);
    b
}

fn pyc() -> Vec<u8> {
    let mut b = b"\xcb\x0d\x0d\x0a\0\0\0\0".to_vec();
    b.resize(64, 1);
    b
}

#[test]
fn native_executables_and_bytecode_without_source_are_high() {
    let found = scan_bytes(&[("SKILL.md", b"# x\n"), ("bin/helper", &elf())]);
    let f = finding(&found, "opaque-code");
    assert_eq!(
        (f.severity, f.line, f.excerpt.as_str()),
        (High, Option::None, "[ELF]")
    );
    assert_eq!(
        level(&scan_bytes(&[("scripts/run.pyc", &pyc())]), "opaque-code"),
        Some(High)
    );
    // Named like data, told by its bytes.
    assert_eq!(
        level(&scan_bytes(&[("assets/data.txt", &elf())]), "opaque-code"),
        Some(High)
    );
    let mut pe = b"MZ".to_vec();
    pe.resize(0x80, 0);
    pe[0x3C] = 0x40;
    pe[0x40..0x44].copy_from_slice(b"PE\0\0");
    assert_eq!(
        level(&scan_bytes(&[("assets/logo.png", &pe)]), "opaque-code"),
        Some(High)
    );
}

#[test]
fn bytecode_beside_its_source_is_low() {
    let found = scan_bytes(&[
        ("scripts/util.py", b"print(1)\n"),
        ("scripts/__pycache__/util.cpython-312.pyc", &pyc()),
    ]);
    assert_eq!(level(&found, "opaque-code"), Some(Low));
}

#[test]
fn hooks_that_run_at_session_start() {
    let hooks = "{\n  \"hooks\": {\n    \"SessionStart\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"${CLAUDE_PLUGIN_ROOT}/hooks/init.sh\"}]}]\n  }\n}\n";
    let f = finding(&scan_text(&[("hooks/hooks.json", hooks)]), "session-hook").clone();
    assert_eq!((f.severity, f.line), (Medium, Some(3)));
    let frontmatter =
        "---\nname: demo\ndescription: d\nhooks:\n  PreToolUse:\n    - matcher: Bash\n---\nBody\n";
    assert_eq!(
        level(&scan_text(&[("SKILL.md", frontmatter)]), "session-hook"),
        Some(Low)
    );
    // Evasion: the event key in YAML config instead of JSON.
    let yaml = "hooks:\n  UserPromptSubmit:\n    - command: ./hooks/inject.sh\n";
    assert_eq!(
        level(&scan_text(&[("config/agent.yaml", yaml)]), "session-hook"),
        Some(Medium)
    );
}

#[test]
fn images_documents_and_documented_hooks_do_not_trip_it() {
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    let doc =
        skill_md("Add this to settings:\n\n```json\n{\"hooks\": {\"SessionStart\": []}}\n```");
    let found = scan_bytes(&[
        ("SKILL.md", doc.as_bytes()),
        ("assets/a.png", &png),
        ("docs/a.pdf", b"%PDF-1.7\n%\xe2\xe3\n"),
        ("lib/ld.so", b"INPUT(-lfoo)\n"),
    ]);
    assert!(found.is_empty(), "{found:#?}");
}
