//! The binary on broken input: errors that are not about a place in a file
//! (a `--set` flag, a pipeline name, a missing folder) carry no fake `:1:1:`.

#[path = "support/generated_project.rs"]
mod generated_project;

use generated_project::{run_in, Project};

#[test]
fn errors_about_no_file_carry_no_position() {
    let project = Project::generated(3);
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
    let run = run_in(&missing, &["search", "zombie"], &[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("nonexistent: error:") && !run.stderr.contains(":1:1:"),
        "{run:?}"
    );
}
