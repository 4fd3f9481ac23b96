//! Recall and false alarms of the risk rules on a labelled set of skills.
//!
//! `cargo bench --bench risk_eval -- DIR [--show]` reads
//! `DIR/malicious/labels.tsv` and `DIR/honest/labels.tsv` (first column
//! the sample's folder, second its split: `tune` or `heldout`), scans each
//! sample's folder as one skill, and prints per split: malicious skills
//! flagged at `high` or worse (recall), honest skills flagged at `high` or
//! worse (false alarms), and the seconds the scan took. `--show` lists the
//! misses and false alarms of the `tune` split only: the held-back split
//! is reported as numbers, never read case by case, so no rule is fitted
//! to it. The project's labelled set is `fixtures/risk-eval`.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use agentfinder_skills::validate::risk::{scan, Severity, SkillFile, SkillFiles};

/// Every file under `dir`, relative to it, with its bytes and executable bit.
fn files(dir: &Path) -> Vec<(String, Vec<u8>, bool)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_file() => {
                    let Ok(bytes) = std::fs::read(&path) else {
                        continue;
                    };
                    let executable = entry
                        .metadata()
                        .is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
                    let relative = path
                        .strip_prefix(dir)
                        .map(|p| p.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    out.push((relative, bytes, executable));
                }
                _ => {}
            }
        }
    }
    out
}

struct Sample {
    id: String,
    split: String,
    label: &'static str,
    what: String,
}

fn samples(dir: &Path, label: &'static str) -> Vec<Sample> {
    let Ok(tsv) = std::fs::read_to_string(dir.join(label).join("labels.tsv")) else {
        eprintln!("no {label}/labels.tsv under {}", dir.display());
        return Vec::new();
    };
    tsv.lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            Some(Sample {
                id: cols.first()?.to_string(),
                split: cols.get(1)?.to_string(),
                label,
                what: cols.get(2).unwrap_or(&"").to_string(),
            })
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let show = args.iter().any(|a| a == "--show");
    let Some(dir) = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
    else {
        eprintln!("usage: cargo bench --bench risk_eval -- DIR [--show]");
        std::process::exit(2);
    };
    let mut all = samples(&dir, "malicious");
    all.extend(samples(&dir, "honest"));
    // (split, label) -> (flagged, total)
    let mut counts: BTreeMap<(String, &str), (usize, usize)> = BTreeMap::new();
    let mut by_what: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let started = Instant::now();
    for sample in &all {
        let folder = dir.join(sample.label).join(&sample.id);
        let read = files(&folder);
        let files: Vec<SkillFile<'_>> = read
            .iter()
            .map(|(path, bytes, executable)| SkillFile {
                path,
                bytes,
                executable: *executable,
            })
            .collect();
        let findings = scan(&SkillFiles {
            repo: "local/risk-eval",
            files: &files,
        });
        let level = findings
            .iter()
            .map(|f| f.severity)
            .max()
            .unwrap_or(Severity::None);
        let flagged = level >= Severity::High;
        let entry = counts
            .entry((sample.split.clone(), sample.label))
            .or_default();
        entry.0 += usize::from(flagged);
        entry.1 += 1;
        if sample.split == "tune" {
            let w = by_what
                .entry(format!("{} {}", sample.label, sample.what))
                .or_default();
            w.0 += usize::from(flagged);
            w.1 += 1;
        }
        let wrong = flagged != (sample.label == "malicious");
        if show && wrong && sample.split == "tune" {
            println!(
                "{} {} {} level={}",
                if flagged { "FALSE-ALARM" } else { "MISSED" },
                sample.id,
                sample.what,
                level.as_str()
            );
            for f in findings.iter().take(4) {
                println!(
                    "    {} {} {}:{} {}",
                    f.severity.as_str(),
                    f.class,
                    f.file,
                    f.line.unwrap_or(0),
                    f.excerpt
                );
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    println!("split    label      flagged/total  rate");
    for ((split, label), (flagged, total)) in &counts {
        println!(
            "{split:<8} {label:<10} {flagged:>3}/{total:<3}        {:.1}%",
            100.0 * *flagged as f64 / (*total).max(1) as f64
        );
    }
    if show {
        println!("tune, by kind:");
        for (what, (flagged, total)) in &by_what {
            println!("  {flagged}/{total} {what}");
        }
    }
    println!("samples={} seconds={seconds:.2}", all.len());
}
