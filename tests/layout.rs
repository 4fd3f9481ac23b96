//! The shape of the code, checked: in every crate of the workspace, no two
//! sibling modules import each other (directly or around a circle), and no
//! source file is past [`MAX_LINES`] lines; the reader crate links no
//! server, MCP, search engine or model. A module is a file (or a
//! folder's `mod.rs`); its imports are the `crate::` and `super::` paths
//! outside its tests, grouped `use` trees expanded.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest a source file may be.
const MAX_LINES: usize = 500;

/// The source folders of the workspace's crates.
const CRATES: [&str; 4] = [
    "src",
    "agentfinder-skills-reader/src",
    "agentfinder-skills-engine/src",
    "agentfinder-skills-serve/src",
];

type Module = Vec<String>;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file is, relative to its crate's source folder.
fn module_of(src: &Path, file: &Path) -> Module {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Module = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The text a module's imports are read from: without its tests and
/// without comments.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths of a `use` tree starting at `s` (after `crate::` or
/// `super::`), and where it ends.
fn use_tree(s: &[u8], mut at: usize) -> (Vec<Module>, usize) {
    let skip_space = |at: &mut usize| {
        while *at < s.len() && s[*at].is_ascii_whitespace() {
            *at += 1;
        }
    };
    let mut segments: Module = Vec::new();
    loop {
        skip_space(&mut at);
        let start = at;
        while at < s.len() && (s[at].is_ascii_alphanumeric() || s[at] == b'_') {
            at += 1;
        }
        if at > start {
            segments.push(String::from_utf8_lossy(&s[start..at]).into_owned());
            skip_space(&mut at);
            if s[at..].starts_with(b"::") {
                at += 2;
                continue;
            }
            return (vec![segments], at);
        }
        if at < s.len() && s[at] == b'{' {
            at += 1;
            let mut paths = Vec::new();
            loop {
                skip_space(&mut at);
                if at >= s.len() || s[at] == b'}' {
                    return (paths, at + 1);
                }
                let (inner, end) = use_tree(s, at);
                paths.extend(inner.into_iter().map(|p| {
                    let mut full = segments.clone();
                    full.extend(p.into_iter().filter(|x| x != "self"));
                    full
                }));
                at = end;
                skip_space(&mut at);
                if at < s.len() && s[at] == b',' {
                    at += 1;
                }
            }
        }
        return (vec![segments], at);
    }
}

/// Every module `code` (of `module`) names.
fn references(module: &Module, code: &str) -> Vec<Module> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(offset) = code[at..].find("::") {
        let end = at + offset;
        // The word before `::`: `crate`, or a run of `super::super`.
        let start = code[..end]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .map_or(0, |i| i + 1);
        let head = &code[start..end];
        at = end + 2;
        let base: Option<Module> = if head == "crate" {
            Some(Vec::new())
        } else if !head.is_empty() && head.split("::").all(|w| w == "super") {
            let ups = head.split("::").count();
            Some(module[..module.len().saturating_sub(ups)].to_vec())
        } else {
            None
        };
        let Some(base) = base else { continue };
        let (paths, _) = use_tree(bytes, at);
        for path in paths {
            let mut full = base.clone();
            full.extend(path);
            found.push(full);
        }
    }
    found
}

/// Strongly connected sets of more than one module in `graph`.
fn circles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    // Two modules are in one circle when each reaches the other.
    let reach = |from: &Module| -> BTreeSet<Module> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&Module, BTreeSet<Module>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut circles: Vec<Vec<Module>> = Vec::new();
    for (m, seen) in &reached {
        if !seen.contains(*m) || circles.iter().any(|c| c.contains(m)) {
            continue;
        }
        let circle: Vec<Module> = seen
            .iter()
            .filter(|other| reached.get(other).is_some_and(|r| r.contains(*m)))
            .cloned()
            .collect();
        circles.push(circle);
    }
    circles
}

#[test]
fn no_two_sibling_modules_import_each_other() {
    let mut problems = Vec::new();
    for krate in CRATES {
        let src = root().join(krate);
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let modules: BTreeMap<Module, String> = files
            .iter()
            .filter(|f| !f.starts_with(src.join("bin")))
            .map(|f| {
                (
                    module_of(&src, f),
                    code(&std::fs::read_to_string(f).unwrap()),
                )
            })
            .collect();
        let resolve = |path: &Module| -> Option<Module> {
            (1..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|prefix| modules.contains_key(prefix))
        };
        let mut graph: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for (module, code) in &modules {
            for path in references(module, code) {
                let Some(target) = resolve(&path) else {
                    continue;
                };
                let common = module
                    .iter()
                    .zip(&target)
                    .take_while(|(a, b)| a == b)
                    .count();
                // A parent and its child may name each other.
                if common == module.len() || common == target.len() {
                    continue;
                }
                graph
                    .entry(module[..=common].to_vec())
                    .or_default()
                    .insert(target[..=common].to_vec());
            }
        }
        for circle in circles(&graph) {
            let names: Vec<String> = circle.iter().map(|m| m.join("::")).collect();
            problems.push(format!("{krate}: {}", names.join(" <-> ")));
        }
    }
    assert!(
        problems.is_empty(),
        "import circles:\n{}",
        problems.join("\n")
    );
}

#[test]
fn no_source_file_is_past_the_longest_a_module_may_be() {
    let mut long = Vec::new();
    for krate in CRATES {
        let mut files = Vec::new();
        rust_files(&root().join(krate), &mut files);
        for file in files {
            let lines = std::fs::read_to_string(&file).unwrap().lines().count();
            if lines > MAX_LINES {
                long.push(format!("{} ({lines} lines)", file.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_checker_sees_a_circle_through_a_grouped_import() {
    let module = |m: &str| -> Module { m.split("::").map(String::from).collect() };
    let refs = references(
        &module("a::b"),
        "use crate::{x::{Y, z::W}, c};\nuse super::super::d::E;\nlet f = super::g::h();",
    );
    assert!(refs.contains(&module("x::Y")) && refs.contains(&module("x::z::W")));
    assert!(refs.contains(&module("c")) && refs.contains(&module("d::E")));
    assert!(refs.contains(&module("a::g::h")));
    let graph: BTreeMap<Module, BTreeSet<Module>> = [
        (module("p"), BTreeSet::from([module("q")])),
        (module("q"), BTreeSet::from([module("r")])),
        (module("r"), BTreeSet::from([module("p")])),
        (module("s"), BTreeSet::from([module("p")])),
    ]
    .into();
    assert_eq!(
        circles(&graph),
        [vec![module("p"), module("q"), module("r")]]
    );
}

/// The reader crate is what a Space links to sync an index: without its
/// default features it pulls in no HTTP server, MCP, search engine or
/// model (the crates named here, or any of theirs).
#[test]
fn the_reader_links_no_server_mcp_engine_or_model() {
    let out = std::process::Command::new(env!("CARGO"))
        .current_dir(root())
        .args([
            "tree",
            "-p",
            "agentfinder-skills-reader",
            "--no-default-features",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    let crates: BTreeSet<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(
        crates.contains("meilisearch-sdk"),
        "the tree was read: {crates:?}"
    );
    for heavy in ["axum", "rmcp", "tantivy", "candle-core", "tokenizers"] {
        assert!(!crates.contains(heavy), "{heavy} is linked by the reader");
    }
}
