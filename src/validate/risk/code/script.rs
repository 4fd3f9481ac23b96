//! Python, JavaScript, TypeScript and PowerShell rendered with their
//! string expressions evaluated where they are literal: escapes decoded
//! (`"\u0065val"`), concatenations folded (`'ev' + 'al'`), names bound to
//! literals put in, `chr(99)`, `String.fromCharCode(...)`, reversed
//! strings (`'...'[::-1]`, `.split('').reverse().join('')`), and
//! `getattr(__import__('o' + 's'), 'sys' + 'tem')` read as `os.system`.

use tree_sitter::Node;

use super::render::{parse, text, unescape, Out, MAX_DEPTH};
use super::{Lang, Rendered};

/// Node kinds whose children are statements, one a line.
const CONTAINERS: &[&str] = &[
    "module",
    "block",
    "program",
    "statement_block",
    "class_body",
    "switch_body",
    "statement_list",
    "script_block",
    "script_block_body",
];

/// `src`, a program in `lang`, rendered (see the module documentation).
pub fn render(lang: Lang, src: &str) -> Option<Rendered> {
    let tree = parse(lang, src)?;
    let mut script = Script {
        src,
        lang,
        out: Out::default(),
    };
    script.node(tree.root_node(), 0);
    Some(script.out.rendered)
}

struct Script<'s> {
    src: &'s str,
    lang: Lang,
    out: Out,
}

