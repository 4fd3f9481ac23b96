//! Shell rendered as the shell reads it: words unquoted and unescaped
//! (`c''url`, `c\url`, `$'\x63url'`), `${IFS}` as a space, names bound to
//! literal strings expanded (`H=evil.net; curl https://$H/x`, and
//! `P=$(curl ...); eval "$P"` as `eval $(curl ...)`), a command continued
//! on the next line (by `\` or after a `|`) on one line.

use tree_sitter::Node;

use super::render::{breaks_between, parse, text, unescape, Out, MAX_DEPTH};
use super::sniff::lang_of_program;
use super::{Lang, Literal, Rendered};

/// Node kinds whose children are statements, one a line.
const CONTAINERS: &[&str] = &[
    "program",
    "compound_statement",
    "do_group",
    "subshell",
    "if_statement",
    "elif_clause",
    "else_clause",
    "while_statement",
    "for_statement",
    "c_style_for_statement",
    "case_statement",
    "case_item",
    "function_definition",
];

/// `src` rendered (see the module documentation).
pub fn render(src: &str) -> Option<Rendered> {
    let (joined, rows) = join_continuations(src);
    let tree = parse(Lang::Shell, &joined)?;
    let mut shell = Shell {
        src: &joined,
        rows,
        out: Out::default(),
        command: None,
    };
    shell.node(tree.root_node(), 0);
    Some(shell.out.rendered)
}

/// `src` with each `\` + newline removed (the shell joins the lines, even
/// inside a word), and the line of `src` each line of the result starts on.
fn join_continuations(src: &str) -> (String, Vec<usize>) {
    let mut rows = vec![0];
    if !src.contains("\\\n") {
        rows.extend(
            src.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .scan(0, |row, _| {
                    *row += 1;
                    Some(*row)
                }),
        );
        return (src.to_string(), rows);
    }
    let mut out = String::with_capacity(src.len());
    let mut row = 0;
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&'\n') {
            chars.next();
            row += 1;
            continue;
        }
        out.push(c);
        if c == '\n' {
            row += 1;
            rows.push(row);
        }
    }
    (out, rows)
}

struct Shell<'s> {
    src: &'s str,
    /// The line of the original text each line of `src` starts on.
    rows: Vec<usize>,
    out: Out,
    /// The program of the command being rendered (for heredocs).
    command: Option<String>,
}

