//! What trips a newcomer in their first hour, checked: a search that asks
//! nothing (or for a source that is not there) fails with a message; the
//! answer is a list a person reads, JSON when asked; the model is found
//! from any folder, and when it is not, `serve` says the search is by
//! keywords only; a `[[sources]]` entry with no name is told how to name
//! itself; each command's help lists only its own flags.

mod common;

use std::path::Path;

use common::server::Server;
use common::*;
use serde_json::Value;

fn skills() -> GitRepo {
    repo_of(
        "https://github.com/o/skills.git",
        &[
            (
                "pdf",
                "Merge and split PDF files",
                "# Split\n\nCut a PDF into single pages.\n",
            ),
            (
                "deploy",
                "Deploy a web service to the cloud",
                "# Rollback\n\nUndo a bad release with kubectl rollout undo.\n",
            ),
        ],
    )
}

/// `skills()` built into `work/artifacts` (without vectors).
fn built() -> (GitRepo, tempfile::TempDir) {
    let repo = skills();
    let work = tempfile::tempdir().unwrap();
    let out = run(
        work.path(),
        &[
            "build",
            "--no-embed",
            "--source",
            repo.path().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    (repo, work)
}

fn search(work: &Path, args: &[&str]) -> std::process::Output {
    embedded_engine(work, &work.join("cache"))
        .arg("search")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_search_that_asks_nothing_or_for_no_such_source_fails_with_a_message() {
    let (_repo, work) = built();
    for args in [
        vec![""],
        vec!["   "],
        vec!["pdf", "--limit", "0"],
        vec!["pdf", "--source", "no-such-source"],
        vec!["pdf", "--filter", "kind = skill"],
    ] {
        let out = search(work.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        let said = stderr(&out);
        assert!(said.contains("error"), "{args:?}: {said}");
        assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
    }
    let out = search(work.path(), &["pdf", "--source", "no-such-source"]);
    assert!(
        stderr(&out).contains("the sources are o-skills"),
        "{}",
        stderr(&out)
    );
    // A source that is there but holds no match is no error.
    let out = search(work.path(), &["zebra crossing", "--source", "o-skills"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_person_reads_a_list_and_a_program_asks_for_json() {
    let (_repo, work) = built();
    let out = search(work.path(), &["undo a bad release", "--limit", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let list = stdout(&out);
    let first: Vec<&str> = list.lines().take(4).collect();
    assert!(
        first[0].starts_with(" 1. deploy  (o-skills, score "),
        "{list}"
    );
    // The skill's description, the section that matched, the link.
    assert_eq!(
        first[1].trim(),
        "Deploy a web service to the cloud",
        "{list}"
    );
    assert_eq!(first[2].trim(), "section: Rollback", "{list}");
    assert!(
        first[3]
            .trim()
            .starts_with("https://github.com/o/skills/blob/"),
        "{list}"
    );
    assert!(serde_json::from_str::<Value>(&list).is_err());
    let out = search(work.path(), &["undo a bad release", "--json"]);
    let results: Value = serde_json::from_str::<Value>(&stdout(&out)).unwrap()["results"].clone();
    assert_eq!(results[0]["displayName"], "deploy");
}

/// A store with vectors of `skills()`, built with the model.
fn built_with_vectors(model: &Path) -> (GitRepo, tempfile::TempDir) {
    let repo = skills();
    let work = tempfile::tempdir().unwrap();
    let config = work.path().join("p.toml");
    std::fs::write(
        &config,
        format!(
            "[embed]\nmodel_dir = \"{}\"\ncache_dir = \"emb\"\n",
            model.display()
        ),
    )
    .unwrap();
    let out = run(
        work.path(),
        &[
            "--config",
            config.to_str().unwrap(),
            "build",
            "--source",
            repo.path().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    (repo, work)
}

#[test]
fn the_model_is_found_from_any_folder_and_serve_says_when_it_is_not() {
    let Some(model) = model_dir() else { return };
    let (_repo, work) = built_with_vectors(&model);
    let store = work.path().join("artifacts");
    // This user's models, as scripts/fetch-model.sh lays them out.
    let models = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&model, models.path().join("all-MiniLM-L6-v2")).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let out = embedded_engine(elsewhere.path(), &work.path().join("cache"))
        .env("AGENTFINDER_MODELS", models.path())
        .args([
            "search",
            "publish my application on production servers",
            "--json",
        ])
        .args(["--store", store.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("keywords only"), "{}", stderr(&out));
    let results: Value = serde_json::from_str::<Value>(&stdout(&out)).unwrap()["results"].clone();
    assert_eq!(results[0]["displayName"], "deploy", "{results:#}");

    // Without it (the binary's tests hide this user's models), `serve`
    // says on stderr that it searches by keywords only.
    let server = Server::start_with(
        elsewhere.path(),
        &work.path().join("cache"),
        &["--store", store.to_str().unwrap()],
        &[],
    );
    let said = || server.stderr.lock().unwrap().clone();
    let mut waited = 0;
    while !said().contains("searching by keywords only") && waited < 200 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        waited += 1;
    }
    assert!(
        said().contains("serve: searching by keywords only: no model"),
        "{}",
        said()
    );
    let (_, _, health) = server.json("/health");
    assert!(
        health["embedded"]["query_model"]
            .as_str()
            .unwrap()
            .starts_with("unavailable: "),
        "{health:#}"
    );
    // ... and /health says it is fresh: no Meilisearch, the embedded
    // engine serves what it last read.
    assert_eq!(health["fresh"], true, "{health:#}");
}

#[test]
fn a_sources_entry_with_no_name_is_told_to_name_itself_in_its_entry() {
    let work = tempfile::tempdir().unwrap();
    let folder = work.path().join("plain");
    std::fs::create_dir_all(folder.join("pdf")).unwrap();
    std::fs::write(
        folder.join("pdf/SKILL.md"),
        skill("pdf", "Merge PDF files", "# Merge\n\nJoin them.\n"),
    )
    .unwrap();
    std::fs::write(
        work.path().join("pipeline.toml"),
        format!(
            "[[sources]]\nid = \"mine\"\nlocation = \"{}\"\n",
            folder.display()
        ),
    )
    .unwrap();
    let out = run(work.path(), &["build", "--no-embed"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains("repo = \"OWNER/NAME\" in its [[sources]] entry (id = \"mine\")"),
        "{said}"
    );
    assert!(!said.contains("[source].repo"), "{said}");
}

#[test]
fn each_commands_help_lists_only_the_flags_that_apply() {
    let help = |command: &str| {
        let out = binary().args([command, "--help"]).output().unwrap();
        assert!(out.status.success());
        stdout(&out)
    };
    let search = help("search");
    for flag in ["--limit", "--source", "--json", "--semantic-ratio"] {
        assert!(search.contains(flag), "search: {flag}");
    }
    assert!(!search.contains("--task-timeout"), "{search}");
    assert!(help("sync").contains("--task-timeout"));
    assert!(!help("health").contains("--task-timeout"));
    assert!(!help("mcp").contains("--addr"));
}
