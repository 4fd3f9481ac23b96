//! `lint`: a skill author's check before publishing.

use crate::args::LintArgs;
use crate::{exit, load_config, Failure};

/// `lint`: the findings of each SKILL.md below a path (and the risk rules'
/// over every file a skill ships), then the counts; exit 1 when any breaks
/// the Agent Skills specification or is a risk at `high` or worse.
pub fn run_lint(args: &LintArgs, config_path: Option<&std::path::Path>) -> Result<(), Failure> {
    let config = load_config(config_path)?;
    let report = agentfinder_skills::lint::lint_as(&args.path, &config, args.repo.as_deref())
        .map_err(|e| Failure::new(exit::FAILURE, e))?;
    if args.json {
        let text =
            serde_json::to_string_pretty(&report).map_err(|e| Failure::new(exit::FAILURE, e))?;
        println!("{text}");
    } else {
        // Paths and excerpts are the skill author's: cleaned of what
        // would drive a terminal.
        let clean = |text: &str| agentfinder_skills_serve::present::text::clean(text, 400);
        for f in &report.findings {
            let at = f.line.map_or(String::new(), |line| format!(":{line}"));
            match &f.excerpt {
                // A risk finding: its severity first, then the evidence.
                Some(excerpt) => println!(
                    "{}{at}: {} {}: {} [{}]",
                    clean(&f.path),
                    f.severity,
                    f.class,
                    clean(&f.message),
                    clean(excerpt)
                ),
                None => {
                    let rule = if f.spec {
                        ""
                    } else {
                        " (not a specification rule)"
                    };
                    println!(
                        "{}{at}: {}: {}{rule}",
                        clean(&f.path),
                        f.class,
                        clean(&f.message)
                    );
                }
            }
        }
        let counts: Vec<String> = report
            .counts
            .iter()
            .map(|(class, n)| format!("{class}={n}"))
            .collect();
        println!(
            "lint: skills={} conforming={} findings={} {}{}repo={}",
            report.skills,
            report.conforming,
            report.findings.len(),
            counts.join(" "),
            if counts.is_empty() { "" } else { " " },
            clean(&report.repo)
        );
    }
    if report.fails() {
        return Err(Failure::new(exit::FAILURE, anyhow::anyhow!("")));
    }
    Ok(())
}
