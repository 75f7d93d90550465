//! What a new user meets in the first minutes (issue 24's friction list):
//! commands run from a folder that is no Unity project, `--help` texts, and
//! where `run --dry-run` says each value came from.

use std::path::Path;

use test_support::cli::{self, Run};

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");

fn run(folder: &Path, args: &[&str]) -> Run {
    Run::of(cli::command(Path::new(BIN), folder).args(args))
}

/// From a clone's root (no `Assets/`), build used to suggest `reindex`, which
/// then failed and left an empty `.claude/unity-asset-index/` behind.
#[test]
fn outside_a_unity_project_nothing_suggests_reindex_or_leaves_an_index_folder() {
    let folder = tempfile::tempdir().unwrap();
    let build = run(
        folder.path(),
        &["build", "좀비 서바이벌 프로토타입 만들어줘", "--non-interactive"],
    );
    assert_eq!(build.code, 1, "{}", build.output());
    assert!(build.output().contains("has no Assets/ folder"), "{}", build.output());
    assert!(build.output().contains("--project DIR"), "{}", build.output());
    assert!(
        !build.output().contains("unity-assets reindex"),
        "a suggestion that cannot work: {}",
        build.output()
    );

    for args in [&["reindex"][..], &["index"][..], &["search", "zombie", "--reindex"][..]] {
        let indexing = run(folder.path(), args);
        assert_eq!(indexing.code, 1, "{args:?}: {}", indexing.output());
        assert!(
            indexing.output().contains("has no Assets/ folder"),
            "{args:?}: {}",
            indexing.output()
        );
        assert!(!folder.path().join(".claude").exists(), "{args:?} left .claude/ behind");
    }
}

#[test]
fn doctor_help_says_offline_skips_mcp_too() {
    let help = run(Path::new("."), &["doctor", "--help"]);
    assert_eq!(help.code, 0, "{}", help.output());
    let offline = help.stdout.split("--offline").nth(1).expect("--offline is documented");
    let offline = offline.split("\n  -").next().unwrap();
    assert!(offline.contains("provider"), "{offline}");
    assert!(offline.contains("MCP"), "{offline}");
}

/// A value read from an ejected pipeline is the team's, not "(default)": the
/// dry run names the file (and line) each value came from.
#[test]
fn dry_run_names_where_each_value_came_from() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join("Assets")).unwrap();
    let eject = run(project.path(), &["eject"]);
    assert_eq!(eject.code, 0, "{}", eject.output());
    let ejected = project.path().join(".claude/unity-assets/pipelines/search.yaml");
    let text = std::fs::read_to_string(&ejected).unwrap();
    std::fs::write(&ejected, text.replacen("package_top_k: 3 ", "package_top_k: 5 ", 1)).unwrap();
    std::fs::write(
        project.path().join(".claude/unity-assets.yml"),
        "confidence_threshold: {auto: 0.8}\n",
    )
    .unwrap();

    let dry = run(
        project.path(),
        &[
            "run",
            "search",
            "--input",
            "query=zombie",
            "--dry-run",
            "--set",
            "search.asset_top_k=4",
        ],
    );
    assert_eq!(dry.code, 0, "{}", dry.output());
    let line = |key: &str| {
        dry.stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{key} = ")))
            .unwrap_or_else(|| panic!("no {key} in:\n{}", dry.stdout))
            .to_owned()
    };
    let ejected_line = line("search.package_top_k");
    assert!(ejected_line.contains("= 5 "), "{ejected_line}");
    assert!(!ejected_line.contains("(default)"), "{ejected_line}");
    assert!(
        ejected_line.contains(&format!("pipeline ({}:", ejected.display())),
        "{ejected_line}"
    );
    assert!(
        line("search.asset_top_k").ends_with("(--set)"),
        "{}",
        line("search.asset_top_k")
    );
    let configured = line("confidence_threshold.auto");
    assert!(
        configured.contains("config (") && configured.contains("unity-assets.yml:1:"),
        "{configured}"
    );
}
