//! What operators and schedulers rely on: the job and workflow files use
//! commands and flags that exist, `--log-format json` is JSON to the last
//! line, and each failure class has its documented exit code.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use yaml_rust2::{Yaml, YamlLoader};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn help(args: &[&str]) -> String {
    let out = binary().args(args).arg("--help").output().unwrap();
    assert!(
        out.status.success(),
        "{args:?} --help failed: {}",
        stderr(&out)
    );
    stdout(&out)
}

/// Every `agentfinder-skills <command> --flag ...` invocation in `text`
/// (shell line continuations joined), as (command, flags).
fn invocations(text: &str) -> Vec<(String, Vec<String>)> {
    let joined = text.replace("\\\n", " ");
    let mut found = Vec::new();
    for line in joined.lines() {
        let Some(at) = line.find("agentfinder-skills ") else {
            continue;
        };
        let words: Vec<&str> = line[at..].split_whitespace().collect();
        let Some(command) = words.get(1) else {
            continue;
        };
        if command.starts_with('-') || command.starts_with('"') || command.starts_with('$') {
            continue;
        }
        let flags = words[2..]
            .iter()
            .filter(|w| w.starts_with("--"))
            .map(|w| w.split('=').next().unwrap().trim_matches('"').to_string())
            .collect();
        found.push((command.to_string(), flags));
    }
    found
}

/// Flags given through a bash array, `args=(build --log-format json ...)`.
fn array_invocations(text: &str) -> Vec<(String, Vec<String>)> {
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("args=("))
        .map(|rest| {
            let words: Vec<&str> = rest.trim_end_matches(')').split_whitespace().collect();
            let flags = words[1..]
                .iter()
                .filter(|w| w.starts_with("--"))
                .map(|w| w.to_string())
                .collect();
            (words[0].to_string(), flags)
        })
        .collect()
}

fn assert_flags_exist(file: &str, calls: &[(String, Vec<String>)]) {
    assert!(
        !calls.is_empty(),
        "{file}: no agentfinder-skills invocation found"
    );
    for (command, flags) in calls {
        let text = help(&[command]);
        for flag in flags {
            assert!(
                text.contains(flag.as_str()),
                "{file}: `{command} {flag}` is not a flag of the binary"
            );
        }
    }
}

fn key<'a>(yaml: &'a Yaml, name: &str) -> &'a Yaml {
    &yaml[name]
}

#[test]
fn the_github_workflow_is_valid_and_uses_real_commands() {
    let path = Path::new(ROOT).join("jobs/github-workflow.yml");
    let text = std::fs::read_to_string(&path).unwrap();
    let docs = YamlLoader::load_from_str(&text).expect("workflow is valid YAML");
    let workflow = &docs[0];
    let on = key(workflow, "on");
    assert!(!on["schedule"].is_badvalue(), "scheduled");
    assert!(!on["workflow_dispatch"].is_badvalue(), "runnable by hand");
    let paths = on["push"]["paths"].as_vec().expect("push paths");
    assert!(paths.iter().any(|p| p.as_str() == Some("skills/**")));
    assert!(workflow["concurrency"]["group"].as_str().is_some());
    assert_eq!(
        workflow["concurrency"]["cancel-in-progress"].as_bool(),
        Some(false),
        "a promotion is never cancelled midway"
    );
    assert_eq!(workflow["permissions"]["contents"].as_str(), Some("read"));
    let steps = workflow["jobs"]["build"]["steps"].as_vec().unwrap();
    assert!(steps
        .iter()
        .any(|s| s["uses"].as_str().is_some_and(|u| u.contains("rust-cache"))));
    // Secrets only from repository secrets, never written literally.
    for step in steps {
        if let Some(env) = step["env"].as_hash() {
            for (name, value) in env {
                let (name, value) = (name.as_str().unwrap(), value.as_str().unwrap_or_default());
                if name.contains("SECRET") || name.contains("KEY") {
                    assert!(
                        value.starts_with("${{ secrets."),
                        "{name} must come from secrets, not `{value}`"
                    );
                }
            }
        }
    }
    let runs: String = steps
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let mut calls = invocations(&runs);
    calls.extend(array_invocations(&runs));
    assert!(calls.iter().any(|(c, _)| c == "build") && calls.iter().any(|(c, _)| c == "verify"));
    assert_flags_exist("jobs/github-workflow.yml", &calls);
}

