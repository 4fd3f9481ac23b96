//! One day of the deployed shape, end to end, with the README's and the
//! scheduled job's own commands: a skills repository served over git's
//! smart HTTP protocol, the job's build into S3 (moto), `serve` with `/mcp`
//! and a refresh interval, the official Python MCP client holding one
//! session, a new commit, the job again, and the new skill found by the
//! same session while searches never fail.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::git_http::GitHttp;
use common::moto::Moto;
use common::server::Server;
use common::*;
use serde_json::{json, Value};

/// Seconds between the server's refreshes.
const REFRESH_SECS: u64 = 2;

/// The scheduled job (`jobs/hf-job.sh run`): one build of the source's
/// newest commit into the store, with the job's flags.
fn the_job(work: &Path, moto: &Moto, source: &str, embed: bool) {
    let mut args = vec![
        "build",
        "--config",
        "pipeline.toml",
        "--log-format",
        "json",
        "--source",
        source,
        "--store",
        "s3://day/index",
    ];
    if embed {
        args.push("--require-embed");
    }
    let out = binary()
        .args(&args)
        .current_dir(work)
        .envs(moto.env())
        .output()
        .unwrap();
    assert!(out.status.success(), "the job failed: {}", stderr(&out));
}

/// One MCP session over streamable HTTP, held open (tests/mcp/client.py).
struct Session {
    child: Child,
    calls: ChildStdin,
    answers: BufReader<ChildStdout>,
}

impl Session {
    fn open(python: &Path, url: &str, cache: &Path) -> Self {
        let mut child = mcp_client(python, &["session", url], cache)
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let calls = child.stdin.take().unwrap();
        let answers = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            calls,
            answers,
        }
    }

    /// Calls `search_skills` for `query`: the names of the results, or why
    /// the call failed.
    fn search(&mut self, query: &str) -> Result<Vec<String>, String> {
        let call = json!(["search_skills", {"query": query, "limit": 3}]);
        writeln!(self.calls, "{call}").map_err(|e| e.to_string())?;
        let mut line = String::new();
        self.answers
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        let answer: Value = serde_json::from_str(&line).map_err(|e| format!("{e}: {line:?}"))?;
        if answer["is_error"] != false {
            return Err(answer.to_string());
        }
        Ok(answer["structured"]["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["skill"]["data"]["name"].as_str().map(str::to_string))
            .collect())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Searches `/search` over HTTP until `stop`, recording each answer's
/// status: what a user of the Space sees while the job runs.
fn keep_searching(addr: String, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<Vec<u16>> {
    std::thread::spawn(move || {
        let mut statuses = Vec::new();
        let queries = [
            "merge+pdf+files",
            "animated+gif",
            "join+documents",
            "skills",
        ];
        let mut n = 0;
        while !stop.load(Ordering::SeqCst) {
            let target = format!("/search?q={}&limit=2", queries[n % queries.len()]);
            statuses.push(status_of(&addr, &target));
            n += 1;
            std::thread::sleep(Duration::from_millis(100));
        }
        statuses
    })
}

/// The status of `GET target` (0 when there was no answer).
fn status_of(addr: &str, target: &str) -> u16 {
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return 0;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let request = format!("GET {target} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    let mut response = String::new();
    if stream.write_all(request.as_bytes()).is_err()
        || stream.read_to_string(&mut response).is_err()
    {
        return 0;
    }
    response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[test]
fn one_day_of_the_deployed_shape_from_the_readmes_commands() {
    let started = Instant::now();
    let Some(python) = mcp_python() else { return };
    let Some(moto) = Moto::start() else { return };
    moto.create_bucket("day");
    let model = model_dir();

    // The skills repository, behind git's smart HTTP protocol.
    let mut repo = GitRepo::with_origin("https://github.com/acme/day-skills.git");
    repo.write(
        "skills/pdf-merge/SKILL.md",
        skill(
            "pdf-merge",
            "Combine several PDF documents into a single file",
            "# Merging PDFs\n\nRun `merge.py a.pdf b.pdf` to join the pages of both files.\n",
        ),
    );
    repo.commit("pdf-merge");
    let http = GitHttp::serve(repo.path().parent().unwrap());
    let source = http.url(repo.path().file_name().unwrap().to_str().unwrap());

    // The job's configuration: S3 credentials from the environment only.
    let work = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let embed = match &model {
        Some(model) => format!(
            "[embed]\nrequired = true\nmodel_dir = \"{}\"\ncache_dir = \"emb\"\n",
            model.display()
        ),
        None => "[embed]\nenabled = false\n".to_string(),
    };
    std::fs::write(work.path().join("pipeline.toml"), embed).unwrap();
    the_job(work.path(), &moto, &source, model.is_some());

    // The Space: `serve` on the store, refreshing, with `/mcp`.
    let env: Vec<(&str, String)> = moto.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let refresh = REFRESH_SECS.to_string();
    let server = Server::start_with(
        work.path(),
        cache.path(),
        &["--store", "s3://day/index", "--refresh", &refresh],
        &env,
    );
    let mut session = Session::open(
        &python,
        &format!("http://{}/mcp", server.addr),
        cache.path(),
    );
    let found = session.search("merge two pdf files into one").unwrap();
    assert_eq!(
        found.first().map(String::as_str),
        Some("pdf-merge"),
        "{found:?}"
    );
    let gif = "make a looping animated gif for chat";
    let before = session.search(gif).unwrap();
    assert!(!before.iter().any(|n| n == "gif-maker"), "{before:?}");

    // A new commit adds a skill; the job runs again while users search.
    let stop = Arc::new(AtomicBool::new(false));
    let searching = keep_searching(server.addr.clone(), stop.clone());
    repo.write(
        "skills/gif-maker/SKILL.md",
        skill(
            "gif-maker",
            "Make a looping animated GIF for chat from a few frames",
            "# Frames\n\nStitch frames into a looping animation.\n",
        ),
    );
    repo.commit("gif-maker");
    the_job(work.path(), &moto, &source, model.is_some());
    let promoted = Instant::now();

    // The same session finds it within a refresh or two (and the time to
    // open the new version); no call fails on the way.
    let mut failures = Vec::new();
    let mut seen_after = None;
    while promoted.elapsed() < Duration::from_secs(REFRESH_SECS * 2 + 30) {
        match session.search(gif) {
            Ok(names) if names.first().is_some_and(|n| n == "gif-maker") => {
                seen_after = Some(promoted.elapsed());
                break;
            }
            Ok(_) => {}
            Err(why) => failures.push(why),
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    stop.store(true, Ordering::SeqCst);
    let statuses = searching.join().unwrap();
    let seen_after = seen_after.unwrap_or_else(|| {
        panic!(
            "the new skill was not served {:?} after the job; serve's stderr:\n{}",
            promoted.elapsed(),
            server.stderr.lock().unwrap()
        )
    });
    assert!(failures.is_empty(), "{failures:?}");
    assert!(!statuses.is_empty());
    let failed: Vec<&u16> = statuses.iter().filter(|s| **s != 200).collect();
    assert!(
        failed.is_empty(),
        "{} of {} searches failed: {failed:?}",
        failed.len(),
        statuses.len()
    );
    // The old skill is still there, and the server stops cleanly.
    assert_eq!(
        session
            .search("merge two pdf files into one")
            .unwrap()
            .first()
            .map(String::as_str),
        Some("pdf-merge")
    );
    drop(session);
    assert!(server.stop().success());
    eprintln!(
        "one day: new skill served {seen_after:?} after the job; {} HTTP searches, none failed; {:?} in all",
        statuses.len(),
        started.elapsed()
    );
}