impl Script<'_> {
    fn node(&mut self, node: Node<'_>, depth: usize) {
        let row = node.start_position().row;
        if depth > MAX_DEPTH || !self.out.visit() {
            self.out.push(text(node, self.src), row);
            return;
        }
        let kind = node.kind();
        if kind == "comment" {
            return;
        }
        // A literal put into an f-string or a template is its text there
        // (`f"https://h/bot{TOKEN}/x?{q}"` reads `.../bot123:abc/x?{q}`).
        if matches!(kind, "interpolation" | "template_substitution")
            && node.named_child_count() == 1
        {
            if let Some(value) = node
                .named_child(0)
                .and_then(|inner| self.literal(inner, depth + 1))
            {
                self.out.literal(&value, row);
                self.out.push(&value, row);
                return;
            }
        }
        if self.is_expression(kind) {
            if let Some(value) = self.literal(node, depth) {
                self.out.literal(&value, row);
                self.out.push(&quote(&value), row);
                return;
            }
        }
        if matches!(kind, "identifier" | "variable") {
            if let Some(expr) = self.out.exprs.get(text(node, self.src)).cloned() {
                self.out.push(&expr, row);
                return;
            }
        }
        if let Some(name) = self.attribute_of(node, depth) {
            self.out.push(&name, row);
            return;
        }
        self.bind_assignment(node, depth);
        if node.child_count() == 0 {
            self.out.push(text(node, self.src), row);
            return;
        }
        let lines = CONTAINERS.contains(&kind);
        let mut cursor = node.walk();
        let mut previous: Option<Node<'_>> = None;
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                if let Some(before) = previous {
                    let gap = self
                        .src
                        .get(before.end_byte()..child.start_byte())
                        .unwrap_or("");
                    if lines && gap.contains('\n') {
                        self.out.newline();
                    } else if !gap.is_empty() {
                        self.out.space();
                    }
                }
                // A name being bound or a keyword is not its value.
                if matches!(cursor.field_name(), Some("left" | "name"))
                    && matches!(
                        child.kind(),
                        "identifier" | "variable" | "left_assignment_expression"
                    )
                {
                    self.out
                        .push(text(child, self.src), child.start_position().row);
                } else {
                    self.node(child, depth + 1);
                }
                previous = Some(child);
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        if lines {
            self.out.newline();
        }
    }

    /// Whether nodes of `kind` can be a literal string's expression.
    fn is_expression(&self, kind: &str) -> bool {
        matches!(
            kind,
            "string"
                | "concatenated_string"
                | "binary_operator"
                | "binary_expression"
                | "template_string"
                | "parenthesized_expression"
                | "identifier"
                | "call"
                | "call_expression"
                | "subscript"
                | "string_literal"
                | "additive_expression"
                | "variable"
        )
    }

    /// Records `name = <literal>` (and `let`, `const`, `$name = `).
    fn bind_assignment(&mut self, node: Node<'_>, depth: usize) {
        let (left, right) = match node.kind() {
            "assignment" | "assignment_expression" => (
                node.child_by_field_name("left"),
                node.child_by_field_name("right")
                    .or_else(|| node.child_by_field_name("value")),
            ),
            "variable_declarator" => (
                node.child_by_field_name("name"),
                node.child_by_field_name("value"),
            ),
            _ => return,
        };
        let (Some(left), Some(right)) = (left, right) else {
            return;
        };
        let name = text(left, self.src).trim().to_string();
        if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == '.') {
            return;
        }
        // A PowerShell value is a pipeline around the expression.
        let mut value_node = right;
        while self.lang == Lang::PowerShell && value_node.named_child_count() == 1 {
            match value_node.named_child(0) {
                Some(inner) if self.literal(value_node, depth).is_none() => value_node = inner,
                _ => break,
            }
        }
        if let Some(value) = self.literal(value_node, depth + 1) {
            self.out.exprs.remove(&name);
            self.out.bind(&name, value);
        } else if matches!(
            value_node.kind(),
            "call"
                | "call_expression"
                | "attribute"
                | "member_expression"
                | "await_expression"
                | "await"
                | "subscript"
                | "subscript_expression"
                | "binary_operator"
                | "binary_expression"
                | "invokation_expression"
                | "member_access"
        ) && value_node.byte_range().len() <= super::render::MAX_EXPR_BYTES
        {
            let expr = self.render_inline(value_node, depth);
            self.out.bind_expr(&name, expr);
        }
    }

    /// `getattr(X, 'name')` as `X.name`, `__import__('m')` and
    /// `importlib.import_module('m')` as `m`, `X['name']` as `X.name`.
    fn attribute_of(&mut self, node: Node<'_>, depth: usize) -> Option<String> {
        match node.kind() {
            "call" | "call_expression" => {
                let function = text(node.child_by_field_name("function")?, self.src);
                let args = self.arguments(node);
                match (function, args.as_slice()) {
                    ("getattr", [object, name, ..]) => {
                        let name = self.literal(*name, depth + 1)?;
                        let object = self.render_inline(*object, depth);
                        Some(format!("{object}.{name}"))
                    }
                    ("__import__" | "importlib.import_module", [module, ..]) => {
                        self.literal(*module, depth + 1)
                    }
                    _ => None,
                }
            }
            "subscript_expression" | "subscript" => {
                let object = node
                    .child_by_field_name("object")
                    .or_else(|| node.child_by_field_name("value"))?;
                let index = node
                    .child_by_field_name("index")
                    .or_else(|| node.child_by_field_name("subscript"))?;
                let name = self.literal(index, depth + 1)?;
                if !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
                {
                    return None;
                }
                let object = self.render_inline(object, depth);
                Some(format!("{object}.{name}"))
            }
            _ => None,
        }
    }

    /// `node` rendered on its own, as one line.
    fn render_inline(&mut self, node: Node<'_>, depth: usize) -> String {
        let saved = std::mem::take(&mut self.out.rendered);
        self.node(node, depth + 1);
        let inner = std::mem::replace(&mut self.out.rendered, saved);
        self.out.rendered.literals.extend(inner.literals);
        inner.text.replace('\n', " ")
    }

    /// The argument expressions of a call.
    fn arguments<'t>(&self, call: Node<'t>) -> Vec<Node<'t>> {
        let Some(args) = call.child_by_field_name("arguments") else {
            return Vec::new();
        };
        let mut cursor = args.walk();
        args.named_children(&mut cursor)
            .filter(|n| n.kind() != "comment")
            .collect()
    }

    /// The value of `node` when it is a literal string expression.
    fn literal(&self, node: Node<'_>, depth: usize) -> Option<String> {
        if depth > MAX_DEPTH {
            return None;
        }
        let raw = text(node, self.src);
        match node.kind() {
            "string" => self.string(node),
            "template_string" => {
                let mut value = String::new();
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    match child.kind() {
                        "string_fragment" => value.push_str(text(child, self.src)),
                        "escape_sequence" => value.push_str(&unescape(text(child, self.src))),
                        "template_substitution" => {
                            let inner = child.named_child(0)?;
                            value.push_str(&self.literal(inner, depth + 1)?);
                        }
                        _ => return None,
                    }
                }
                Some(value)
            }
            "concatenated_string" => {
                let mut value = String::new();
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    value.push_str(&self.literal(child, depth + 1)?);
                }
                Some(value)
            }
            "binary_operator" | "binary_expression" | "additive_expression" => {
                let left = node
                    .child_by_field_name("left")
                    .or_else(|| node.named_child(0))?;
                let right = node
                    .child_by_field_name("right")
                    .or_else(|| node.named_child(1))?;
                let op = self.src.get(left.end_byte()..right.start_byte())?.trim();
                (op == "+").then_some(())?;
                Some(self.literal(left, depth + 1)? + &self.literal(right, depth + 1)?)
            }
            "parenthesized_expression" => {
                (node.named_child_count() == 1).then_some(())?;
                self.literal(node.named_child(0)?, depth + 1)
            }
            "identifier" | "variable" => self.out.vars.get(raw).cloned(),
            "string_literal" => {
                let inner = node.named_child(0)?;
                let body = text(inner, self.src);
                match inner.kind() {
                    "verbatim_string_characters" => Some(
                        body.trim_start_matches('\'')
                            .trim_end_matches('\'')
                            .replace("''", "'"),
                    ),
                    "expandable_string_literal" if !body.contains('$') => Some(
                        body.trim_start_matches('"')
                            .trim_end_matches('"')
                            .replace('`', "\\"),
                    )
                    .map(|s| unescape(&s)),
                    _ => None,
                }
            }
            "call" | "call_expression" => self.literal_call(node, depth),
            "subscript" => {
                // 'abc'[::-1]
                let value = node.child_by_field_name("value")?;
                let index = text(node.child_by_field_name("subscript")?, self.src);
                (index.replace(' ', "") == "::-1").then_some(())?;
                Some(self.literal(value, depth + 1)?.chars().rev().collect())
            }
            _ => None,
        }
    }

    /// A Python or JavaScript string literal's value.
    fn string(&self, node: Node<'_>) -> Option<String> {
        let raw = text(node, self.src);
        let prefix: String = raw
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect::<String>()
            .to_ascii_lowercase();
        let mut value = String::new();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "string_content" | "string_fragment" if prefix.contains('r') => {
                    value.push_str(text(child, self.src))
                }
                "string_content" | "string_fragment" => {
                    value.push_str(&unescape(text(child, self.src)))
                }
                "escape_sequence" => value.push_str(&unescape(text(child, self.src))),
                "string_start" | "string_end" => {}
                "interpolation" => return None,
                _ => {}
            }
        }
        Some(value)
    }

    /// `chr(N)`, `String.fromCharCode(N, ...)`, `'...'.split('').reverse().join('')`,
    /// `''.join([...])`, `[...].join('')`.
    fn literal_call(&self, node: Node<'_>, depth: usize) -> Option<String> {
        let function = node.child_by_field_name("function")?;
        let name = text(function, self.src);
        let args = self.arguments(node);
        let number = |n: Node<'_>| -> Option<char> {
            let t = text(n, self.src).trim();
            let value = match t.strip_prefix("0x") {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => t.parse::<u32>().ok()?,
            };
            char::from_u32(value)
        };
        match name {
            "chr" | "String.fromCharCode" | "String.fromCodePoint" => {
                args.iter().map(|a| number(*a)).collect()
            }
            _ => {
                // X.join(Y) / X.reverse() / X.split('')
                let object = function.child_by_field_name("object")?;
                let method = text(
                    function
                        .child_by_field_name("property")
                        .or_else(|| function.child_by_field_name("attribute"))?,
                    self.src,
                );
                match method {
                    "join" => {
                        let sep_on_object = self.literal(object, depth + 1);
                        match (sep_on_object, args.as_slice()) {
                            // Python: 'sep'.join([...])
                            (Some(sep), [list]) => {
                                let items = self.list(*list, depth)?;
                                Some(items.join(&sep))
                            }
                            // JavaScript: [...].join('sep') or x.split('').reverse().join('')
                            (None, [sep]) => {
                                let sep = self.literal(*sep, depth + 1)?;
                                if let Some(items) = self.list(object, depth) {
                                    return Some(items.join(&sep));
                                }
                                let chars = self.split_chars(object, depth)?;
                                Some(chars.join(&sep))
                            }
                            _ => None,
                        }
                    }
                    _ => None,
                }
            }
        }
    }

    /// The items of a list or array literal of literal strings.
    fn list(&self, node: Node<'_>, depth: usize) -> Option<Vec<String>> {
        matches!(node.kind(), "list" | "array" | "tuple").then_some(())?;
        let mut cursor = node.walk();
        let items: Option<Vec<String>> = node
            .named_children(&mut cursor)
            .map(|n| self.literal(n, depth + 1))
            .collect();
        items
    }

    /// `X.split('')` or `X.split('').reverse()`: X's characters, reversed
    /// for the latter.
    fn split_chars(&self, node: Node<'_>, depth: usize) -> Option<Vec<String>> {
        let function = node.child_by_field_name("function")?;
        let object = function.child_by_field_name("object")?;
        let method = text(function.child_by_field_name("property")?, self.src);
        match method {
            "reverse" => {
                let mut chars = self.split_chars(object, depth + 1)?;
                chars.reverse();
                Some(chars)
            }
            "split" => {
                let value = self.literal(object, depth + 1)?;
                Some(value.chars().map(String::from).collect())
            }
            _ => None,
        }
    }
}

/// A value as a quoted literal in the rendering.
fn quote(value: &str) -> String {
    format!("'{value}'")
}
