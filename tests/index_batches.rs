//! How the builtin's work is cut up never shows in the index: a generated
//! realistic project indexed in one large tag batch (the builtin's default)
//! and in many small ones (as a model is asked) ends with the same
//! `assets.jsonl`, `packages.jsonl` and `graph.json`, byte for byte.

use std::fs;
use std::path::Path;

use test_support::cli::{self, Run};
use test_support::large_project;

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");
const INDEX: &str = ".claude/unity-asset-index";

fn run(project: &Path, args: &[&str]) -> Run {
    let run = Run::of(cli::command(Path::new(BIN), project).args(args));
    assert_eq!(run.code, 0, "{args:?}: {}", run.output());
    run
}

fn index_files(project: &Path) -> Vec<Vec<u8>> {
    ["assets.jsonl", "packages.jsonl", "graph.json"]
        .iter()
        .map(|name| fs::read(project.join(INDEX).join(name)).unwrap())
        .collect()
}

#[test]
fn one_large_builtin_batch_and_many_small_ones_write_the_same_index() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let (words, _) = large_project::vocabulary(Path::new("no-corpora-here"));
    large_project::generate(project, 1_200, &words, 11).unwrap();
    fs::create_dir_all(project.join(".claude")).unwrap();
    fs::write(project.join(".claude/unity-assets.yml"), "index_depth: normal\n").unwrap();

    let one_batch = run(project, &["-q", "index", "--json"]);
    let large = index_files(project);
    let small_batches = run(project, &["-q", "reindex", "--json", "--set", "builtin_batch_size=7"]);
    assert_eq!(
        index_files(project),
        large,
        "the index files differ with the batch size"
    );

    let tagged = |run: &Run| {
        let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        out["tagged_builtin"].as_u64().unwrap()
    };
    assert!(tagged(&one_batch) >= 1_200, "{}", one_batch.stdout);
    assert_eq!(tagged(&small_batches), tagged(&one_batch));
}
