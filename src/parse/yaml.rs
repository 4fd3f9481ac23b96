//! YAML to JSON through yaml-rust2's event parser.
//!
//! Built on events rather than `YamlLoader` so that aliases cannot blow up
//! memory (a "billion laughs" frontmatter): every node produced, including
//! the copies an alias makes, counts against a budget. Scalars follow the
//! contract: `true`/`false` become booleans, `null`/`~`/empty become null,
//! and everything else, numbers and dates included, stays a string exactly as
//! written.

use std::collections::HashMap;

use serde_json::{Map, Value};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Most JSON nodes one frontmatter may produce, aliases expanded.
const NODE_BUDGET: usize = 100_000;

/// YAML that could not be turned into JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// 1-based line within the YAML text.
    pub line: usize,
    /// What went wrong.
    pub message: String,
}

/// Parses one YAML document into JSON. An empty document is `Null`.
pub fn yaml_to_json(text: &str) -> Result<Value, YamlError> {
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    parser.load(&mut builder, false).map_err(|e| YamlError {
        line: e.marker().line(),
        message: e.info().to_string(),
    })?;
    if let Some(error) = builder.error {
        return Err(error);
    }
    Ok(builder.root.unwrap_or(Value::Null))
}

/// A container being filled: a sequence, or a mapping with its pending key.
enum Frame {
    Sequence(Vec<Value>, usize),
    Mapping(Map<String, Value>, Option<String>, usize),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    anchors: HashMap<usize, Value>,
    root: Option<Value>,
    nodes: usize,
    error: Option<YamlError>,
}

impl Builder {
    fn fail(&mut self, mark: Marker, message: &str) {
        if self.error.is_none() {
            self.error = Some(YamlError {
                line: mark.line(),
                message: message.to_string(),
            });
        }
    }

    fn charge(&mut self, value: &Value, mark: Marker) -> bool {
        self.nodes = self.nodes.saturating_add(count_nodes(value));
        if self.nodes > NODE_BUDGET {
            self.fail(mark, "frontmatter expands to too many values (alias bomb?)");
            return false;
        }
        true
    }

    fn push_value(&mut self, value: Value, anchor: usize, mark: Marker) {
        if anchor > 0 {
            self.anchors.insert(anchor, value.clone());
        }
        let duplicate = match self.stack.last_mut() {
            None => {
                self.root.get_or_insert(value);
                None
            }
            Some(Frame::Sequence(items, _)) => {
                items.push(value);
                None
            }
            Some(Frame::Mapping(map, key, _)) => match key.take() {
                None => {
                    *key = Some(key_text(&value));
                    None
                }
                Some(k) => {
                    let duplicate = map.contains_key(&k).then(|| k.clone());
                    map.insert(k, value);
                    duplicate
                }
            },
        };
        if let Some(k) = duplicate {
            self.fail(mark, &format!("duplicate key `{k}`"));
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        if self.error.is_some() {
            return;
        }
        match event {
            Event::Scalar(text, style, anchor, _tag) => {
                let value = scalar(text, style);
                if self.charge(&value, mark) {
                    self.push_value(value, anchor, mark);
                }
            }
            Event::Alias(id) => match self.anchors.get(&id).cloned() {
                Some(value) => {
                    if self.charge(&value, mark) {
                        self.push_value(value, 0, mark);
                    }
                }
                None => self.fail(mark, "alias to an unknown anchor"),
            },
            Event::SequenceStart(anchor, _) => self.stack.push(Frame::Sequence(Vec::new(), anchor)),
            Event::MappingStart(anchor, _) => {
                self.stack.push(Frame::Mapping(Map::new(), None, anchor))
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (value, anchor) = match self.stack.pop() {
                    Some(Frame::Sequence(items, anchor)) => (Value::Array(items), anchor),
                    Some(Frame::Mapping(map, _, anchor)) => (Value::Object(map), anchor),
                    None => return,
                };
                self.nodes += 1;
                self.push_value(value, anchor, mark);
            }
            _ => {}
        }
    }
}

fn scalar(text: String, style: TScalarStyle) -> Value {
    if style != TScalarStyle::Plain {
        return Value::String(text);
    }
    match text.as_str() {
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        _ => Value::String(text),
    }
}

fn key_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "null".to_string(),
        other => other.to_string(),
    }
}

fn count_nodes(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(count_nodes).sum::<usize>(),
        Value::Object(map) => 1 + map.values().map(count_nodes).sum::<usize>(),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_keep_their_text_except_booleans_and_null() {
        let value = yaml_to_json("a: 1\nb: 2.50\nc: 2024-01-31\nd: true\ne: ~\nf: '1'\n").unwrap();
        assert_eq!(
            value,
            json!({"a": "1", "b": "2.50", "c": "2024-01-31", "d": true, "e": null, "f": "1"})
        );
    }

    #[test]
    fn block_scalars_are_read() {
        let value = yaml_to_json("d: >-\n  one\n  two\nl: |\n  x\n  y\n").unwrap();
        assert_eq!(value, json!({"d": "one two", "l": "x\ny\n"}));
    }

    #[test]
    fn nested_values_and_aliases() {
        let value = yaml_to_json("m: &a\n  k: [1, x]\nn: *a\n").unwrap();
        assert_eq!(
            value,
            json!({"m": {"k": ["1", "x"]}, "n": {"k": ["1", "x"]}})
        );
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut previous = 'a';
        for name in ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] {
            text.push_str(&format!(
                "{name}: &{name} [*{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}]\n"
            ));
            previous = name;
        }
        let error = yaml_to_json(&text).unwrap_err();
        assert!(error.message.contains("too many"), "{error:?}");
    }

    #[test]
    fn errors_carry_the_line() {
        let error = yaml_to_json("name: x\ndescription: a: b\n").unwrap_err();
        assert_eq!(error.line, 2, "{error:?}");
        let error = yaml_to_json("a: 1\na: 2\n").unwrap_err();
        assert!(error.message.contains("duplicate"), "{error:?}");
    }
}
