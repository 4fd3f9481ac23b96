//! What the shell and script renderers share: the output (text with the
//! file line of each of its lines), the names bound to literal strings,
//! and the parsers, one per language and thread.

use std::cell::RefCell;
use std::collections::HashMap;

use tree_sitter::{Language, Node, Parser, Tree};

use super::{Lang, Literal, Rendered};

/// How deep the renderers descend a syntax tree; deeper code is copied
/// as written (no stack is spent on a pathological nesting).
pub const MAX_DEPTH: usize = 120;
/// Most names bound to literals, and the longest value kept for one.
pub const MAX_BINDINGS: usize = 512;
pub const MAX_BINDING_BYTES: usize = 4096;
/// The longest expression a name stands for.
pub const MAX_EXPR_BYTES: usize = 300;
/// How many syntax nodes one rendering may visit: past it, what is left
/// is copied as written and the rendering says it was cut (nested
/// substitutions could otherwise cost more than linear time).
pub const MAX_VISITS: usize = 200_000;
/// Most literals kept per unit.
pub const MAX_LITERALS: usize = 512;
/// The longest rendering kept, in bytes (a bound that expansion of names
/// cannot get past).
pub const MAX_RENDERED_BYTES: usize = 4 * MAX_PARSE;
const MAX_PARSE: usize = super::MAX_PARSE_BYTES;

thread_local! {
    static PARSERS: RefCell<HashMap<Lang, Parser>> = RefCell::new(HashMap::new());
}

fn language(lang: Lang) -> Language {
    match lang {
        Lang::Shell => tree_sitter_bash::LANGUAGE.into(),
        Lang::Python => tree_sitter_python::LANGUAGE.into(),
        Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TSX.into(),
        Lang::PowerShell => tree_sitter_powershell::LANGUAGE.into(),
    }
}

/// `src` parsed as `lang` (`None` when the grammar cannot be loaded or
/// parsing gives up).
pub fn parse(lang: Lang, src: &str) -> Option<Tree> {
    PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = match parsers.entry(lang) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let mut parser = Parser::new();
                parser.set_language(&language(lang)).ok()?;
                e.insert(parser)
            }
        };
        parser.parse(src, None)
    })
}

/// The rendering under way.
#[derive(Default)]
pub struct Out {
    pub rendered: Rendered,
    /// Names bound to literal strings.
    pub vars: HashMap<String, String>,
    /// Nodes visited so far (see [`MAX_VISITS`]).
    pub visits: usize,
    /// Names bound to other short expressions, as rendered (`p =
    /// expanduser('~/.claude/settings.json')`, `r = urlopen(u).read()`):
    /// a use of the name reads as the expression.
    pub exprs: HashMap<String, String>,
}

impl Out {
    /// Counts one node visited; `false` once the budget is spent.
    pub fn visit(&mut self) -> bool {
        self.visits += 1;
        if self.visits > MAX_VISITS {
            self.rendered.cut = true;
            return false;
        }
        true
    }

    /// Appends `s` (kept on one line) from file line `row`.
    pub fn push(&mut self, s: &str, row: usize) {
        if s.is_empty() || self.rendered.text.len() > MAX_RENDERED_BYTES {
            return;
        }
        let text = &mut self.rendered.text;
        if text.is_empty() || text.ends_with('\n') {
            self.rendered.lines.push(row as u32);
        }
        if s.contains(['\n', '\r']) {
            text.push_str(&s.replace(['\n', '\r'], " "));
        } else {
            text.push_str(s);
        }
    }

    /// Ends the current line, if one is open.
    pub fn newline(&mut self) {
        let text = &mut self.rendered.text;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
    }

    /// Appends a space unless the line is empty or ends in one.
    pub fn space(&mut self) {
        let text = &self.rendered.text;
        if !(text.is_empty() || text.ends_with([' ', '\n'])) {
            self.rendered.text.push(' ');
        }
    }

    /// Keeps `value`, a string literal met at `row`.
    pub fn literal(&mut self, value: &str, row: usize) {
        if self.rendered.literals.len() < MAX_LITERALS && value.len() >= 4 {
            self.rendered.literals.push(Literal {
                line: row as u32,
                value: value.to_string(),
            });
        }
    }

    /// Binds `name` to the rendered expression `expr`.
    pub fn bind_expr(&mut self, name: &str, expr: String) {
        if (self.exprs.len() < MAX_BINDINGS || self.exprs.contains_key(name))
            && expr.len() <= MAX_EXPR_BYTES
            && !expr
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                .any(|word| word == name)
        {
            self.vars.remove(name);
            self.exprs.insert(name.to_string(), expr);
        }
    }

    /// Binds `name` to `value`.
    pub fn bind(&mut self, name: &str, value: String) {
        if (self.vars.len() < MAX_BINDINGS || self.vars.contains_key(name))
            && value.len() <= MAX_BINDING_BYTES
        {
            self.vars.insert(name.to_string(), value);
        }
    }
}

/// The source text of `node`.
pub fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// Whether the source between two sibling nodes holds a line break.
pub fn breaks_between(src: &str, before: Node<'_>, after: Node<'_>) -> bool {
    src.get(before.end_byte()..after.start_byte())
        .is_some_and(|gap| gap.contains('\n'))
}

/// The code points of `\u{..}`, `\uXXXX`, `\xXX`, octal and the usual
/// one-letter escapes in `s`, decoded (what is not an escape is kept).
pub fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(next) = chars.next() else {
            out.push('\\');
            break;
        };
        let hex = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, n: usize| {
            let mut value = 0u32;
            let mut taken = 0;
            while taken < n {
                match chars.peek().and_then(|c| c.to_digit(16)) {
                    Some(d) => {
                        value = value * 16 + d;
                        chars.next();
                        taken += 1;
                    }
                    None => break,
                }
            }
            (taken > 0).then(|| char::from_u32(value)).flatten()
        };
        match next {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0'..='7' => {
                let mut value = next.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.extend(char::from_u32(value));
            }
            'x' => match hex(&mut chars, 2) {
                Some(c) => out.push(c),
                None => out.push_str("\\x"),
            },
            'u' if chars.peek() == Some(&'{') => {
                chars.next();
                let inner: String = chars.by_ref().take_while(|&c| c != '}').collect();
                match u32::from_str_radix(&inner, 16)
                    .ok()
                    .and_then(char::from_u32)
                {
                    Some(c) => out.push(c),
                    None => out.push_str(&format!("\\u{{{inner}}}")),
                }
            }
            'u' => match hex(&mut chars, 4) {
                Some(c) => out.push(c),
                None => out.push_str("\\u"),
            },
            'U' => match hex(&mut chars, 8) {
                Some(c) => out.push(c),
                None => out.push_str("\\U"),
            },
            other => out.push(other),
        }
    }
    out
}
