//! Reading artifacts from a real local store: only complete, matching builds.

use std::collections::BTreeMap;

use agentfinder_skills_reader::artifact::{
    digest_of, read_artifact, read_artifact_retrying, ReadError,
};
use agentfinder_skills_reader::contract::{
    ArtifactLocation, SuccessMarker, DATA_FILES, SUCCESS_FILE,
};
use agentfinder_skills_reader::store::Store;

fn manifest(commit: &str) -> String {
    serde_json::json!({
        "schema_version": 1, "source_repo": "o/r", "source_url": "u", "source_branch": "main",
        "source_commit": commit, "generated_at": "t", "document_count": 0, "index": "hf_skills",
        "artifact": "hf-skills.ndjson", "artifacts": {}, "skill_count": 0, "source_commit_time": "t",
        "files": {}, "builder": {"name": "b", "version": "0"},
        "chunking": {"max_chars": 12000, "overlap_chars": 800}, "config_digest": "",
        "meilisearch": {"index": "hf_skills", "primary_key": "id", "settings": {}},
        "skipped": [], "warnings": []
    })
    .to_string()
}

/// Writes a complete artifact for `commit` into `dir/<prefix>/`.
fn write(dir: &std::path::Path, prefix: &str, commit: &str) {
    let root = dir.join(prefix);
    std::fs::create_dir_all(&root).unwrap();
    let contents = [
        String::new(),
        "{\"entries\": []}".to_string(),
        manifest(commit),
    ];
    let mut files = BTreeMap::new();
    for (name, content) in DATA_FILES.iter().zip(&contents) {
        std::fs::write(root.join(name), content).unwrap();
        files.insert(name.to_string(), digest_of(content.as_bytes()));
    }
    let marker = SuccessMarker {
        schema_version: 1,
        commit: commit.into(),
        generated_at: "t".into(),
        files,
    };
    std::fs::write(
        root.join(SUCCESS_FILE),
        serde_json::to_vec(&marker).unwrap(),
    )
    .unwrap();
}

fn store(dir: &tempfile::TempDir) -> Store {
    Store::open(dir.path().to_str().unwrap()).unwrap()
}

#[tokio::test]
async fn a_complete_artifact_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "commits/abc", "abc");
    let location = ArtifactLocation::Commit("abc".into());
    let artifact = read_artifact(&store(&dir), &location).await.unwrap();
    assert_eq!(artifact.manifest.source_commit, "abc");
}

#[tokio::test]
async fn no_success_marker_means_not_found() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "latest", "abc");
    std::fs::remove_file(dir.path().join("latest/_SUCCESS")).unwrap();
    let err = read_artifact(&store(&dir), &ArtifactLocation::Latest)
        .await
        .unwrap_err();
    assert!(matches!(err, ReadError::NotFound { .. }), "{err}");
    assert!(err.is_transient());
}

#[tokio::test]
async fn a_file_from_another_build_is_in_progress_never_returned() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "latest", "old");
    // A promotion in flight replaced the manifest but not yet _SUCCESS.
    std::fs::write(dir.path().join("latest/manifest.json"), manifest("new")).unwrap();
    let store = store(&dir);
    let err = read_artifact(&store, &ArtifactLocation::Latest)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ReadError::InProgress { ref file, .. } if file == "manifest.json"),
        "{err}"
    );
    assert!(err.to_string().contains("retry"));
    let started = std::time::Instant::now();
    let pause = std::time::Duration::from_millis(10);
    let err = read_artifact_retrying(&store, &ArtifactLocation::Latest, 3, pause)
        .await
        .unwrap_err();
    assert!(err.is_transient());
    assert!(started.elapsed() >= pause * 3, "retried with backoff");
}

#[tokio::test]
async fn a_marker_under_the_wrong_commit_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "commits/abc", "def");
    let location = ArtifactLocation::Commit("abc".into());
    let err = read_artifact(&store(&dir), &location).await.unwrap_err();
    assert!(matches!(err, ReadError::Invalid { .. }), "{err}");
    assert!(!err.is_transient());
}
