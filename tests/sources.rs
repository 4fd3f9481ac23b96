//! Many sources, end to end: three local git repositories, a Codex plugin
//! cache (a plain folder with `current` and `local` aliases), a source that
//! does not exist, a server that answers 429 then 503, one that answers 429
//! for ever, and one that never answers. The run report, the per-source
//! stores, a second run that keeps a broken source's latest/, and `find`
//! with no Meilisearch run here; the union load, `search --format topgun`
//! and `find` against a real Meilisearch run when MEILI_TEST_URL is set.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::*;
use serde_json::Value;

/// A loopback HTTP server answering each request with the next status of
/// `statuses` (the last one for ever); counts requests. `None` as a status
/// means: accept and never answer.
struct FaultServer {
    url: String,
    requests: Arc<AtomicUsize>,
}

impl FaultServer {
    fn start(statuses: Vec<Option<u16>>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/skills.git", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let counter = requests.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut buffer = [0u8; 4096];
                // A connection closed unread is the builder's connect probe.
                if !matches!(stream.read(&mut buffer), Ok(n) if n > 0) {
                    continue;
                }
                let n = counter.fetch_add(1, Ordering::SeqCst);
                match statuses[n.min(statuses.len() - 1)] {
                    Some(status) => {
                        let _ = write!(
                            stream,
                            "HTTP/1.1 {status} Status\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        );
                    }
                    None => held.push(stream),
                }
            }
        });
        Self { url, requests }
    }
}

/// A git repository named by `origin`, with `skills` as (folder, name, description).
fn git_source(origin: &str, skills: &[(&str, &str, &str)]) -> GitRepo {
    let mut repo = GitRepo::with_origin(origin);
    for (folder, name, description) in skills {
        repo.write(
            &format!("skills/{folder}/SKILL.md"),
            skill(name, description, &format!("# Usage\n\n{description}.\n")),
        );
    }
    repo.commit("skills");
    repo
}

/// Codex installations under `home`: a plugin cache with one plugin whose
/// version 1.0.0 is also reachable as `current` (a symlink) and `local` (a
/// copy), and one skill in `~/.codex/skills`.
fn codex_home(home: &Path) {
    let cache = home.join(".codex/plugins/cache/openai/docs");
    for version in ["1.0.0", "local"] {
        let dir = cache.join(version).join("skills/sheets");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            skill("sheets", "Edit spreadsheets", "# Use\n\nOpen a sheet.\n"),
        )
        .unwrap();
    }
    std::os::unix::fs::symlink("1.0.0", cache.join("current")).unwrap();
    // And one skill installed by hand, in ~/.codex/skills/<skill>/SKILL.md.
    let notes = home.join(".codex/skills/notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(
        notes.join("SKILL.md"),
        skill("notes", "Keep meeting notes", "# Use\n\nWrite notes.\n"),
    )
    .unwrap();
}

struct World {
    work: tempfile::TempDir,
    home: tempfile::TempDir,
    alpha: GitRepo,
    _repos: Vec<GitRepo>,
    beta: PathBuf,
    limited: FaultServer,
    always_limited: FaultServer,
    silent: FaultServer,
}

impl World {
    fn new(index: &str) -> Self {
        let alpha = git_source(
            "https://github.com/alpha/skills.git",
            &[
                ("pdf", "pdf", "Merge and split PDF files"),
                ("pdf-old", "PDF", "Older PDF merging tool"),
                ("gif", "gif", "Make a looping GIF"),
            ],
        );
        let beta = git_source(
            "https://gitlab.com/beta/skills.git",
            &[
                ("pdf", "pdf", "Fill PDF forms and merge PDF files"),
                ("csv", "csv", "Clean CSV data"),
            ],
        );
        let gamma = git_source(
            "https://example.org/gamma/skills.git",
            &[
                ("deploy", "deploy", "Deploy a web service"),
                ("scan", "scan", "Scan paper into a PDF"),
            ],
        );
        let home = tempfile::tempdir().unwrap();
        codex_home(home.path());
        let limited = FaultServer::start(vec![Some(429), Some(503)]);
        let always_limited = FaultServer::start(vec![Some(429)]);
        let silent = FaultServer::start(vec![None]);
        let work = tempfile::tempdir().unwrap();
        let config = format!(
            r#"
[source]
concurrency = 8

[output]
store = "store"
index = "{index}"

[[sources]]
id = "alpha"
location = "{alpha}"

[[sources]]
id = "beta"
location = "{beta}"

[[sources]]
id = "gamma"
location = "{gamma}"
repo = "gamma/skills"
# A self-hosted server on plain http: its install URLs are dropped.
links = {{ blob = "http://git.example.org/{{repo}}/blob/{{commit}}/{{path}}" }}

[[sources]]
id = "codex-plugins"
preset = "codex-plugins"

[[sources]]
id = "codex"
preset = "codex-skills"

[[sources]]
id = "gone"
location = "~/not-installed/skills"

[[sources]]
id = "limited"
location = "{limited}"

[[sources]]
id = "always-limited"
location = "{always}"

[[sources]]
id = "silent"
location = "{silent}"
timeout_secs = 3

[[sources]]
id = "off"
location = "/nowhere"
enabled = false
"#,
            alpha = alpha.path().display(),
            beta = beta.path().display(),
            gamma = gamma.path().display(),
            limited = limited.url,
            always = always_limited.url,
            silent = silent.url,
        );
        std::fs::write(work.path().join("pipeline.toml"), config).unwrap();
        let beta_path = beta.path().to_path_buf();
        Self {
            work,
            home,
            alpha,
            _repos: vec![beta, gamma],
            beta: beta_path,
            limited,
            always_limited,
            silent,
        }
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        binary()
            .args(args)
            .current_dir(self.work.path())
            .env("HOME", self.home.path())
            .env_remove("MEILI_URL")
            .output()
            .unwrap()
    }