#[test]
fn the_hf_job_script_is_valid_shell_and_uses_real_commands() {
    let path = Path::new(ROOT).join("jobs/hf-job.sh");
    let syntax = Command::new("bash").arg("-n").arg(&path).output().unwrap();
    assert!(syntax.status.success(), "{}", stderr(&syntax));
    let text = std::fs::read_to_string(&path).unwrap();
    let calls = invocations(&text);
    for command in ["build", "backfill"] {
        assert!(calls.iter().any(|(c, _)| c == command), "no {command} job");
    }
    assert_flags_exist("jobs/hf-job.sh", &calls);
    assert!(
        text.contains("hf jobs scheduled run")
            && text.contains("--no-concurrency")
            && text.contains("--timeout")
    );
    // Keys go in as secrets read from the environment by name, never as values.
    for secret in ["AWS_SECRET_ACCESS_KEY", "MEILI_MASTER_KEY"] {
        assert!(
            text.contains(&format!("--secrets {secret}")),
            "{secret} must be a secret"
        );
        assert!(
            !text.contains(&format!("{secret}=")),
            "{secret} must not be given a value"
        );
    }
}

#[test]
fn the_dockerfile_builds_both_binaries_and_runs_unprivileged() {
    let text = std::fs::read_to_string(Path::new(ROOT).join("jobs/Dockerfile")).unwrap();
    let stages = text.lines().filter(|l| l.starts_with("FROM ")).count();
    assert_eq!(stages, 3, "build, model and runtime stages");
    assert!(
        text.contains("required = true"),
        "the image must fail without its model"
    );
    let user = text
        .lines()
        .filter_map(|l| l.strip_prefix("USER "))
        .next_back()
        .expect("a USER line");
    assert!(user != "root" && user != "0", "runs as {user}");
    assert!(text.contains("-p agentfinder-skills -p agentfinder-skills-reader"));
    // Every crate of the workspace is copied in, or the build stage fails.
    let manifest = std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap();
    let members = manifest
        .lines()
        .find_map(|l| l.strip_prefix("members = "))
        .expect("the workspace's members");
    for member in members
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| *m != ".")
    {
        assert!(
            text.contains(&format!("COPY {member} ./{member}")),
            "the Dockerfile does not copy the workspace member {member}"
        );
    }
    for copied in [
        "Cargo.toml",
        "Cargo.lock",
        "src",
        "agentfinder-skills-reader",
        "benches",
        "pipeline.toml",
    ] {
        assert!(
            Path::new(ROOT).join(copied).exists(),
            "the Dockerfile copies {copied}, which must exist"
        );
    }
    assert_flags_exist(
        "jobs/Dockerfile CMD",
        &[(
            "build".into(),
            vec!["--config".into(), "--log-format".into(), "--source".into()],
        )],
    );
}

