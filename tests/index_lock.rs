//! Every path that indexes takes the index lock: the index pipeline's own
//! first stage takes it, so a second process holding it makes each of them
//! wait (with a line saying so) and write nothing until it goes.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use test_support::cli::{self, Run};
use test_support::project::{Project, INDEX_DIR};

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");
const WAITING: &str = "[unity-assets:index] another index run holds this project's index; waiting for it to finish";
/// Writing this in a query asks to index first (`query.validate`).
const REINDEX_PHRASE: &str = "재인덱스해서 검색";

/// A project with one zombie prefab and no index yet.
fn project() -> Project {
    let project = Project::configured(BIN, "");
    std::fs::create_dir_all(project.path().join("ProjectSettings")).unwrap();
    project.add_asset("Assets/Characters/Zombie_Basic.prefab", 1);
    project
}

fn index_rows(project: &Project) -> PathBuf {
    project.path().join(INDEX_DIR).join("assets.jsonl")
}

/// The lock an index run takes (an advisory lock on the index folder),
/// held by this process, as another index run would hold it.
fn hold_lock(project: &Project) -> File {
    let dir = project.path().join(INDEX_DIR);
    std::fs::create_dir_all(&dir).unwrap();
    let held = File::open(&dir).unwrap();
    held.lock().unwrap();
    held
}

/// `unity-assets ARGS` on `project`, started in the background with its
/// streams in files under `streams`.
fn start(project: &Project, args: &[&str], streams: &Path) -> Child {
    cli::command(Path::new(BIN), project.path())
        .args(args)
        .env("UNITY_ASSETS_TRUST", "1")
        .stdin(Stdio::null())
        .stdout(File::create(streams.join("stdout")).unwrap())
        .stderr(File::create(streams.join("stderr")).unwrap())
        .spawn()
        .expect("the binary starts")
}

fn streams(dir: &Path) -> String {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    format!("--- stdout\n{}--- stderr\n{}", read("stdout"), read("stderr"))
}

/// While this process holds the index lock, `unity-assets ARGS` says it is
/// waiting, is still running a second later and has written no index; once
/// the lock goes it indexes and ends with 0.
fn waits_for_the_lock(project: &Project, args: &[&str]) -> Run {
    let held = hold_lock(project);
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(project, args, dir.path());
    let started = Instant::now();
    while !streams(dir.path()).contains(WAITING) {
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "`{}` ended ({status}) without waiting for the index lock\n{}",
                args.join(" "),
                streams(dir.path())
            );
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "`{}` printed no waiting line\n{}",
            args.join(" "),
            streams(dir.path())
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        child.try_wait().unwrap().is_none(),
        "`{}` did not wait for the lock\n{}",
        args.join(" "),
        streams(dir.path())
    );
    assert!(!index_rows(project).exists(), "indexed while the lock was held");
    drop(held);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("`{}` hung after the lock went\n{}", args.join(" "), streams(dir.path()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let run = Run::finished(
        std::process::Output {
            status,
            stdout: std::fs::read(dir.path().join("stdout")).unwrap(),
            stderr: std::fs::read(dir.path().join("stderr")).unwrap(),
        },
        started.elapsed(),
    );
    assert_eq!(run.code, 0, "`{}`: {run:?}", args.join(" "));
    assert!(
        index_rows(project).exists(),
        "`{}` did not index: {run:?}",
        args.join(" ")
    );
    run
}

#[test]
fn index_waits_for_the_lock() {
    waits_for_the_lock(&project(), &["index"]);
}

#[test]
fn search_with_reindex_waits_for_the_lock() {
    let run = waits_for_the_lock(&project(), &["search", "zombie", "--reindex"]);
    assert!(run.stdout.contains("Zombie_Basic.prefab"), "{run:?}");
}

#[test]
fn a_query_asking_in_words_to_reindex_waits_for_the_lock() {
    let query = format!("{REINDEX_PHRASE} zombie");
    let run = waits_for_the_lock(&project(), &["search", &query]);
    assert!(run.stdout.contains("Zombie_Basic.prefab"), "{run:?}");
}

#[test]
fn build_whose_request_asks_to_reindex_waits_for_the_lock() {
    let request = format!("{REINDEX_PHRASE} zombie");
    waits_for_the_lock(&project(), &["build", "--plan", &request]);
}

#[test]
fn run_of_a_pipeline_file_that_indexes_waits_for_the_lock() {
    let project = project();
    let file = project.file(
        "refresh.yaml",
        "pipeline: refresh\nsummary: index the project\nstages:\n  index:\n    run: index\n",
    );
    waits_for_the_lock(&project, &["run", &file]);
}

#[test]
fn eval_of_a_set_asking_to_reindex_waits_for_the_lock() {
    let project = project();
    let set = project.file(
        "set.yml",
        &format!(
            "queries:\n  - {{query: \"{REINDEX_PHRASE} zombie\", accepted: [Assets/Characters/Zombie_Basic.prefab], category: character}}\n"
        ),
    );
    waits_for_the_lock(&project, &["eval", &set]);
}

/// An index pipeline override from before the lock stage existed would
/// index unlocked: it is named with the fix, and nothing runs.
#[test]
fn an_overridden_index_pipeline_without_the_lock_is_refused() {
    let project = project();
    let embedded = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/index.yaml")).unwrap();
    let (head, rest) = embedded.split_once("  lock:\n").expect("the lock stage");
    let (_, after) = rest.split_once("  unchanged:\n").expect("the stage after it");
    let unlocked = format!("{head}  unchanged:\n{}", after.replacen("    needs: [lock]\n", "", 1));
    assert!(!unlocked.contains("index.lock"));
    project.override_file("pipelines/index.yaml", &unlocked);
    let run = project.run(&["index"]);
    assert_eq!(run.code, 2, "{run:?}");
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(all.contains("does not take the index lock"), "{all}");
    assert!(all.contains("pipelines/index.yaml"), "{all}");
    assert!(all.contains("lock: {fn: index.lock}"), "{all}");
    assert!(!index_rows(&project).exists(), "nothing indexed");

    project.override_file("pipelines/index.yaml", &embedded);
    let run = project.run(&["index"]);
    assert_eq!(run.code, 0, "the embedded copy as an override runs: {run:?}");
}
