//! The static risk rules over a corpus of skills, timed.
//!
//! `cargo bench --bench risk_scan -- DIR [--repo OWNER/NAME] [--list LEVEL]
//! [--class CLASS] [--rules]` finds every folder holding a `SKILL.md` under
//! DIR (skipping `.git` and `node_modules`), gives each file to the
//! deepest skill folder above it, reads them all, then scans every skill on
//! all cores and prints: skills scanned, seconds, per class and severity
//! the number of skills flagged (each skill counted once per class, at its
//! highest severity there), the number of skills per level, and with
//! `--list LEVEL` the skills at or above LEVEL with their findings
//! (`--class` keeps those whose finding at that level is of CLASS;
//! `--rules` also counts skills per rule, by its why).
//!
//! The repository (for the publisher's own domains) is `--repo`, else
//! `owner/name` from a DIR named `owner+name`, else `local/<DIR>`. With
//! `--owner-from-folder`, each skill's repository is read from its folder
//! name `owner--repo--skill` (how tomevault-io/skills-registry names the
//! skills it mirrors), falling back to the one above.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use agentfinder_skills::validate::risk::{
    scan, Class, RiskFinding, Severity, SkillFile, SkillFiles,
};
use rayon::prelude::*;

/// Every file and every skill folder under `root`.
fn walk(root: &Path, files: &mut Vec<PathBuf>, skills: &mut HashSet<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name == ".git" || name == "node_modules" {
            continue;
        }
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(&entry.path(), files, skills),
            Ok(t) if t.is_file() => {
                if name == "SKILL.md" {
                    skills.insert(root.to_path_buf());
                }
                files.push(entry.path());
            }
            _ => {}
        }
    }
}

/// A skill's folder and its files, read: (path relative to the folder, bytes, executable).
struct Skill {
    folder: PathBuf,
    files: Vec<(String, Vec<u8>, bool)>,
}

