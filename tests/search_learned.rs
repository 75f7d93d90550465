//! The learned scorer's loop, as a team runs it on its own project: `eval
//! --features` dumps every candidate fusion weighed with its features and
//! judgment, `benchmarks/judged/train.py` fits weights from them, and the
//! search reads the weights as a data override — an unusable one is an
//! error naming the file, never a silent fall back.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use test_support::project::{Project, INDEX_DIR};

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");
const WEIGHTS: &str = "data/search-weights.yml";

/// Props and characters, indexed, with a judged query set beside them.
fn judged_project() -> (Project, String) {
    let project = Project::configured(BIN, "");
    std::fs::create_dir_all(project.path().join("ProjectSettings")).unwrap();
    let assets = [
        "Assets/Props/Barrel_Wooden.prefab",
        "Assets/Props/Barrel_Metal.prefab",
        "Assets/Props/Crate_Scifi.prefab",
        "Assets/Props/Lantern_Old.prefab",
        "Assets/Characters/Zombie_Brute.prefab",
        "Assets/Characters/Zombie_Walker.prefab",
        "Assets/Characters/Player.prefab",
        "Assets/Audio/Footstep_Stone.wav",
    ];
    for (n, rel) in assets.iter().enumerate() {
        project.add_asset(rel, n + 1);
    }
    assert_eq!(project.run(&["index"]).code, 0);
    let set = project.path().join("judged.yml");
    std::fs::write(
        &set,
        "queries:\n\
         - {query: \"wooden barrel\", accepted: [Assets/Props/Barrel_Wooden.prefab]}\n\
         - {query: \"나무 통\", accepted: [Assets/Props/Barrel_Wooden.prefab]}\n\
         - {query: \"zombie\", accepted: [Assets/Characters/Zombie_Brute.prefab]}\n\
         - {query: \"old lantern\", accepted: [Assets/Props/Lantern_Old.prefab]}\n\
         - {query: \"stone footstep sound\", accepted: [Assets/Audio/Footstep_Stone.wav]}\n\
         - {query: \"spaceship cockpit\", accepted: []}\n",
    )
    .unwrap();
    (project, set.to_string_lossy().into_owned())
}

fn python() -> Option<String> {
    let found = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    found.then(|| "python3".to_owned())
}

#[test]
fn features_train_weights_that_search_reads_as_data() {
    let (project, set) = judged_project();
    let dumps = tempfile::tempdir().unwrap();
    let dump = dumps.path().join("props.jsonl");
    let run = project.run(&["eval", &set, "--features", &dump.to_string_lossy()]);
    assert_eq!(run.code, 0, "{run:?}");
    let rows: Vec<Value> = std::fs::read_to_string(&dump)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!rows.is_empty());
    let width = rows[0]["features"].as_array().unwrap().len();
    assert!(rows.iter().all(|r| r["features"].as_array().unwrap().len() == width));
    assert!(rows.iter().any(|r| r["answer"] == true), "some candidate is an answer");
    assert!(rows.iter().any(|r| r["answer"] == false), "and some is not");
    assert!(rows.iter().all(|r| r["set"] == "judged"));

    let Some(python) = python() else {
        assert!(std::env::var_os("CI").is_none(), "CI installs python3");
        eprintln!("skipped the training half: no python3");
        return;
    };
    let trainer = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/judged/train.py");
    let trained = dumps.path().join("weights.yml");
    let out = Command::new(python)
        .arg(&trainer)
        .arg(dumps.path())
        .arg("--out")
        .arg(&trained)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&trained).unwrap();
    assert!(text.contains("trained_on: \"1 judged projects"), "{text}");
    project.override_file(WEIGHTS, &text);
    let run = project.run(&["search", "wooden barrel"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(project.result_guids()[0][0], format!("{:032x}", 1), "{run:?}");
}

#[test]
fn the_weights_decide_the_confidence_and_a_broken_file_is_an_error() {
    let (project, _) = judged_project();
    // Weights that believe every candidate lift a match to auto (a partial
    // one stays under it, whatever the weights: `fuse::learned_confidence`).
    project.override_file(WEIGHTS, "version: 1\nbias: 6\nweights: {}\n");
    let run = project.run(&["search", "old lantern", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        doc["groups"][0]["candidates"][0]["confidence"].as_f64().unwrap() > 0.99,
        "{doc:#}"
    );
    // Weights that believe nothing: the same query ends in no_match.
    project.override_file(WEIGHTS, "version: 1\nbias: -6\nweights: {}\n");
    let run = project.run(&["search", "wooden lantern", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["status"], "no_match", "{doc:#}");

    for (broken, says) in [
        ("version: 1\nbias: 0\nweights: {colour: 1}\n", "`colour` is no feature"),
        ("version: 2\nbias: 0\nweights: {}\n", "version 2 is not known"),
        ("weights: [", "expected {version: 1"),
    ] {
        project.override_file(WEIGHTS, broken);
        let run = project.run(&["search", "crate"]);
        assert_ne!(run.code, 0, "{run:?}");
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(all.contains(says), "{broken}: {all}");
        assert!(all.contains("search-weights.yml"), "names the file: {all}");
    }
    assert!(project.path().join(INDEX_DIR).is_dir());
}