    fn store(&self) -> PathBuf {
        self.work.path().join("store")
    }

    fn report(&self, stdout: &str) -> Value {
        read_json(self.store().join(field(stdout, "report")))
    }
}

fn outcome<'a>(report: &'a Value, source: &str) -> &'a Value {
    report["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["source"] == source)
        .unwrap_or_else(|| panic!("{source} not in {report:#}"))
}

#[test]
fn every_source_is_built_or_reported_and_none_holds_up_the_others() {
    let world = World::new("unused");
    let started = std::time::Instant::now();
    let out = world.run(&["build", "--no-embed"]);
    let elapsed = started.elapsed();
    let (summary, log) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "{log}\n{summary}");
    let report = world.report(&summary);
    assert_valid("run-report", &report);

    for (id, documents) in [
        ("alpha", 6),
        ("beta", 4),
        ("gamma", 4),
        ("codex-plugins", 2),
        ("codex", 2),
    ] {
        let source = outcome(&report, id);
        assert_eq!(source["status"], "ok", "{source}");
        assert_eq!(source["reason"], Value::Null);
        assert_eq!(source["result_count"], documents, "{id}");
        assert!(world
            .store()
            .join(format!("sources/{id}/latest/_SUCCESS"))
            .is_file());
    }
    let reason = |id: &str| outcome(&report, id)["reason"].as_str().unwrap().to_string();
    for id in ["gone", "limited", "always-limited", "silent"] {
        assert_eq!(outcome(&report, id)["status"], "unavailable", "{id}");
        assert!(!world.store().join(format!("sources/{id}/latest")).exists());
    }
    assert!(reason("gone").ends_with("not-installed/skills does not exist on this machine"));
    assert!(
        reason("gone").starts_with(world.home.path().to_str().unwrap()),
        "~ expands: {}",
        reason("gone")
    );
    // 429, then (after 1 s) 503: unavailable with the server's status.
    assert_eq!(reason("limited"), "server error (HTTP 503)");
    assert_eq!(world.limited.requests.load(Ordering::SeqCst), 2);
    assert!(outcome(&report, "limited")["latency_ms"].as_u64().unwrap() >= 1000);
    // 429 for ever: tried after 1, 2 and 4 s, then "rate limited".
    assert_eq!(reason("always-limited"), "rate limited");
    assert_eq!(world.always_limited.requests.load(Ordering::SeqCst), 4);
    // A server that never answers costs its timeout (3 s here), not more.
    assert_eq!(
        reason("silent"),
        "timed out after 3 s, before promotion (latest/ unchanged)"
    );
    assert!(world.silent.requests.load(Ordering::SeqCst) >= 1);
    let silent_ms = outcome(&report, "silent")["latency_ms"].as_u64().unwrap();
    assert!((3000..5000).contains(&silent_ms), "{silent_ms}");
    // A disabled source is not built, nor reported.
    assert!(report["sources"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["source"] != "off"));
    assert_eq!(
        (
            &report["ok_count"],
            &report["unavailable_count"],
            &report["unavailable_warning"]
        ),
        (&Value::from(5), &Value::from(4), &Value::from(true))
    );
    assert!(
        log.contains("4 sources are unavailable: gone (")
            && log.contains("silent (timed out after 3 s, before promotion"),
        "{log}"
    );
    assert!(
        summary.contains("sources=9 ok=5 failed=0 unavailable=4"),
        "{summary}"
    );
    // Sources ran at once: the slowest (always-limited, 7 s of pauses) bounds the run.
    assert!(elapsed.as_secs() < 14, "{elapsed:?}");

    // One skill of the plugin cache, from the version `current` names.
    let plugins = documents(
        world
            .store()
            .join("sources/codex-plugins/latest/hf-skills.ndjson"),
    );
    let paths: std::collections::BTreeSet<&str> = plugins
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths.into_iter().collect::<Vec<_>>(),
        ["openai/docs/1.0.0/skills/sheets/SKILL.md"]
    );
    // Documents name their source; ids never repeat across sources.
    let mut ids = std::collections::HashSet::new();
    for id in ["alpha", "beta", "gamma", "codex-plugins", "codex"] {
        let docs = documents(
            world
                .store()
                .join(format!("sources/{id}/latest/hf-skills.ndjson")),
        );
        assert!(docs.iter().all(|d| d["source"] == id));
        assert!(docs.iter().all(|d| d["last_updated"].is_string()));
        for doc in docs {
            assert!(ids.insert(doc["id"].as_str().unwrap().to_string()));
        }
    }

    // Beta disappears: unavailable, and its latest/ stays as it was.
    let before = std::fs::read(world.store().join("sources/beta/latest/_SUCCESS")).unwrap();
    std::fs::remove_dir_all(&world.beta).unwrap();
    let out = world.run(&["build", "--no-embed", "--only", "alpha,beta"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let again = world.report(&stdout(&out));
    assert_eq!(again["sources"].as_array().unwrap().len(), 2);
    assert_eq!(outcome(&again, "alpha")["status"], "ok");
    assert_eq!(outcome(&again, "beta")["status"], "unavailable");
    assert_eq!(
        std::fs::read(world.store().join("sources/beta/latest/_SUCCESS")).unwrap(),
        before
    );
    assert_ne!(field(&stdout(&out), "report"), field(&summary, "report"));

    // Nothing built at all: exit 9, naming why.
    let out = world.run(&["build", "--no-embed", "--only", "gone"]);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert!(stderr(&out).contains("no source was built: gone ("));
    let out = world.run(&["build", "--only", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--only names nope"));
}

#[test]
fn find_without_meilisearch_answers_from_the_embedded_engine_in_topguns_shape() {
    let world = World::new("unused");
    let out = world.run(&["build", "--no-embed", "--only", "alpha,beta,gone"]);
    assert!(out.status.success(), "{}", stderr(&out));

    // The store has sources and no latest/ of its own: that absence is not
    // waited for as if a promotion were under way (first pause 20 s here).
    let store =
        agentfinder_skills_reader::store::Store::open(world.store().to_str().unwrap()).unwrap();
    let started = std::time::Instant::now();
    let set = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(agentfinder_skills_reader::sources::ArtifactSet::read(
            &store,
            &agentfinder_skills_reader::contract::ArtifactLocation::Latest,
            4,
            std::time::Duration::from_secs(20),
        ))
        .unwrap();
    assert_eq!((set.parts.len(), set.left_out.len()), (2, 0));
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());

    // The local index is built before the deadline starts, so a deadline
    // shorter than the build still leaves it built (and the next find fast).
    let out = world.run(&[
        "find",
        "merge pdf files",
        "--out",
        "quick.json",
        "--deadline",
        "0.001",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let engine_cache = world.home.path().join(".cache/agentfinder-skills/engine");
    let built: Vec<_> = std::fs::read_dir(&engine_cache)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("meta.json").is_file())
        .collect();
    assert_eq!(built.len(), 1, "{}", stderr(&out));

    let out = world.run(&["find", "merge pdf files", "--topgun-home"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let hash = agentfinder_skills_serve::present::topgun::query_hash("merge pdf files");
    let path = world
        .home
        .path()
        .join(format!(".topgun/found-skills-{}.json", &hash[..16]));
    let output = read_json(path.clone());
    assert_valid("findskills-output", &output);
    assert_eq!(
        stdout(&out),
        format!(
            "## FIND COMPLETE\n\nFound {} skills from 3 registries (1 unavailable).\nResults: {}\n",
            output["total_results"],
            path.display()
        )
    );
    assert_eq!(output["query_hash"], hash);
    let registries = output["registries_searched"].as_array().unwrap();
    let registry = |name: &str| registries.iter().find(|r| r["registry"] == name).unwrap();
    for ok in ["alpha", "beta"] {
        assert_eq!(registry(ok)["status"], "ok", "{registries:?}");
        assert_eq!(registry(ok)["reason"], Value::Null);
        assert!(registry(ok)["result_count"].as_u64().unwrap() >= 1);
    }
    assert!(registry("gone")["reason"]
        .as_str()
        .unwrap()
        .starts_with("not built: "));
    let results = output["results"].as_array().unwrap();
    // Each registry answered with its own source's skills only; alpha's
    // `pdf` and `PDF` are one result, beta's `pdf` is kept beside it.
    assert!(results
        .iter()
        .all(|r| r["source_registry"] == "alpha" || r["source_registry"] == "beta"));
    let pdfs = |source: &str| {
        results
            .iter()
            .filter(|r| {
                r["source_registry"] == source
                    && r["name"].as_str().unwrap().eq_ignore_ascii_case("pdf")
            })
            .count()
    };
    assert_eq!((pdfs("alpha"), pdfs("beta")), (1, 1), "{results:#?}");
    assert!(output["dedup_removed"].as_u64().unwrap() >= 1);
    assert_eq!(output["unavailable_warning"], false);

    // With Meilisearch configured but down, every built registry is unavailable.
    let out = binary()
        .args([
            "find",
            "merge pdf files",
            "--out",
            "down.json",
            "--meili-url",
            "http://127.0.0.1:9",
            "--retries",
            "0",
        ])
        .current_dir(world.work.path())
        .env("HOME", world.home.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let down = read_json(world.work.path().join("down.json"));
    assert_valid("findskills-output", &down);
    assert_eq!(down["unavailable_count"], 3);
    assert_eq!(down["unavailable_warning"], true);
    assert_eq!(down["total_results"], 0);
}

/// Validates `value` against `docs/schemas/<name>.schema.json`.
fn assert_valid(name: &str, value: &Value) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/schemas");
    let schema = inline_refs(read_json(dir.join(format!("{name}.schema.json"))), &dir);
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:?}\n{value:#}");
}

/// The schema with each `$ref` to a sibling file replaced by that file.
fn inline_refs(value: Value, dir: &Path) -> Value {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(file)) = map.get("$ref") {
                if file.ends_with(".json") {
                    return inline_refs(read_json(dir.join(file)), dir);
                }
            }
            Value::Object(
                map.into_iter()
                    .map(|(k, v)| (k, inline_refs(v, dir)))
                    .collect(),
            )
        }
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| inline_refs(v, dir)).collect())
        }
        other => other,
    }
}