fn arg_after(args: &[String], flag: &str) -> Option<String> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let flags_with_values = ["--repo", "--list", "--class"];
    let dir = args
        .iter()
        .enumerate()
        .find(|(i, a)| {
            !a.starts_with("--") && (*i == 0 || !flags_with_values.contains(&args[i - 1].as_str()))
        })
        .map(|(_, a)| a.clone());
    let Some(dir) = dir else {
        eprintln!("usage: cargo bench --bench risk_scan -- DIR [--repo OWNER/NAME] [--list LEVEL] [--class CLASS] [--rules]");
        return;
    };
    let root = PathBuf::from(&dir);
    let dir_name = root
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().to_string()))
        .unwrap_or_default();
    let repo = arg_after(&args, "--repo").unwrap_or_else(|| {
        if dir_name.contains('+') {
            dir_name.replacen('+', "/", 1)
        } else {
            format!("local/{dir_name}")
        }
    });
    let list = arg_after(&args, "--list")
        .map(|l| Severity::parse(&l).unwrap_or_else(|| panic!("unknown level {l}")));
    let only_class = arg_after(&args, "--class");
    let owner_from_folder = args.iter().any(|a| a == "--owner-from-folder");

    let started = Instant::now();
    let mut paths = Vec::new();
    let mut folders = HashSet::new();
    walk(&root, &mut paths, &mut folders);
    let mut by_skill: HashMap<PathBuf, Vec<PathBuf>> = HashMap::new();
    for path in paths {
        let owner = path.ancestors().skip(1).find(|a| folders.contains(*a));
        if let Some(folder) = owner {
            by_skill.entry(folder.to_path_buf()).or_default().push(path);
        }
    }
    let mut skills: Vec<Skill> = by_skill
        .into_par_iter()
        .map(|(folder, paths)| {
            let files = paths
                .iter()
                .filter_map(|p| {
                    let bytes = std::fs::read(p).ok()?;
                    let executable = std::fs::metadata(p)
                        .map(|m| m.permissions().mode() & 0o111 != 0)
                        .unwrap_or(false);
                    let relative = p.strip_prefix(&folder).ok()?.to_string_lossy().to_string();
                    Some((relative, bytes, executable))
                })
                .collect();
            Skill { folder, files }
        })
        .collect();
    skills.sort_by(|a, b| a.folder.cmp(&b.folder));
    let bytes: usize = skills
        .iter()
        .flat_map(|s| s.files.iter().map(|f| f.1.len()))
        .sum();
    let read_seconds = started.elapsed().as_secs_f64();

    let started = Instant::now();
    let results: Vec<Vec<RiskFinding>> = skills
        .par_iter()
        .map(|skill| {
            let files: Vec<SkillFile<'_>> = skill
                .files
                .iter()
                .map(|(path, bytes, executable)| SkillFile {
                    path,
                    bytes,
                    executable: *executable,
                })
                .collect();
            let folder = skill
                .folder
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            let parts: Vec<&str> = folder.split("--").collect();
            let mirrored = (owner_from_folder && parts.len() >= 3)
                .then(|| format!("{}/{}", parts[0], parts[1]));
            scan(&SkillFiles {
                repo: mirrored.as_deref().unwrap_or(&repo),
                files: &files,
            })
        })
        .collect();
    let seconds = started.elapsed().as_secs_f64();

    println!(
        "risk_scan: repo={repo} skills={} files={} mb={:.1} read_seconds={read_seconds:.2} seconds={seconds:.2} threads={}",
        skills.len(),
        skills.iter().map(|s| s.files.len()).sum::<usize>(),
        bytes as f64 / 1e6,
        rayon::current_num_threads()
    );
    let mut by_class: BTreeMap<(&str, Severity), usize> = BTreeMap::new();
    let mut by_level: BTreeMap<Severity, usize> = BTreeMap::new();
    let mut by_rule: BTreeMap<(String, Severity, String), usize> = BTreeMap::new();
    for findings in &results {
        let level = findings
            .iter()
            .map(|f| f.severity)
            .max()
            .unwrap_or_default();
        *by_level.entry(level).or_default() += 1;
        for class in Class::ALL {
            if let Some(top) = findings
                .iter()
                .filter(|f| f.class == class.as_str())
                .map(|f| f.severity)
                .max()
            {
                *by_class.entry((class.as_str(), top)).or_default() += 1;
            }
        }
        let rules: HashSet<(String, Severity, String)> = findings
            .iter()
            .map(|f| {
                (
                    f.class.clone(),
                    f.severity,
                    f.why
                        .split(" (")
                        .next()
                        .unwrap_or("")
                        .chars()
                        .take(70)
                        .collect(),
                )
            })
            .collect();
        for rule in rules {
            *by_rule.entry(rule).or_default() += 1;
        }
    }
    println!("\nskills flagged, per class and its highest severity in the skill:");
    for class in Class::ALL {
        let cells: Vec<String> = Severity::ALL[1..]
            .iter()
            .rev()
            .map(|s| {
                format!(
                    "{s}={}",
                    by_class.get(&(class.as_str(), *s)).copied().unwrap_or(0)
                )
            })
            .collect();
        println!("  {:<24} {}", class.as_str(), cells.join(" "));
    }
    println!("\nskills per level:");
    for level in Severity::ALL.iter().rev() {
        println!(
            "  {:<9} {}",
            level.as_str(),
            by_level.get(level).copied().unwrap_or(0)
        );
    }
    if args.iter().any(|a| a == "--rules") {
        println!("\nskills per rule (class, severity, why):");
        for ((class, severity, why), n) in &by_rule {
            println!("  {n:>6}  {class} {severity}: {why}");
        }
    }
    if let Some(threshold) = list {
        println!("\nskills at or above {threshold}:");
        for (skill, findings) in skills.iter().zip(&results) {
            let shown: Vec<&RiskFinding> = findings
                .iter()
                .filter(|f| f.severity >= threshold)
                .collect();
            if shown.is_empty()
                || only_class
                    .as_ref()
                    .is_some_and(|c| !shown.iter().any(|f| &f.class == c))
            {
                continue;
            }
            let level = findings
                .iter()
                .map(|f| f.severity)
                .max()
                .unwrap_or_default();
            println!(
                "\n{} [{level}]",
                skill
                    .folder
                    .strip_prefix(&root)
                    .unwrap_or(&skill.folder)
                    .display()
            );
            for f in findings {
                let line = f.line.map_or(String::new(), |l| format!(":{l}"));
                println!(
                    "  {} {} {}{line}: {}\n      why: {}",
                    f.severity, f.class, f.file, f.excerpt, f.why
                );
            }
        }
    }
}
