//! Helpers for end-to-end tests: real git repositories in temp dirs, and the
//! real binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A git repository in a temp dir, built with the `git` command.
pub struct GitRepo {
    pub dir: tempfile::TempDir,
    commits: u32,
}

impl GitRepo {
    pub fn new() -> Self {
        let repo = Self {
            dir: tempfile::tempdir().unwrap(),
            commits: 0,
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    /// A repository whose `origin` is `url`, as a clone of it would be.
    pub fn with_origin(url: &str) -> Self {
        let repo = Self::new();
        repo.git(&["remote", "add", "origin", url]);
        repo
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn git(&self, args: &[&str]) -> String {
        // One day apart: January 1st, 2nd, ..., then 28 days a month.
        let (month, day) = (self.commits / 28 + 1, self.commits % 28 + 1);
        let date = format!("2026-{month:02}-{day:02}T10:00:00Z");
        let out = Command::new("git")
            .args(args)
            .current_dir(self.path())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.org")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.org")
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    pub fn write(&self, path: &str, content: impl AsRef<[u8]>) {
        let full = self.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }

    pub fn remove(&self, path: &str) {
        std::fs::remove_file(self.path().join(path)).unwrap();
    }

    /// Commits everything; returns the commit id.
    pub fn commit(&mut self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
        self.commits += 1;
        self.git(&["rev-parse", "HEAD"])
    }
}

pub fn skill(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}")
}

/// A repository whose `origin` is `origin`, holding
/// `skills/<folder>/SKILL.md` for each of `skills` (folder, description,
/// body), in one commit.
pub fn repo_of(origin: &str, skills: &[(&str, &str, &str)]) -> GitRepo {
    let mut repo = GitRepo::with_origin(origin);
    for (folder, description, body) in skills {
        repo.write(
            &format!("skills/{folder}/SKILL.md"),
            skill(folder, description, body),
        );
    }
    repo.commit("skills");
    repo
}

/// A `pipeline.toml` in `work` with one `[[sources]]` per (id, repository,
/// extra lines), then `tail`.
pub fn sources_config(work: &Path, sources: &[(&str, &GitRepo, &str)], tail: &str) {
    let mut text: String = sources
        .iter()
        .map(|(id, repo, extra)| {
            format!(
                "[[sources]]\nid = \"{id}\"\nlocation = \"{}\"\n{extra}\n",
                repo.path().display()
            )
        })
        .collect();
    text.push_str(tail);
    std::fs::write(work.join("pipeline.toml"), text).unwrap();
}

/// The binary, kept off the network (a build without a local model would
/// otherwise try to download one from the Hub) and off the user's models
/// and Hugging Face cache: a model there would make every build embed with
/// a debug binary, so the suite's duration would depend on the machine.
/// Tests about embedding name their model folder explicitly.
pub fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentfinder-skills"));
    command
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HUB_CACHE", "/nonexistent/agentfinder-tests/hub")
        .env(
            agentfinder_skills::embed::MODELS_ENV,
            "/nonexistent/agentfinder-tests/models",
        )
        .env_remove("HF_HOME");
    command
}

/// The embedding model the tests use.
pub const MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// Set (to 1) where the model must be present: an embedding test then
/// fails instead of skipping (`.ci/run` sets it, after fetching the model).
pub const REQUIRE_MODEL_ENV: &str = "AGENTFINDER_REQUIRE_MODEL";

/// The all-MiniLM-L6-v2 files: `$AGENTFINDER_MODEL_DIR`, else where
/// scripts/fetch-model.sh unpacks them (this user's models), else where
/// it did before (`.cache/models` of the checkout); `None`, saying why,
/// when they are absent.
pub fn model_dir() -> Option<PathBuf> {
    let has_model = |dir: &PathBuf| dir.join("model.safetensors").is_file();
    let dir = std::env::var_os("AGENTFINDER_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let user = agentfinder_skills::embed::user_model_dir(MODEL);
            let checkout =
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".cache/models/all-MiniLM-L6-v2");
            user.filter(has_model).unwrap_or(checkout)
        });
    let missing = format!("no model in {}", dir.display());
    let found = dir.join("model.safetensors").is_file().then_some(dir);
    present_or_skipped(
        found,
        REQUIRE_MODEL_ENV,
        &missing,
        "run scripts/fetch-model.sh",
    )
}

/// Set (to 1) where a real Meilisearch must be there: a gated test run with
/// `--ignored` then fails without `MEILI_TEST_URL` instead of passing.
pub const REQUIRE_MEILI_ENV: &str = "AGENTFINDER_REQUIRE_MEILI";

/// The real Meilisearch of the gated tests (`$MEILI_TEST_URL`), or `None`,
/// saying the test is skipped (a failure with [`REQUIRE_MEILI_ENV`]).
pub fn meili_test_url() -> Option<String> {
    present_or_skipped(
        std::env::var("MEILI_TEST_URL")
            .ok()
            .filter(|u| !u.is_empty()),
        REQUIRE_MEILI_ENV,
        "MEILI_TEST_URL is not set",
        "see docs/meilisearch.md: Testing against a real Meilisearch",
    )
}

