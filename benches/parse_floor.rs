//! The floor of the build: markdown-rs parsing alone, on all cores, of every
//! SKILL.md under a folder (the same parser options the chunker uses).
//!
//! `cargo bench --bench parse_floor -- DIR` prints files, MB, seconds, MB/s.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;

fn skill_files(root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == ".git" || name == "node_modules" {
            continue;
        }
        match entry.file_type() {
            Ok(t) if t.is_dir() => skill_files(&path, out),
            Ok(t) if t.is_file() && name == "SKILL.md" => out.push(path),
            _ => {}
        }
    }
}

fn main() {
    let Some(dir) = std::env::args().skip(1).find(|a| !a.starts_with("--")) else {
        eprintln!("usage: cargo bench --bench parse_floor -- DIR");
        return;
    };
    let mut files = Vec::new();
    skill_files(Path::new(&dir), &mut files);
    let texts: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .filter(|t| t.len() <= 2 * 1024 * 1024)
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let options = || {
        let mut options = markdown::ParseOptions::gfm();
        options.constructs.frontmatter = true;
        options
    };
    let started = Instant::now();
    let nodes: usize = texts
        .par_iter()
        .map(|text| {
            std::panic::catch_unwind(|| {
                markdown::to_mdast(text, &options())
                    .map_or(0, |root| root.children().map_or(0, Vec::len))
            })
            .unwrap_or(0)
        })
        .sum();
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "parse_floor: files={} mb={:.1} seconds={seconds:.2} mb_per_s={:.1} threads={} top_level_nodes={nodes}",
        texts.len(),
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 / seconds,
        rayon::current_num_threads()
    );
}
