//! Serving and building while things change: many clients with queries
//! never seen before, a store promoted under a running `serve`, a source
//! that becomes unreadable, a build that times out during promotion, a
//! builder whose output changed, and a source that was never built. The
//! real binary throughout, over loopback.

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::server::Server;
use common::*;

const SKILLS: &[(&str, &str, &str)] = &[
    (
        "pdf",
        "Merge and split PDF files",
        "# Merge\n\nJoin several PDF documents into one file.\n\n# Split\n\nCut a PDF into pages.\n",
    ),
    (
        "gif",
        "Make a looping animated GIF",
        "# Frames\n\nStitch frames into an animation.\n",
    ),
    (
        "deploy",
        "Deploy a web service to the cloud",
        "# Rollback\n\nUndo a bad release with kubectl rollout undo.\n",
    ),
    (
        "csv",
        "Clean and reshape CSV tables",
        "# Rows\n\nDrop empty rows and fix the header.\n",
    ),
    (
        "mail",
        "Write and send email replies",
        "# Tone\n\nKeep a reply short and polite.\n",
    ),
];

/// Words for queries no one asked before: each client makes its own.
const WORDS: &[&str] = &[
    "merge",
    "pdf",
    "files",
    "animation",
    "loop",
    "deploy",
    "cloud",
    "service",
    "csv",
    "rows",
    "email",
    "reply",
    "split",
    "pages",
    "release",
    "undo",
    "table",
    "header",
    "polite",
    "frames",
];

fn unseen_query(client: usize, n: usize) -> String {
    let pick = |k: usize| WORDS[(client * 7 + n * 3 + k * 5) % WORDS.len()];
    format!("{} {} {} c{client}q{n}", pick(0), pick(1), pick(2))
}

/// 16 clients at once, each sending `per_client` queries never seen
/// before (so no query vector is cached); every one must be answered 200
/// within the request timeout. Returns the slowest answer.
fn sixteen_clients(server: &Server, per_client: usize) -> Duration {
    let slowest = Arc::new(Mutex::new(Duration::ZERO));
    let failures = Arc::new(Mutex::new(Vec::new()));
    std::thread::scope(|scope| {
        for client in 0..16 {
            let (slowest, failures) = (slowest.clone(), failures.clone());
            scope.spawn(move || {
                for n in 0..per_client {
                    let q = unseen_query(client, n).replace(' ', "+");
                    let started = Instant::now();
                    let (status, _, body) = server.get(format!("/search?q={q}&limit=3").as_bytes());
                    let took = started.elapsed();
                    let mut slowest = slowest.lock().unwrap();
                    *slowest = (*slowest).max(took);
                    if status != 200 {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("{q}: {status} {body}"));
                    }
                }
            });
        }
    });
    let failures = failures.lock().unwrap();
    assert!(
        failures.is_empty(),
        "{} failed: {failures:#?}",
        failures.len()
    );
    let slowest = *slowest.lock().unwrap();
    slowest
}

fn embed_config(work: &Path, model: &Path) {
    std::fs::write(
        work.join("pipeline.toml"),
        format!(
            "[embed]\nrequired = true\nmodel_dir = \"{}\"\ncache_dir = \"emb\"\n",
            model.display()
        ),
    )
    .unwrap();
}