/// `found`, else `None` after saying the test is skipped because of
/// `missing` (and what to do: `hint`), or a panic when `require_env` is
/// set to 1 (where CI installed the piece, a skip would hide its absence).
pub fn present_or_skipped<T>(
    found: Option<T>,
    require_env: &str,
    missing: &str,
    hint: &str,
) -> Option<T> {
    if found.is_some() {
        return found;
    }
    if std::env::var_os(require_env).is_some_and(|v| v == "1") {
        panic!("{missing} and {require_env}=1: {hint}");
    }
    eprintln!("skipped: {missing} ({hint})");
    None
}

/// The binary in `cwd` with no Meilisearch configured, so `search`,
/// `eval` and `find` answer from the embedded engine, whose local indexes
/// go under `cache` (`XDG_CACHE_HOME`).
pub fn embedded_engine(cwd: &Path, cache: &Path) -> Command {
    let mut command = binary();
    command
        .current_dir(cwd)
        .env_remove("MEILI_URL")
        .env("XDG_CACHE_HOME", cache);
    command
}

/// Runs the binary in `cwd` (no pipeline.toml there, so defaults apply).
pub fn run(cwd: &Path, args: &[&str]) -> Output {
    binary()
        .args(args)
        .current_dir(cwd)
        .env_remove("AGENTFINDER_FAILPOINT")
        .output()
        .unwrap()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn read_json(path: PathBuf) -> serde_json::Value {
    serde_json::from_slice(
        &std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

pub fn documents(path: PathBuf) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
/// Set (to 1) where the MCP client must be present (`.ci/run` sets it).
pub const REQUIRE_MCP_ENV: &str = "AGENTFINDER_REQUIRE_MCP";

/// A Python with the `mcp` SDK: `$AGENTFINDER_MCP_PYTHON`, else `python3`
/// if it has it; `None`, saying why, otherwise.
pub fn mcp_python() -> Option<PathBuf> {
    let python = std::env::var_os("AGENTFINDER_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("python3"));
    let has_sdk = std::process::Command::new(&python)
        .args(["-c", "import mcp.client"])
        .output()
        .is_ok_and(|out| out.status.success());
    let missing = format!("{} has no `mcp` package", python.display());
    let hint = "pip install mcp, or set AGENTFINDER_MCP_PYTHON";
    present_or_skipped(has_sdk.then_some(python), REQUIRE_MCP_ENV, &missing, hint)
}

/// A work folder whose builds walk `[walk] history_depth = depth`, without
/// embeddings.
pub fn work_at_depth(depth: usize) -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        work.path().join("pipeline.toml"),
        format!("[walk]\nhistory_depth = {depth}\n\n[embed]\nenabled = false\n"),
    )
    .unwrap();
    work
}

/// The official Python MCP client (`tests/mcp/client.py`) run with
/// `python` over `transport` (see the script), hermetic: no Hub, no
/// Meilisearch, `cache` as its cache folder; stdin and stdout piped.
pub fn mcp_client(python: &Path, transport: &[&str], cache: &Path) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let mut command = Command::new(python);
    command
        .arg(script)
        .args(transport)
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HUB_CACHE", "/nonexistent/agentfinder-tests/hub")
        .env_remove("HF_HOME")
        .env_remove("MEILI_URL")
        .env("XDG_CACHE_HOME", cache)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    command
}

pub mod git_http;
pub mod meili_answers;
pub mod moto;
pub mod server;

/// The value of `key=` in a summary line.
pub fn field(summary: &str, key: &str) -> String {
    summary
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {summary}"))
        .to_string()
}

/// One complete file of `commits/<artifact>/` in the store at `store`
/// (relative to `cwd`): commit artifacts hold shared parts, so this runs
/// `materialize` into a temporary folder and reads the file from there.
pub fn commit_file(cwd: &Path, store: &str, artifact: &str, file: &str) -> Vec<u8> {
    let out_dir = tempfile::tempdir().unwrap();
    let out = run(
        cwd,
        &[
            "materialize",
            "--store",
            store,
            "--commit",
            artifact,
            "--out",
            out_dir.path().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "materialize: {}", stderr(&out));
    std::fs::read(out_dir.path().join(file)).unwrap()
}

/// The documents of `commits/<artifact>/` (see [`commit_file`]).
pub fn commit_documents(cwd: &Path, store: &str, artifact: &str) -> Vec<serde_json::Value> {
    String::from_utf8(commit_file(cwd, store, artifact, "hf-skills.ndjson"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The sentences of `fixtures/embeddings/reference.json` and their vectors
/// from an independent implementation of all-MiniLM-L6-v2.
pub fn reference_embeddings() -> (Vec<String>, Vec<Vec<f32>>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/embeddings/reference.json");
    let value = read_json(path);
    let sentences = value["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    let vectors = value["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect()
        })
        .collect();
    (sentences, vectors)
}