#[test]
fn json_logs_are_json_to_the_last_line() {
    let mut repo = GitRepo::new();
    repo.write("s/good/SKILL.md", skill("good", "fine", "# Good\n"));
    repo.write(
        "s/colon/SKILL.md",
        "---\nname: colon\ndescription: Use when: x\n---\n# C\n",
    );
    repo.write("s/empty/SKILL.md", "");
    let commit = repo.commit("c");
    let work = tempfile::tempdir().unwrap();
    let out = run(
        work.path(),
        &[
            "build",
            "--log-format",
            "json",
            "--source",
            repo.path().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let mut lines = Vec::new();
    for line in stdout(&out).lines().chain(stderr(&out).lines()) {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(
            value["level"].is_string() && value["stage"].is_string() && value["ts"].is_string(),
            "{line}"
        );
        lines.push(value);
    }
    let summary: serde_json::Value =
        serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    assert_eq!(summary["stage"], "summary");
    assert_eq!(summary["event"], "build");
    assert_eq!(summary["commit"], commit.as_str());
    assert_eq!(summary["schema_version"], 8);
    assert_eq!(summary["status"], "built");
    assert_eq!(summary["latest"], "promoted");
    assert_eq!(
        (summary["skills"].as_u64(), summary["skipped"].as_u64()),
        (Some(2), Some(1))
    );
    assert!(summary["documents"].as_u64().unwrap() > 2 && summary["seconds"].is_number());
    // Where the time went, stage by stage: each measured, none more than
    // the whole, and promotion timed since it ran.
    let stages = summary["stages"].as_object().unwrap();
    let names: std::collections::BTreeSet<&str> = stages.keys().map(String::as_str).collect();
    let expected = ["parse", "plan", "promote", "share", "source", "write"];
    assert_eq!(names, expected.into_iter().collect(), "{summary}");
    let total: f64 = stages.values().map(|v| v.as_f64().unwrap()).sum();
    assert!(
        total <= summary["seconds"].as_f64().unwrap() + 0.01,
        "{summary}"
    );
    assert!(stages["promote"].as_f64().unwrap() > 0.0, "{summary}");
    assert!(stages["parse"].as_f64().unwrap() > 0.0, "{summary}");
    assert!(lines.iter().any(|l| l["class"] == "frontmatter-recovered"
        && l["line"] == 3
        && l["path"] == "s/colon/SKILL.md"));
    assert!(lines
        .iter()
        .any(|l| l["class"] == "empty" && l["path"] == "s/empty/SKILL.md"));

    // A no-op is a success too, and the summary says which.
    let out = run(
        work.path(),
        &[
            "build",
            "--log-format",
            "json",
            "--source",
            repo.path().to_str().unwrap(),
        ],
    );
    assert!(out.status.success());
    let summary: serde_json::Value =
        serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    assert_eq!(
        (summary["status"].as_str(), summary["latest"].as_str()),
        (Some("already-built"), Some("already-latest"))
    );

    // Errors are JSON lines too, with their exit code.
    let out = run(
        work.path(),
        &["build", "--log-format", "json", "--source", "/no/such/repo"],
    );
    assert_eq!(out.status.code(), Some(3));
    let error: serde_json::Value =
        serde_json::from_str(stderr(&out).lines().last().unwrap()).unwrap();
    assert_eq!(
        (error["level"].as_str(), error["exit_code"].as_u64()),
        (Some("error"), Some(3))
    );
}

#[test]
fn each_failure_class_has_its_exit_code() {
    let mut repo = GitRepo::new();
    repo.write(
        "s/a/SKILL.md",
        "---\nname: a\ndescription: Use when: x\n---\n# A\n",
    );
    repo.commit("c");
    let source = repo.path().to_str().unwrap();
    let work = tempfile::tempdir().unwrap();
    let code = |args: &[&str]| run(work.path(), args).status.code();

    assert_eq!(code(&["build", "--no-such-flag"]), Some(2), "usage");
    assert_eq!(
        code(&[
            "eval",
            "--semantic-ratio",
            "0.5,1.5",
            "--meili-url",
            "http://127.0.0.1:9"
        ]),
        Some(2),
        "a semantic ratio out of range"
    );
    let search = binary()
        .current_dir(work.path())
        .args(["search", "gif", "--meili-url", "http://127.0.0.1:9"])
        .env("AGENTFINDER_SEMANTIC_RATIO", "-1")
        .output()
        .unwrap();
    assert_eq!(
        search.status.code(),
        Some(2),
        "the ratio from the environment is checked too"
    );
    assert_eq!(
        code(&["build", "--source", "/no/such/repo"]),
        Some(3),
        "source"
    );
    assert_eq!(
        code(&["build", "--source", source, "--ref", "no-such-branch"]),
        Some(3),
        "source ref"
    );
    assert_eq!(
        code(&["build", "--source", source, "--strict"]),
        Some(4),
        "validation"
    );
    let file_store = work.path().join("a-file");
    std::fs::write(&file_store, "not a folder").unwrap();
    assert_eq!(
        code(&[
            "build",
            "--source",
            source,
            "--store",
            file_store.to_str().unwrap()
        ]),
        Some(5),
        "storage"
    );
    assert_eq!(code(&["verify", "--commit", "0000000"]), Some(7), "verify");
    assert_eq!(code(&["build", "--source", source]), Some(0), "success");
    assert_eq!(
        code(&["build", "--source", source]),
        Some(0),
        "nothing to do"
    );
    let bad_config = work.path().join("bad.toml");
    std::fs::write(&bad_config, "[chunk]\nmax_chars = 'many'\n").unwrap();
    assert_eq!(
        code(&[
            "build",
            "--source",
            source,
            "--config",
            bad_config.to_str().unwrap()
        ]),
        Some(1),
        "configuration"
    );
}
