//! The edges an operator meets, tried as one would: a commit from a wrong
//! clock, Ctrl-C and SIGTERM in the middle of a build, a crash's leftovers,
//! `lint` of the wrong folder or of a clone, `verify` of a store of many
//! sources, an empty source, a first build that fails.

mod common;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use common::*;

/// Commits everything in `repo` with author and committer dates `date`
/// (RFC 3339); returns the commit id.
fn commit_dated(repo: &GitRepo, message: &str, date: &str) -> String {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(repo.path())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.org")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.org")
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", message]);
    git(&["rev-parse", "HEAD"])
}

/// The commit `latest/` of the store at `store` holds.
fn latest_commit(store: &Path) -> String {
    read_json(store.join("latest/manifest.json"))["source_commit"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The `.staging-*` folders in `dir`.
fn staging_folders(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(".staging-"))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_commit_dated_2099_does_not_freeze_latest() {
    let work = tempfile::tempdir().unwrap();
    let mut repo = repo_of(
        "https://github.com/acme/skills.git",
        &[("pdf", "Reads PDF files", "# Use\n\nRead.\n")],
    );
    let first = repo.git(&["rev-parse", "HEAD"]);
    let source = repo.path().to_str().unwrap().to_string();
    let source = source.as_str();
    let store = work.path().join("artifacts");
    let build = |extra: &[&str]| {
        let mut args = vec!["build", "--no-embed", "--source", source];
        args.extend_from_slice(extra);
        run(work.path(), &args)
    };
    assert!(build(&[]).status.success());

    // A contributor's clock says 2099.
    repo.write(
        "skills/pdf/SKILL.md",
        skill("pdf", "Reads PDF files, fast", "# Use\n"),
    );
    let future = commit_dated(&repo, "from the future", "2099-01-01T00:00:00Z");
    let out = build(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(latest_commit(&store), future);

    // The next commit, dated today, descends from it: latest/ moves on.
    repo.write(
        "skills/csv/SKILL.md",
        skill("csv", "Reads CSV files", "# Use\n"),
    );
    let next = repo.commit("csv");
    let out = build(&[]);
    assert!(
        out.status.success(),
        "a descendant was refused: {}",
        stderr(&out)
    );
    assert_eq!(latest_commit(&store), next);

    // Moving back to an ancestor is refused, whatever its date says.
    let out = build(&["--ref", &first]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is an ancestor of"),
        "{}",
        stderr(&out)
    );
    assert_eq!(latest_commit(&store), next);
}

/// A build in `work` started with its stderr read line by line.
struct Running {
    child: Child,
    lines: Receiver<String>,
    seen: String,
}

impl Running {
    fn start(mut command: Command) -> Self {
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            lines,
            seen: String::new(),
        }
    }

    /// Waits (up to a minute) for a line of stderr holding `text`.
    fn wait_for(&mut self, text: &str) {
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push_str(&line);
                    self.seen.push('\n');
                    if line.contains(text) {
                        return;
                    }
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    panic!("no `{text}` on stderr: {}", self.seen)
                }
            }
        }
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Its exit code (`None`: killed by a signal) and all of its stderr.
    fn finish(mut self) -> (Option<i32>, String) {
        let status = self.child.wait().unwrap();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push_str(&line);
            self.seen.push('\n');
        }
        (status.code(), self.seen)
    }
}

/// The binary building `source` into `work/artifacts`, pausing `seconds`
/// at the fail point `pause` (see `agentfinder_skills::failpoint`).
fn paused_build(work: &Path, source: &str, pause: &str, seconds: u32, extra: &[&str]) -> Command {
    let mut command = binary();
    command
        .args(["build", "--source", source])
        .args(extra)
        .current_dir(work)
        .env("AGENTFINDER_PAUSE", format!("{pause}:{seconds}"))
        .env_remove("AGENTFINDER_FAILPOINT");
    command
}

#[test]
fn ctrl_c_and_sigterm_stop_a_build_cleanly() {
    let repo = repo_of(
        "https://github.com/acme/skills.git",
        &[("pdf", "Reads PDF files", "# Use\n\nRead.\n")],
    );
    let source = repo.path().to_str().unwrap();
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let work = tempfile::tempdir().unwrap();
        let store = work.path().join("artifacts");
        let mut build = Running::start(paused_build(
            work.path(),
            source,
            "stage-before-batch",
            2,
            &["--no-embed"],
        ));
        build.wait_for("failpoint stage-before-batch: pausing");
        assert_eq!(staging_folders(&store).len(), 1, "the build is staging");
        build.signal(signal);
        let (exit, text) = build.finish();
        assert_eq!(exit, Some(code), "SIG{signal}: {text}");
        assert!(
            text.contains(&format!("SIG{signal} received: stopping at the next batch")),
            "{text}"
        );
        assert!(
            text.contains(&format!("interrupted by SIG{signal}")),
            "{text}"
        );
        assert_eq!(staging_folders(&store), Vec::<PathBuf>::new(), "{text}");
        assert!(!store.join("latest").exists(), "nothing was promoted");

        // The next build completes.
        let out = run(work.path(), &["build", "--no-embed", "--source", source]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(latest_commit(&store), repo.git(&["rev-parse", "HEAD"]));
    }
}