/// The deadlock `serve` had: the model's matrix multiply ran rayon work
/// on the search pool while its thread held the model's lock, picked up
/// another search that took the same lock, and hung for good.
#[test]
fn sixteen_clients_with_unseen_queries_over_a_store_with_vectors_are_all_answered() {
    let Some(model) = model_dir() else { return };
    let repo = repo_of("https://github.com/o/skills.git", SKILLS);
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    embed_config(work.path(), &model);
    let out = run(
        work.path(),
        &["build", "--source", repo.path().to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest = read_json(work.path().join("artifacts/latest/manifest.json"));
    assert!(
        manifest["embedder"].is_object(),
        "built with vectors: {manifest:#}"
    );
    let server = Server::start_with(work.path(), cache.path(), &["--request-timeout", "20"], &[]);
    // The first search opens the index and loads the model.
    let (status, _, body) = server.json("/search?q=merge+two+pdf+files+into+one&limit=1");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"][0]["displayName"], "pdf", "{body:#}");
    assert!(
        body["notice"].is_null(),
        "hybrid, not keywords only: {body:#}"
    );
    let slowest = sixteen_clients(&server, 6);
    assert!(slowest < Duration::from_secs(20), "{slowest:?}");
    // And it still stops on SIGTERM.
    assert!(server.stop().success());
}

/// A refresh that finds a new `latest/` builds its local index off the
/// query path: searches meanwhile answer from the old version at once,
/// then from the new one.
#[test]
fn searches_during_a_rebuild_answer_from_the_old_version_then_the_new() {
    let mut repo = repo_of("https://github.com/o/skills.git", SKILLS);
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let source = repo.path().to_str().unwrap().to_string();
    let out = run(work.path(), &["build", "--no-embed", "--source", &source]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Every local index build takes 3 s more than it would.
    let server = Server::start_with(
        work.path(),
        cache.path(),
        &["--refresh", "1", "--request-timeout", "10"],
        &[("AGENTFINDER_PAUSE", "engine-build:3")],
    );
    let ready = Instant::now();
    loop {
        let (_, _, health) = server.json("/health");
        if health["embedded"]["ready"] == true {
            break;
        }
        assert!(ready.elapsed() < Duration::from_secs(30), "{health:#}");
        std::thread::sleep(Duration::from_millis(100));
    }
    repo.write(
        "skills/yaml/SKILL.md",
        skill(
            "yaml",
            "Lint YAML manifests",
            "# Lint\n\nCatch tab indentation.\n",
        ),
    );
    repo.commit("yaml");
    let out = run(work.path(), &["build", "--no-embed", "--source", &source]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Search until the new skill is found; every answer comes fast.
    let started = Instant::now();
    let mut old_answers = 0;
    let mut slowest = Duration::ZERO;
    loop {
        let asked = Instant::now();
        let (status, _, body) = server.json("/search?q=tab+indentation+yaml+lint&limit=1");
        slowest = slowest.max(asked.elapsed());
        let (_, _, health) = server.json("/health");
        slowest = slowest.max(asked.elapsed());
        assert_eq!(status, 200, "{body:#}");
        assert_eq!(health["embedded"]["ready"], true, "{health:#}");
        if body["results"][0]["displayName"] == "yaml" {
            break;
        }
        old_answers += 1;
        assert!(started.elapsed() < Duration::from_secs(30), "never swapped");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        old_answers >= 10,
        "the old version answered while the new one was built ({old_answers} times)"
    );
    assert!(
        slowest < Duration::from_millis(1_500),
        "a search or health check waited for the rebuild: {slowest:?}"
    );
    // Two versions are kept; a third build removes the oldest.
    let engine = cache.path().join("agentfinder-skills/engine");
    let versions = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| e.path().join("meta.json").is_file())
            .count()
    };
    assert_eq!(versions(&engine), 2);
    repo.write(
        "skills/toml/SKILL.md",
        skill("toml", "Format TOML files", "# Keys\n\nSort the keys.\n"),
    );
    repo.commit("toml");
    let out = run(work.path(), &["build", "--no-embed", "--source", &source]);
    assert!(out.status.success(), "{}", stderr(&out));
    let started = Instant::now();
    loop {
        let (_, _, body) = server.json("/search?q=sort+the+toml+keys&limit=1");
        if body["results"][0]["displayName"] == "toml" {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "never swapped");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(versions(&engine), 2, "the oldest version was removed");
}

/// Two sources in one store, served; one's `latest/` becomes unreadable.
/// The engine keeps what it served for both, and `/health` says which
/// source and why.
#[test]
fn a_source_that_cannot_be_read_keeps_what_was_served_for_it() {
    let alpha = repo_of("https://github.com/a/skills.git", &SKILLS[..2]);
    let beta = repo_of("https://github.com/b/skills.git", &SKILLS[2..]);
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    sources_config(
        work.path(),
        &[("alpha", &alpha, ""), ("beta", &beta, "")],
        "",
    );
    let out = run(work.path(), &["build", "--no-embed"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let server = Server::start_with(work.path(), cache.path(), &["--refresh", "1"], &[]);
    let found = |q: &str| {
        let (status, _, body) = server.json(&format!("/search?q={q}&limit=1"));
        assert_eq!(status, 200, "{body:#}");
        body["results"][0]["displayName"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(found("looping+animated+gif"), "gif");
    assert_eq!(found("kubectl+rollout+undo"), "deploy");
    // beta's manifest is damaged (as a failing store would answer).
    let manifest = work
        .path()
        .join("artifacts/sources/beta/latest/manifest.json");
    assert!(manifest.is_file(), "{}", manifest.display());
    std::fs::write(&manifest, "{ not json").unwrap();
    let started = Instant::now();
    let health = loop {
        let (_, _, health) = server.json("/health");
        if health["embedded"]["problem"].is_string() {
            break health;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{health:#}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let problem = health["embedded"]["problem"].as_str().unwrap();
    assert!(problem.contains("beta"), "{health:#}");
    let problems = health["problems"].to_string();
    assert!(problems.contains("source beta left out"), "{health:#}");
    // Both sources still answer.
    assert_eq!(found("kubectl+rollout+undo"), "deploy");
    assert_eq!(found("looping+animated+gif"), "gif");
    assert_eq!(
        health["embedded"]["sources"],
        serde_json::json!(["alpha", "beta"])
    );
}

/// A source's timeout stops the work before promotion, never a promotion
/// under way: `latest/` stays complete and its lock is released.
#[test]
fn a_timeout_never_tears_latest() {
    let mut alpha = repo_of("https://github.com/a/skills.git", &SKILLS[..2]);
    let work = tempfile::tempdir().unwrap();
    sources_config(work.path(), &[("alpha", &alpha, "timeout_secs = 4")], "");
    let out = run(work.path(), &["build", "--no-embed"]);
    assert!(out.status.success(), "{}", stderr(&out));
    alpha.write(
        "skills/yaml/SKILL.md",
        skill("yaml", "Lint YAML manifests", "# Lint\n\nCatch tabs.\n"),
    );
    alpha.commit("yaml");
    // Promotion freezes for 6 s after removing latest/_SUCCESS: past the
    // source's 4 s.
    let out = binary()
        .args(["build", "--no-embed"])
        .current_dir(work.path())
        .env("AGENTFINDER_PAUSE", "promote-after-remove-success:6")
        .env_remove("MEILI_URL")
        .output()
        .unwrap();
    let log = stderr(&out);
    assert!(log.contains("pausing"), "{log}");
    let out = run(
        work.path(),
        &["verify", "--store", "artifacts/sources/alpha"],
    );
    assert!(out.status.success(), "latest/ torn: {}", stderr(&out));
    let latest = read_json(
        work.path()
            .join("artifacts/sources/alpha/latest/manifest.json"),
    );
    assert_eq!(latest["document_count"].as_u64().map(|n| n > 0), Some(true));
    let locks = work.path().join("artifacts/sources/alpha/locks");
    let held: Vec<_> = std::fs::read_dir(&locks)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(held.is_empty(), "locks left: {held:?}");
}

/// A builder whose output changed (a new output version) parses every
/// file again and writes an artifact of its own for a commit built before.
#[test]
fn a_new_output_version_parses_everything_again() {
    let mut repo = repo_of("https://github.com/o/skills.git", SKILLS);
    let work = tempfile::tempdir().unwrap();
    let source = repo.path().to_str().unwrap().to_string();
    let build = |env: &[(&str, &str)]| {
        let mut command = binary();
        command
            .args(["build", "--no-embed", "--source", &source])
            .current_dir(work.path())
            .env_remove("MEILI_URL");
        for (k, v) in env {
            command.env(k, v);
        }
        let out = command.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let first = build(&[]);
    let commit = field(&first, "commit");
    // Unchanged builder, one file changed: the others are reused.
    repo.write(
        "skills/pdf/SKILL.md",
        skill("pdf", "Merge PDF files", "# Merge\n\nJoin PDFs.\n"),
    );
    let second_commit = repo.commit("pdf");
    let second = build(&[]);
    assert_eq!(field(&second, "parsed"), "1", "{second}");
    assert_eq!(field(&second, "reused"), (SKILLS.len() - 1).to_string());
    // The same commit again, by a builder whose output changed.
    let bumped = build(&[("AGENTFINDER_OUTPUT_VERSION", "999")]);
    assert_eq!(
        field(&bumped, "parsed"),
        SKILLS.len().to_string(),
        "{bumped}"
    );
    assert_eq!(field(&bumped, "reused"), "0", "{bumped}");
    let artifact = work.path().join("artifacts/commits");
    let owned: Vec<String> = std::fs::read_dir(&artifact)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&second_commit))
        .collect();
    assert_eq!(owned.len(), 2, "an artifact of its own: {owned:?}");
    assert_ne!(commit, second_commit);
}

/// `find` over a store where one source's first build failed (its folder
/// exists, with no `latest/`): that registry is `unavailable`, "not built".
#[test]
fn find_reports_a_source_that_was_never_built() {
    let alpha = repo_of("https://github.com/a/skills.git", SKILLS);
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    sources_config(work.path(), &[("alpha", &alpha, "")], "");
    let out = run(work.path(), &["build", "--no-embed"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // What a failed first build leaves: a commit folder without _SUCCESS.
    let partial = work.path().join("artifacts/sources/beta/commits/abc");
    std::fs::create_dir_all(&partial).unwrap();
    std::fs::write(partial.join("manifest.json"), "{}").unwrap();
    let out = binary()
        .args(["find", "undo a bad release", "--out", "found.json"])
        .current_dir(work.path())
        .env_remove("MEILI_URL")
        .env("XDG_CACHE_HOME", cache.path())
        .output()
        .unwrap();
    assert!(work.path().join("found.json").is_file(), "{}", stderr(&out));
    let found = read_json(work.path().join("found.json"));
    let registries = found["registries_searched"]
        .as_array()
        .unwrap_or_else(|| panic!("{found:#}"));
    let beta = registries
        .iter()
        .find(|r| r["registry"] == "beta")
        .unwrap_or_else(|| panic!("{found:#}"));
    assert_eq!(beta["status"], "unavailable", "{found:#}");
    assert!(beta.to_string().contains("not built"), "{found:#}");
    let alpha = registries
        .iter()
        .find(|r| r["registry"] == "alpha")
        .unwrap_or_else(|| panic!("{found:#}"));
    assert_eq!(alpha["status"], "ok", "{found:#}");
}

/// The loaded-state file of a live index holding `sources` of `work`'s store.
fn loaded_state(work: &Path, sources: &[&str]) -> std::path::PathBuf {
    use agentfinder_skills_reader::meili::{LoadedSource, LoadedState};
    let sources = sources
        .iter()
        .map(|id| {
            let manifest =
                read_json(work.join(format!("artifacts/sources/{id}/latest/manifest.json")));
            LoadedSource {
                source: id.to_string(),
                source_commit: manifest["source_commit"].as_str().unwrap().to_string(),
                documents_sha256: manifest["documents_sha256"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                document_count: manifest["document_count"].as_u64().unwrap(),
            }
        })
        .collect();
    let state = LoadedState {
        schema_version: agentfinder_skills_reader::SCHEMA_VERSION,
        source_commit: "union".into(),
        documents_sha256: String::new(),
        document_count: 0,
        settings_sha256: String::new(),
        index: "hf_skills".into(),
        loaded_at: "2026-12-01T00:00:00Z".into(),
        sources,
    };
    let path = work.join("loaded.json");
    state.write(&path).unwrap();
    path
}

/// A sync whose live index holds a source it cannot read now refuses, and
/// says which, before it touches Meilisearch (here: nothing listens).
#[test]
fn sync_refuses_to_drop_a_loaded_source_it_cannot_read() {
    let alpha = repo_of("https://github.com/a/skills.git", &SKILLS[..2]);
    let beta = repo_of("https://github.com/b/skills.git", &SKILLS[2..]);
    let work = tempfile::tempdir().unwrap();
    sources_config(
        work.path(),
        &[("alpha", &alpha, ""), ("beta", &beta, "")],
        "",
    );
    let out = run(work.path(), &["build", "--no-embed"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let state = loaded_state(work.path(), &["alpha", "beta"]);
    std::fs::write(
        work.path()
            .join("artifacts/sources/beta/latest/manifest.json"),
        "{ not json",
    )
    .unwrap();
    let sync = |command: &str| {
        binary()
            .args([
                command,
                "--meili-url",
                "http://127.0.0.1:9",
                "--retries",
                "0",
            ])
            .arg("--state")
            .arg(&state)
            .current_dir(work.path())
            .output()
            .unwrap()
    };
    let out = sync("sync");
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{said}");
    assert!(
        said.contains("source beta") && said.contains("kept as it is"),
        "{said}"
    );
    // `load` forces: it goes on to Meilisearch (unreachable here).
    let out = sync("load");
    assert!(!stderr(&out).contains("source beta"), "{}", stderr(&out));
    assert_ne!(out.status.code(), Some(0));
}