/// Against a real Meilisearch: the union is loaded once, results carry
/// their source, and `find` applies TopGun's rules field by field.
#[test]
#[ignore = "needs a real Meilisearch: set MEILI_TEST_URL (and MEILI_TEST_KEY), run with --ignored"]
fn one_index_serves_every_source_in_topguns_contract() {
    let Some(url) = meili_test_url() else {
        return;
    };
    let index = format!("e2e_sources_{}", std::process::id());
    let mut world = World::new(&index);
    let state = world.work.path().join("loaded.json");
    let meili = |args: &[&str]| {
        let mut command = binary();
        command
            .args(args)
            .arg("--state")
            .arg(&state)
            .current_dir(world.work.path())
            .env("HOME", world.home.path())
            .env("MEILI_URL", &url);
        match std::env::var("MEILI_TEST_KEY") {
            Ok(key) => command.env("MEILI_MASTER_KEY", key),
            Err(_) => command.env_remove("MEILI_MASTER_KEY"),
        };
        command.output().unwrap()
    };
    let out = world.run(&[
        "build",
        "--no-embed",
        "--only",
        "alpha,beta,gamma,codex-plugins,gone",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));

    let out = meili(&["sync"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let line = stdout(&out);
    assert!(
        line.contains("sources=4") && line.contains("documents=16"),
        "{line}"
    );
    assert!(line.contains("outcome=loaded"), "{line}");
    let loaded = read_json(state.clone());
    assert_eq!(loaded["sources"].as_array().unwrap().len(), 4);
    let out = meili(&["sync"]);
    assert!(
        stdout(&out).contains("outcome=unchanged"),
        "{}",
        stdout(&out)
    );

    // search --source keeps one source.
    let out = meili(&[
        "search",
        "pdf",
        "--source",
        "beta",
        "--json",
        "--keyword-only",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let hits: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(!hits.as_array().unwrap().is_empty());
    assert!(hits
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["metadata"]["sourceId"] == "beta"));

    // The adapter object: results from several sources, ten fields each.
    let out = meili(&[
        "search",
        "pdf",
        "--format",
        "topgun",
        "--keyword-only",
        "--registry",
        "agentfinder",
    ]);
    let adapter: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_valid("topgun-adapter-response", &adapter);
    assert_eq!(adapter["status"], "ok");
    let sources: std::collections::BTreeSet<&str> = adapter["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["source_registry"].as_str().unwrap())
        .collect();
    assert!(
        sources.contains("alpha") && sources.contains("beta"),
        "{sources:?}"
    );

    // find: one registry per source, TopGun's rules applied.
    let file = world.work.path().join("found.json");
    let out = meili(&[
        "find",
        "pdf",
        "--out",
        file.to_str().unwrap(),
        "--keyword-only",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let found = read_json(file.clone());
    assert_valid("findskills-output", &found);
    let registries = found["registries_searched"].as_array().unwrap();
    let status = |name: &str| {
        registries
            .iter()
            .find(|r| r["registry"] == name)
            .unwrap_or_else(|| panic!("{name}: {registries:?}"))["status"]
            .clone()
    };
    for ok in ["alpha", "beta", "gamma", "codex-plugins"] {
        assert_eq!(status(ok), "ok", "{ok}");
    }
    assert_eq!(status("gone"), "unavailable");
    let results = found["results"].as_array().unwrap();
    for result in results {
        assert_eq!(result.as_object().unwrap().len(), 10, "{result}");
        assert_eq!(
            result["raw_metadata"]["envelope"],
            agentfinder_skills_serve::present::topgun::UNTRUSTED_OPEN
        );
        assert_eq!(
            result["raw_metadata"]["end"],
            agentfinder_skills_serve::present::topgun::UNTRUSTED_CLOSE
        );
        assert_eq!(result["content_sha"].as_str().unwrap().len(), 64);
        assert!(result["last_updated"].is_string());
        assert_eq!(
            (result["stars"].clone(), result["install_count"].clone()),
            (Value::Null, Value::Null)
        );
    }
    let pdfs: Vec<&Value> = results
        .iter()
        .filter(|r| r["name"].as_str().unwrap().eq_ignore_ascii_case("pdf"))
        .collect();
    // alpha's `pdf` and `PDF` are one (the dedup), beta's pdf stays (another source).
    let pdf_sources: Vec<&str> = pdfs
        .iter()
        .map(|r| r["source_registry"].as_str().unwrap())
        .collect();
    assert_eq!(
        pdf_sources.iter().filter(|s| **s == "alpha").count(),
        1,
        "{pdf_sources:?}"
    );
    assert!(pdf_sources.contains(&"beta"), "{pdf_sources:?}");
    assert!(found["dedup_removed"].as_u64().unwrap() >= 1);
    // gamma links over plain http: install_url dropped.
    let gamma: Vec<&Value> = results
        .iter()
        .filter(|r| r["source_registry"] == "gamma")
        .collect();
    assert!(!gamma.is_empty() && gamma.iter().all(|r| r["install_url"].is_null()));
    assert!(
        stderr(&out).contains("Dropped non-HTTPS install_url from gamma:scan"),
        "{}",
        stderr(&out)
    );
    assert!(results
        .iter()
        .filter(|r| r["source_registry"] == "alpha")
        .all(|r| r["install_url"]
            .as_str()
            .unwrap()
            .starts_with("https://github.com/alpha/skills/blob/")));
    assert_eq!(found["total_results"], results.len());
    assert!(stdout(&out).starts_with("## FIND COMPLETE\n\nFound "));

    // One source changes: the next sync reloads the union.
    world.alpha.write(
        "skills/csv/SKILL.md",
        skill("csv", "Convert CSV to JSON", "# Usage\n\nConvert.\n"),
    );
    world.alpha.commit("csv");
    let out = world.run(&["build", "--no-embed", "--only", "alpha"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let line = stdout(&meili(&["sync"]));
    assert!(
        line.contains("outcome=loaded") && line.contains("documents=18"),
        "{line}"
    );

    let mut config = agentfinder_skills_reader::meili::MeiliConfig::new(url);
    config.api_key = std::env::var("MEILI_TEST_KEY")
        .ok()
        .map(agentfinder_skills_reader::meili::Secret::new);
    let client = config.client().unwrap();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        if let Ok(task) = client.delete_index(&index).await {
            let _ = task
                .wait_for_completion(&client, None, Some(std::time::Duration::from_secs(30)))
                .await;
        }
    });
}