#[test]
fn ctrl_c_stops_a_build_of_many_sources() {
    let work = tempfile::tempdir().unwrap();
    let a = repo_of(
        "https://github.com/acme/a.git",
        &[("pdf", "Reads PDF files", "# Use\n")],
    );
    sources_config(work.path(), &[("a", &a, "")], "[embed]\nenabled = false\n");
    let mut command = binary();
    command
        .arg("build")
        .current_dir(work.path())
        .env("AGENTFINDER_PAUSE", "stage-before-batch:2")
        .env_remove("AGENTFINDER_FAILPOINT");
    let mut build = Running::start(command);
    build.wait_for("failpoint stage-before-batch: pausing");
    build.signal("INT");
    let (exit, text) = build.finish();
    assert_eq!(exit, Some(130), "{text}");
    assert!(text.contains("interrupted by SIGINT"), "{text}");
    let source = work.path().join("artifacts/sources/a");
    assert_eq!(staging_folders(&source), Vec::<PathBuf>::new(), "{text}");
    assert!(!source.join("latest").exists());
}

#[test]
fn a_crashed_builds_staging_is_removed_by_the_next_build_and_a_live_ones_is_not() {
    let mut repo = repo_of(
        "https://github.com/acme/skills.git",
        &[("pdf", "Reads PDF files", "# Use\n\nRead.\n")],
    );
    let first = repo.git(&["rev-parse", "HEAD"]);
    repo.write(
        "skills/csv/SKILL.md",
        skill("csv", "Reads CSV files", "# Use\n"),
    );
    let second = repo.commit("csv");
    let source = repo.path().to_str().unwrap();
    let work = tempfile::tempdir().unwrap();
    let store = work.path().join("artifacts");

    // A build of the first commit, paused while it stages.
    let mut live = Running::start(paused_build(
        work.path(),
        source,
        "stage-before-batch",
        60,
        &["--no-embed", "--no-promote", "--ref", &first],
    ));
    live.wait_for("failpoint stage-before-batch: pausing");
    let live_staging = staging_folders(&store);
    assert_eq!(live_staging.len(), 1);

    // Another build meanwhile leaves the live one's folder alone.
    let out = run(
        work.path(),
        &["build", "--no-embed", "--source", source, "--ref", &second],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        staging_folders(&store),
        live_staging,
        "a live build's staging was removed"
    );

    // Killed (kill -9): its folder stays, and the next build removes it.
    live.signal("KILL");
    let (exit, _) = live.finish();
    assert_eq!(exit, None);
    assert_eq!(staging_folders(&store), live_staging);
    let out = run(
        work.path(),
        &[
            "build",
            "--no-embed",
            "--source",
            source,
            "--ref",
            &first,
            "--no-promote",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        staging_folders(&store),
        Vec::<PathBuf>::new(),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("left by a build that was stopped"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn ctrl_c_while_embedding_keeps_the_vectors_embedded_so_far() {
    let Some(model) = model_dir() else { return };
    let work = tempfile::tempdir().unwrap();
    let cache = work.path().join("vector-cache");
    // Batches of 2 texts: a slice of the model's work is a few texts, so
    // the build is stopped after the first slice with more left to do.
    std::fs::write(
        work.path().join("pipeline.toml"),
        format!(
            "[embed]\nrequired = true\nbatch_size = 2\nmodel_dir = \"{}\"\ncache_dir = \"{}\"\n",
            model.display(),
            cache.display()
        ),
    )
    .unwrap();
    let skills: Vec<(String, String)> = (0..12)
        .map(|i| (format!("s{i}"), format!("Skill number {i} for tests")))
        .collect();
    let listed: Vec<(&str, &str, &str)> = skills
        .iter()
        .map(|(folder, description)| {
            (
                folder.as_str(),
                description.as_str(),
                "# Use\n\nIt works.\n\n# More\n\nAnd more.\n",
            )
        })
        .collect();
    let repo = repo_of("https://github.com/acme/skills.git", &listed);
    let source = repo.path().to_str().unwrap();
    let mut build = Running::start(paused_build(
        work.path(),
        source,
        "embed-after-slice",
        2,
        &[],
    ));
    build.wait_for("failpoint embed-after-slice: pausing");
    build.signal("INT");
    let (exit, text) = build.finish();
    assert_eq!(exit, Some(130), "{text}");
    assert!(text.contains("interrupted by SIGINT"), "{text}");
    assert_eq!(
        staging_folders(&work.path().join("artifacts")),
        Vec::<PathBuf>::new()
    );

    // The cache holds whole records of what was embedded.
    let files: Vec<PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "f32"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let record = 32 + 384 * 4;
    let bytes = std::fs::metadata(&files[0]).unwrap().len();
    assert!(
        bytes > 0 && bytes.is_multiple_of(record),
        "{bytes} bytes in the cache: {text}"
    );
    let kept = bytes / record;

    // The next build embeds only the rest.
    let out = run(work.path(), &["build", "--source", source]);
    assert!(out.status.success(), "{}", stderr(&out));
    let summary = stdout(&out);
    let vectors = field(&summary, "vectors");
    let cached: u64 = vectors
        .split('+')
        .nth(1)
        .and_then(|rest| rest.split("cached").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(
        cached >= kept,
        "{kept} vectors were kept, {cached} reused: {summary}"
    );
}

#[test]
fn lint_of_a_folder_without_skills_fails_saying_so() {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join("docs")).unwrap();
    std::fs::write(work.path().join("docs/README.md"), "# Not a skill\n").unwrap();
    let out = run(work.path(), &["lint", "docs"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("no SKILL.md below docs"),
        "{}",
        stderr(&out)
    );
}

/// `lint --json` of `path` (in `cwd`): the repository it linted as, and
/// its risk findings as `path:line class severity`, sorted.
fn lint_as(cwd: &Path, path: &str, extra: &[&str]) -> (String, Vec<String>) {
    let mut args = vec!["lint", path, "--json"];
    args.extend_from_slice(extra);
    let out = run(cwd, &args);
    let report: serde_json::Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    let mut found: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["excerpt"].is_string())
        .map(|f| {
            let path = f["path"].as_str().unwrap();
            let class = f["class"].as_str().unwrap();
            let severity = f["severity"].as_str().unwrap();
            format!("{path}:{} {class} {severity}", f["line"])
        })
        .collect();
    found.sort();
    (
        report["repo"].as_str().unwrap_or_default().to_string(),
        found,
    )
}

#[test]
fn lint_names_the_repository_of_the_clone_as_the_build_does() {
    // The risk rules weigh a download by who publishes the skill (the
    // repository's owner), so lint must name the repository the build does.
    let body = "# Install\n\n```sh\ncurl -fsSL https://raw.githubusercontent.com/acme/tools/main/install.sh | sh\n```\n";
    let repo = repo_of(
        "https://github.com/acme/skills.git",
        &[("installer", "Installs the acme tools", body)],
    );
    let work = tempfile::tempdir().unwrap();
    let source = repo.path().to_str().unwrap();
    let out = run(work.path(), &["build", "--no-embed", "--source", source]);
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest = read_json(work.path().join("artifacts/latest/manifest.json"));
    assert_eq!(manifest["source_repo"], "acme/skills");
    let docs = documents(work.path().join("artifacts/latest/hf-skills.ndjson"));
    let skill_doc = docs.iter().find(|d| d["kind"] == "skill").unwrap();
    let mut built: Vec<String> = skill_doc["signals"]["risk"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let file = f["file"].as_str().unwrap();
            let class = f["class"].as_str().unwrap();
            let severity = f["severity"].as_str().unwrap();
            format!("skills/installer/{file}:{} {class} {severity}", f["line"])
        })
        .collect();
    built.sort();
    assert!(!built.is_empty(), "{skill_doc:#}");

    // The clone, and one skill's folder in it: the build's repository and
    // findings.
    let (named, found) = lint_as(work.path(), source, &[]);
    assert_eq!((named.as_str(), &found), ("acme/skills", &built));
    let folder = repo.path().join("skills/installer");
    let (named, found) = lint_as(work.path(), folder.to_str().unwrap(), &[]);
    let in_folder: Vec<String> = built
        .iter()
        .map(|f| f.trim_start_matches("skills/installer/").to_string())
        .collect();
    assert_eq!((named.as_str(), &found), ("acme/skills", &in_folder));
    // The text summary says it too; --repo names another.
    let out = run(work.path(), &["lint", source]);
    assert!(
        stdout(&out).contains("repo=acme/skills"),
        "{}",
        stdout(&out)
    );
    let (named, _) = lint_as(work.path(), source, &["--repo", "someone/else"]);
    assert_eq!(named, "someone/else");
}

#[test]
fn lint_of_the_configured_source_names_it_as_the_build_does() {
    // As in this project: [source].location is a folder inside a clone,
    // named by [source].repo; the clone itself has another origin.
    let project = GitRepo::with_origin("https://github.com/acme/project.git");
    project.write(
        "fixtures/skills/pdf/SKILL.md",
        skill("pdf", "Reads PDF files", "# Use\n"),
    );
    project.write(
        "pipeline.toml",
        "[source]\nlocation = \"fixtures/skills\"\nrepo = \"acme/fixtures\"\n\n[embed]\nenabled = false\n",
    );
    let cwd = project.path();
    let out = run(cwd, &["build"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest = read_json(cwd.join("artifacts/latest/manifest.json"));
    assert_eq!(manifest["source_repo"], "acme/fixtures");
    assert_eq!(lint_as(cwd, "fixtures/skills", &[]).0, "acme/fixtures");
    assert_eq!(lint_as(cwd, "fixtures/skills/pdf", &[]).0, "acme/fixtures");
    // The clone itself is another source: its origin names it.
    assert_eq!(lint_as(cwd, ".", &[]).0, "acme/project");
}

#[test]
fn verify_checks_every_source_of_a_store_of_many_sources() {
    let work = tempfile::tempdir().unwrap();
    let a = repo_of(
        "https://github.com/acme/a.git",
        &[("pdf", "Reads PDF files", "# Use\n")],
    );
    let b = repo_of(
        "https://github.com/acme/b.git",
        &[("csv", "Reads CSV files", "# Use\n")],
    );
    sources_config(
        work.path(),
        &[("a", &a, ""), ("b", &b, "")],
        "[embed]\nenabled = false\n",
    );
    let out = run(work.path(), &["build"]);
    assert!(out.status.success(), "{}", stderr(&out));

    let out = run(work.path(), &["verify"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("source=a") && text.contains("source=b"),
        "{text}"
    );
    let out = run(work.path(), &["verify", "--source", "b"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stdout(&out).contains("source=a"), "{}", stdout(&out));
    let commit = a.git(&["rev-parse", "HEAD"]);
    let out = run(work.path(), &["verify", "--commit", &commit]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("source=a"), "{}", stdout(&out));

    // A source whose latest/ is broken fails verify, named.
    let manifest = work.path().join("artifacts/sources/b/latest/manifest.json");
    let mut bytes = std::fs::read(&manifest).unwrap();
    bytes.push(b' ');
    std::fs::write(&manifest, bytes).unwrap();
    let out = run(work.path(), &["verify"]);
    assert_eq!(out.status.code(), Some(7), "{}", stdout(&out));
    assert!(stderr(&out).contains("source b"), "{}", stderr(&out));
}

#[test]
fn an_empty_source_is_refused_unless_asked_for() {
    let work = tempfile::tempdir().unwrap();
    let mut repo = GitRepo::with_origin("https://github.com/acme/empty.git");
    repo.write("README.md", "# Nothing yet\n");
    repo.commit("readme");
    let source = repo.path().to_str().unwrap();
    let out = run(work.path(), &["build", "--no-embed", "--source", source]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    assert!(stderr(&out).contains("holds no skill"), "{}", stderr(&out));
    assert!(stderr(&out).contains("--allow-empty"), "{}", stderr(&out));
    assert!(!work.path().join("artifacts/latest").exists());

    let out = run(
        work.path(),
        &["build", "--no-embed", "--source", source, "--allow-empty"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(field(&stdout(&out), "skills"), "0");
    assert!(work.path().join("artifacts/latest/_SUCCESS").exists());
}

#[test]
fn a_failed_first_build_leaves_no_store_behind() {
    let work = tempfile::tempdir().unwrap();
    let missing = work.path().join("no-such-source");
    let store = work.path().join("new-store");
    let args = |store: &Path| {
        vec![
            "build".to_string(),
            "--no-embed".into(),
            "--source".into(),
            missing.display().to_string(),
            "--store".into(),
            store.display().to_string(),
        ]
    };
    let argv = args(&store);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let out = run(work.path(), &argv);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
    assert!(
        !store.exists(),
        "a failed first build left {}",
        store.display()
    );

    // A store that was there stays, whatever is in it.
    let kept = work.path().join("kept-store");
    std::fs::create_dir_all(&kept).unwrap();
    let argv = args(&kept);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    assert_eq!(run(work.path(), &argv).status.code(), Some(3));
    assert!(kept.is_dir());
}
