//! Fetching the model from the Hugging Face Hub into the Hub cache, against
//! a local mirror (HF_ENDPOINT) that serves the real model files the way the
//! Hub does: `/<repo>/resolve/<revision>/<file>`, ranges, `x-repo-commit` and
//! etags (a large file's etag is its sha256). The Hub itself is not reachable
//! from the project's machines.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use sha2::{Digest, Sha256};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";
const REVISION: &str = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf";
/// A marker token: sent to the Hub, never printed.
const TOKEN: &str = "hf_markerSECRETtoken123";

/// Serves the files of `dir` as the Hub serves a model repository.
struct HubMirror {
    dir: PathBuf,
    /// Serve these bytes of model.safetensors flipped (a corrupt transfer).
    corrupt: bool,
}

impl Respond for HubMirror {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let prefix = format!("/{MODEL}/resolve/{REVISION}/");
        let Some(name) = request.url.path().strip_prefix(&prefix) else {
            return ResponseTemplate::new(404);
        };
        let Ok(mut bytes) = std::fs::read(self.dir.join(name)) else {
            return ResponseTemplate::new(404);
        };
        let sha256 = hex::encode(Sha256::digest(&bytes));
        if self.corrupt && name == "model.safetensors" {
            let last = bytes.len() - 1;
            bytes[last] ^= 0xff;
        }
        let total = bytes.len();
        let start = request
            .headers
            .get("range")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("bytes="))
            .and_then(|v| v.split('-').next())
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(0);
        let end = match request.headers.get("range").and_then(|v| v.to_str().ok()) {
            Some(r) if r.ends_with("-0") => 0,
            _ => total - 1,
        };
        let response = ResponseTemplate::new(206)
            .insert_header("x-repo-commit", REVISION)
            .insert_header("content-range", format!("bytes {start}-{end}/{total}"))
            .set_body_bytes(bytes[start..=end].to_vec());
        if name == "model.safetensors" {
            // Large files: the etag is the sha256 of the content.
            response.insert_header("x-linked-etag", format!("\"{sha256}\""))
        } else {
            response.insert_header("etag", format!("\"{}\"", &sha256[..40]))
        }
    }
}

async fn mirror(dir: &Path, corrupt: bool) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(HubMirror {
            dir: dir.to_path_buf(),
            corrupt,
        })
        .mount(&server)
        .await;
    server
}

/// A build with no model_dir, the given Hub cache and endpoint.
async fn build(work: &Path, hub: &Path, endpoint: &str, offline: bool) -> Output {
    let mut repo = GitRepo::new();
    repo.write(
        "s/gif/SKILL.md",
        skill("gif", "Make looping GIFs", "# Frames\n\nDraw frames.\n"),
    );
    repo.commit("one");
    let config = work.join("hub.toml");
    std::fs::write(
        &config,
        format!(
            "[embed]\nrequired = true\nmodel_dir = \"{}\"\ncache_dir = \"{}\"\n",
            work.join("no-model").display(),
            work.join("vectors").display()
        ),
    )
    .unwrap();
    let mut command = binary();
    command
        .current_dir(work)
        .args(["build", "--config", config.to_str().unwrap(), "--source"])
        .arg(repo.path())
        .env("HF_HUB_CACHE", hub)
        .env("HF_ENDPOINT", endpoint)
        .env("HF_TOKEN", TOKEN);
    if !offline {
        command.env_remove("HF_HUB_OFFLINE");
    }
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    drop(repo);
    out
}

