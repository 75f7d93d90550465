//! The binary on broken input. `doctor` runs on the problems it diagnoses
//! (a missing project folder, a malformed config, a bad `--set`): each is a
//! ✗ line among the checks that can still run, and it exits 1. Errors that
//! are not about a place in a file (a `--set` flag, a pipeline name, a
//! missing folder) carry no fake `:1:1:`. A reader that stops early
//! (`| head`) ends a command's output, not the command.

use std::path::Path;

use test_support::cli::{self, Run};
use test_support::project::Project;

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");

/// The binary with `--project dir`, which need not exist (doctor reports that).
fn run_in(dir: &Path, args: &[&str]) -> Run {
    Run::of(cli::command(Path::new(BIN), dir).args(args))
}

/// The exit code of a doctor run with a failed required check (README "Exit codes").
const DOCTOR_FAILED: i32 = 1;

fn assert_ran_every_check(run: &Run) {
    for name in ["project root:", "config:", "index:", "feedback:", "provider:"] {
        assert!(run.stdout.contains(name), "no `{name}` line: {run:?}");
    }
}

#[test]
fn doctor_reports_a_missing_project_folder() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-project");
    let run = run_in(&missing, &["doctor", "--offline"]);
    assert_eq!(run.code, DOCTOR_FAILED, "{run:?}");
    assert!(
        run.stdout.contains("✗ project root:") && run.stdout.contains("no-such-project"),
        "{run:?}"
    );
    assert_ran_every_check(&run);
    assert!(!missing.exists(), "doctor created the folder it reported");
}

#[test]
fn doctor_reports_a_malformed_config_at_its_line() {
    let project = Project::generated(BIN, 3);
    project.configure("index_depth: minimal\nbatch_size: [unclosed\n");
    let run = project.run(&["doctor", "--offline"]);
    assert_eq!(run.code, DOCTOR_FAILED, "{run:?}");
    assert!(run.stdout.contains("✗ config:"), "{run:?}");
    assert!(run.stdout.contains(".claude/unity-assets.yml:3:1:"), "{run:?}");
    assert!(run.stdout.contains("✓ project root:"), "{run:?}");
    assert_ran_every_check(&run);

    let json = project.run(&["doctor", "--offline", "--json"]);
    assert_eq!(json.code, DOCTOR_FAILED, "{json:?}");
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("one JSON document");
    assert_eq!(report["ok"], false, "{report}");
    let config = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "config")
        .expect("a config check");
    assert_eq!(config["ok"], false, "{report}");
}

#[test]
fn doctor_reports_a_bad_set_value() {
    let project = Project::generated(BIN, 3);
    let run = project.run(&["doctor", "--offline", "--set", "batch_size=abc"]);
    assert_eq!(run.code, DOCTOR_FAILED, "{run:?}");
    assert!(
        run.stdout.contains("✗ config:") && run.stdout.contains("--set batch_size"),
        "{run:?}"
    );
    assert_ran_every_check(&run);
}

#[test]
fn errors_about_no_file_carry_no_position() {
    let project = Project::generated(BIN, 3);
    let cases: [&[&str]; 4] = [
        &["search", "zombie", "--set", "search.asset_top_k=abc"],
        &["search", "zombie", "--set", "no_such_param=1"],
        &["run", "serch"],
        &["graph", "serch"],
    ];
    for args in cases {
        let run = project.run(args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(!run.stderr.contains(":1:1:"), "{args:?}: {run:?}");
    }
    let run = project.run(&["search", "zombie", "--set", "search.asset_top_k=abc"]);
    assert!(run.stderr.contains("--set search.asset_top_k: error:"), "{run:?}");
    let run = project.run(&["run", "serch"]);
    assert!(
        run.stderr.contains("serch: error: no pipeline named `serch`"),
        "{run:?}"
    );
    let missing = project.dir.path().join("nonexistent");
    let run = run_in(&missing, &["search", "zombie"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("nonexistent: error:") && !run.stderr.contains(":1:1:"),
        "{run:?}"
    );
}

/// `search --json | true`: the reader is gone before the document is
/// written (here, before the run starts); the search still ends as it
/// would have, without a panic.
#[test]
fn a_reader_that_stops_early_is_no_panic() {
    let project = Project::generated(BIN, 40);
    assert_eq!(project.run(&["index"]).code, 0);
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = cli::command(Path::new(BIN), project.path())
        .env("UNITY_ASSETS_TRUST", "1")
        .args(["search", "wooden crate", "--json"])
        .stdout(writer)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}