impl Shell<'_> {
    fn row(&self, node: Node<'_>) -> usize {
        let row = node.start_position().row;
        self.rows.get(row).copied().unwrap_or(row)
    }

    fn node(&mut self, node: Node<'_>, depth: usize) {
        let row = self.row(node);
        if depth > MAX_DEPTH || !self.out.visit() {
            self.out.push(text(node, self.src), row);
            return;
        }
        match node.kind() {
            "comment" => {}
            "word" | "raw_string" | "string" | "ansi_c_string" | "concatenation"
            | "simple_expansion" | "expansion" | "number" => {
                let value = self.value(node, depth);
                self.out.push(&value, row);
            }
            "variable_assignment" => {
                let name = node
                    .child_by_field_name("name")
                    .map_or("", |n| text(n, self.src));
                let value = node
                    .child_by_field_name("value")
                    .map(|v| self.value(v, depth + 1))
                    .unwrap_or_default();
                self.out.push(&format!("{name}={value}"), row);
                self.out.bind(name, value);
            }
            "command_substitution" | "process_substitution" => {
                let value = self.value(node, depth);
                self.out.push(&value, row);
            }
            "heredoc_body" => {
                let lang = self.command.as_deref().and_then(lang_of_program);
                let value = text(node, self.src).to_string();
                self.out.rendered.embedded.push((
                    lang,
                    Literal {
                        line: row as u32,
                        value,
                    },
                ));
            }
            "command" => {
                // The program's name as written (its value is rendered
                // with the other words below: once).
                let name = node
                    .child_by_field_name("name")
                    .map(|n| unescape_word(text(n, self.src)));
                let outer = std::mem::replace(
                    &mut self.command,
                    name.map(|n| n.rsplit('/').next().unwrap_or(&n).to_string()),
                );
                self.children(node, depth, false);
                self.command = outer;
            }
            kind => {
                if node.child_count() == 0 {
                    self.out.push(text(node, self.src), row);
                } else {
                    self.children(node, depth, CONTAINERS.contains(&kind));
                }
            }
        }
    }

    /// Renders the children of `node`, a line each when `lines` and the
    /// source breaks the line between them, else separated by spaces.
    fn children(&mut self, node: Node<'_>, depth: usize, lines: bool) {
        let mut cursor = node.walk();
        let mut previous: Option<Node<'_>> = None;
        for child in node.children(&mut cursor) {
            if let Some(before) = previous {
                if lines && breaks_between(self.src, before, child) {
                    self.out.newline();
                } else {
                    self.out.space();
                }
            }
            self.node(child, depth + 1);
            previous = Some(child);
        }
        if lines {
            self.out.newline();
        }
    }

    /// What the shell makes of a word-like node.
    fn value(&mut self, node: Node<'_>, depth: usize) -> String {
        let raw = text(node, self.src);
        if depth > MAX_DEPTH || !self.out.visit() {
            return raw.to_string();
        }
        let row = self.row(node);
        match node.kind() {
            "word" | "number" => unescape_word(raw),
            "raw_string" => {
                let value = raw.trim_start_matches('\'').trim_end_matches('\'');
                self.out.literal(value, row);
                value.to_string()
            }
            "ansi_c_string" => {
                let inner = raw
                    .strip_prefix("$'")
                    .and_then(|s| s.strip_suffix('\''))
                    .unwrap_or(raw);
                let value = unescape(inner);
                self.out.literal(&value, row);
                value
            }
            "string" => {
                let mut value = String::new();
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    match child.kind() {
                        "string_content" => value.push_str(&unescape_double(text(child, self.src))),
                        _ => value.push_str(&self.value(child, depth + 1)),
                    }
                }
                self.out.literal(&value, row);
                value
            }
            "concatenation" => {
                let mut value = String::new();
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    value.push_str(&self.value(child, depth + 1));
                }
                value
            }
            "simple_expansion" | "expansion" => self.expand(node, raw),
            "command_substitution" | "process_substitution" => {
                let open = if raw.starts_with("<(") {
                    "<("
                } else if raw.starts_with(">(") {
                    ">("
                } else {
                    "$("
                };
                if open == "$(" {
                    if let Some(output) = self.printed(node, depth) {
                        return output;
                    }
                }
                let inner = self.sub_render(node, depth);
                format!("{open}{inner})")
            }
            _ => self.sub_render(node, depth),
        }
    }

    /// What a command substitution of `printf` or `echo` with literal
    /// arguments prints (`$(printf '%s%s' cu rl)`, `$(printf '\142\141')`).
    fn printed(&mut self, node: Node<'_>, depth: usize) -> Option<String> {
        let mut cursor = node.walk();
        let mut named = node.named_children(&mut cursor);
        let command = named.next()?;
        if named.next().is_some() || command.kind() != "command" {
            return None;
        }
        let name = text(command.child_by_field_name("name")?, self.src);
        let mut cursor = command.walk();
        let args: Vec<Node<'_>> = command
            .children_by_field_name("argument", &mut cursor)
            .collect();
        const LITERAL: &[&str] = &["word", "string", "raw_string", "ansi_c_string", "number"];
        let literal_string = |a: &Node<'_>| {
            let mut c = a.walk();
            let all = a
                .named_children(&mut c)
                .all(|n| n.kind() == "string_content");
            all
        };
        if args
            .iter()
            .any(|a| !LITERAL.contains(&a.kind()) || (a.kind() == "string" && !literal_string(a)))
        {
            return None;
        }
        let mut values: Vec<String> = args.iter().map(|a| self.value(*a, depth + 1)).collect();
        match name {
            "printf" if !values.is_empty() => {
                let format = unescape(&values.remove(0));
                let mut rest = values.into_iter();
                let mut parts = format.split("%s");
                let mut out = parts.next().unwrap_or("").to_string();
                for part in parts {
                    out.push_str(&rest.next().unwrap_or_default());
                    out.push_str(part);
                }
                Some(out)
            }
            "echo" => {
                let escapes = values
                    .first()
                    .is_some_and(|v| v.starts_with('-') && v.contains('e'));
                let words: Vec<String> = values
                    .into_iter()
                    .skip_while(|v| v.starts_with('-'))
                    .collect();
                let joined = words.join(" ");
                Some(if escapes { unescape(&joined) } else { joined })
            }
            _ => None,
        }
    }

    /// `$NAME` or `${NAME...}`: its bound value, a space for `IFS`, else
    /// as written.
    fn expand(&self, node: Node<'_>, raw: &str) -> String {
        let mut cursor = node.walk();
        let name = node
            .named_children(&mut cursor)
            .find(|c| matches!(c.kind(), "variable_name" | "special_variable_name"))
            .map(|c| text(c, self.src))
            .unwrap_or_else(|| raw.trim_start_matches('$').trim_matches(['{', '}']));
        if name == "IFS" {
            return " ".to_string();
        }
        match self.out.vars.get(name) {
            Some(value) => value.clone(),
            None => raw.to_string(),
        }
    }

    /// The named children of `node` rendered on one line.
    fn sub_render(&mut self, node: Node<'_>, depth: usize) -> String {
        let saved = std::mem::take(&mut self.out.rendered);
        let mut cursor = node.walk();
        let mut first = true;
        for child in node.named_children(&mut cursor) {
            if !first {
                self.out.push(" ; ", self.row(child));
            }
            first = false;
            self.node(child, depth + 1);
            // Statements inside stay on the one line.
            if self.out.rendered.text.ends_with('\n') {
                self.out.rendered.text.pop();
            }
        }
        let inner = std::mem::replace(&mut self.out.rendered, saved);
        self.out.rendered.literals.extend(inner.literals);
        self.out.rendered.embedded.extend(inner.embedded);
        inner.text.replace('\n', " ; ")
    }
}

/// A bare word as the shell reads it: each `\x` is `x`.
fn unescape_word(raw: &str) -> String {
    if !raw.contains('\\') {
        return raw.to_string();
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}

/// Text inside double quotes: `\"`, `\\`, `` \` `` and `\$` are escapes.
fn unescape_double(raw: &str) -> String {
    if !raw.contains('\\') {
        return raw.to_string();
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('"' | '\\' | '`' | '$')) {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}