fn snapshot(hub: &Path) -> PathBuf {
    hub.join("models--sentence-transformers--all-MiniLM-L6-v2/snapshots")
        .join(REVISION)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_model_is_downloaded_into_the_hub_cache_and_used() {
    let Some(dir) = model_dir() else { return };
    let server = mirror(&dir, false).await;
    let work = tempfile::tempdir().unwrap();
    let hub = work.path().join("hub");

    let out = build(work.path(), &hub, &server.uri(), false).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("downloading"), "{}", stderr(&out));
    assert!(
        field(&stdout(&out), "vectors").starts_with("2+0cached"),
        "{}",
        stdout(&out)
    );
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        let got = std::fs::read(snapshot(&hub).join(file)).unwrap();
        assert_eq!(got, std::fs::read(dir.join(file)).unwrap(), "{file}");
    }
    let received = server.received_requests().await.unwrap();
    let requests = received.len();
    assert!(requests >= 6, "{requests} requests");
    assert!(received.iter().all(|r| r
        .headers
        .get("authorization")
        .is_some_and(|v| v.to_str().unwrap() == format!("Bearer {TOKEN}"))));
    assert!(!stderr(&out).contains(TOKEN) && !stdout(&out).contains(TOKEN));

    // The next run finds the snapshot and asks the mirror nothing.
    std::fs::remove_dir_all(work.path().join("artifacts")).unwrap();
    let out = build(work.path(), &hub, &server.uri(), false).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("downloading"), "{}", stderr(&out));
    assert_eq!(server.received_requests().await.unwrap().len(), requests);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_corrupt_download_is_refused_and_deleted() {
    let Some(dir) = model_dir() else { return };
    let server = mirror(&dir, true).await;
    let work = tempfile::tempdir().unwrap();
    let hub = work.path().join("hub");

    let out = build(work.path(), &hub, &server.uri(), false).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("model.safetensors") && err.contains("sha256") && err.contains("deleted"),
        "{err}"
    );
    assert!(!snapshot(&hub).join("model.safetensors").exists());
    assert!(!err.contains(TOKEN));
}

#[tokio::test(flavor = "multi_thread")]
async fn hf_hub_offline_forbids_the_download() {
    let Some(dir) = model_dir() else { return };
    let server = mirror(&dir, false).await;
    let work = tempfile::tempdir().unwrap();

    let out = build(work.path(), &work.path().join("hub"), &server.uri(), true).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("HF_HUB_OFFLINE"), "{}", stderr(&out));
    assert!(server.received_requests().await.unwrap().is_empty());
}

/// scripts/fetch-model.sh with HUB_CACHE lays out a Hub cache entry that
/// hf-hub (which Meilisearch's huggingFace embedder uses) resolves offline
/// at the pinned revision, and that a build finds with downloads forbidden.
#[tokio::test(flavor = "multi_thread")]
async fn fetch_model_lays_out_a_hub_cache_entry_that_resolves_offline() {
    let Some(dir) = model_dir() else { return };
    let work = tempfile::tempdir().unwrap();
    let hub = work.path().join("hub");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/fetch-model.sh");
    let out = std::process::Command::new("bash")
        .arg(&script)
        .arg(&dir)
        .env("HUB_CACHE", &hub)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));

    let repo = hf_hub::Cache::new(hub.clone()).repo(hf_hub::Repo::with_revision(
        MODEL.to_string(),
        hf_hub::RepoType::Model,
        REVISION.to_string(),
    ));
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        let found = repo
            .get(file)
            .unwrap_or_else(|| panic!("{file} does not resolve"));
        assert_eq!(
            std::fs::read(found).unwrap(),
            std::fs::read(dir.join(file)).unwrap()
        );
    }

    let out = build(work.path(), &hub, "http://127.0.0.1:9", true).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        field(&stdout(&out), "vectors").starts_with("2+0cached"),
        "{}",
        stdout(&out)
    );
}

/// hf-hub panics on a redirect without a Location; that must be a clear
/// error naming the file, not a crashed build.
#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_hub_answer_is_an_error_not_a_crash() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(302)
                .insert_header("etag", "\"abc\"")
                .insert_header("x-repo-commit", REVISION),
        )
        .mount(&server)
        .await;
    let work = tempfile::tempdir().unwrap();
    let out = build(work.path(), &work.path().join("hub"), &server.uri(), false).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("config.json") && stderr(&out).contains("hf-hub panicked"),
        "{}",
        stderr(&out)
    );
}
