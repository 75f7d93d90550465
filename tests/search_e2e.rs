//! `unity-assets search`, `pick` and `eval` end to end: the real binary on
//! Unity projects generated in a temporary folder (asset files and `.meta`
//! files only), indexed by the project's own indexer, then searched through
//! `pipelines/search.yaml`. Every fixed line that search and pick print
//! (`docs/contracts.md#exact-lines`) is checked here in a real run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::{json, Value};
use unity_assets::eval::seed_guid;

use test_support::cli::{self, Run};
use test_support::llm_server::{LlmServer, Reply};

const INDEX_DIR: &str = ".claude/unity-asset-index";

/// A generated Unity project.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    /// A project holding an empty file and a `.meta` (guid, labels) per asset.
    fn new(assets: &[(&str, &[&str])]) -> Self {
        let dir = tempfile::tempdir().expect("a temporary folder");
        std::fs::create_dir_all(dir.path().join("ProjectSettings")).unwrap();
        let project = Self { dir };
        for (rel, labels) in assets {
            project.add_asset(rel, labels);
        }
        project
    }

    fn add_asset(&self, rel: &str, labels: &[&str]) {
        let file = self.path().join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "").unwrap();
        let mut meta = format!("fileFormatVersion: 2\nguid: {}\n", seed_guid(rel));
        if !labels.is_empty() {
            meta.push_str("labels:\n");
            for label in labels {
                meta.push_str(&format!("- {label}\n"));
            }
        }
        std::fs::write(format!("{}.meta", file.display()), meta).unwrap();
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn index_file(&self, name: &str) -> PathBuf {
        self.path().join(INDEX_DIR).join(name)
    }

    /// Write `.claude/unity-assets.yml`.
    fn configure(&self, yaml: &str) {
        std::fs::create_dir_all(self.path().join(".claude")).unwrap();
        std::fs::write(self.path().join(".claude/unity-assets.yml"), yaml).unwrap();
    }

    fn run(&self, args: &[&str]) -> Run {
        Run::of(&mut self.command(args))
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = cli::command(Path::new(env!("CARGO_BIN_EXE_unity-assets")), self.path());
        command
            .args(args)
            // Projects that configure a model server are trusted by their
            // user here (the refusal itself is tests/hostile_project.rs).
            .env("UNITY_ASSETS_TRUST", "1");
        command
    }

    fn reindex(&self) {
        let run = self.run(&["reindex"]);
        assert_eq!(run.code, 0, "{run:?}");
    }

    fn json(&self, name: &str) -> Value {
        let text = std::fs::read_to_string(self.index_file(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"))
    }

    /// `search-result.json`, after checking it against its schema.
    fn result(&self) -> Value {
        let result = self.json("search-result.json");
        assert_valid("search-result.schema.json", &result);
        result
    }
}

fn assert_valid(schema: &str, value: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas").join(schema);
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(value).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{} invalid: {errors:?}\n{value:#}", path.display());
}

/// The paths of every candidate of every group.
fn candidate_paths(result: &Value) -> Vec<Vec<String>> {
    test_support::project::candidates(result, "path")
}

/// A small game project: four packages of a few assets each.
fn game_project() -> Project {
    Project::new(&[
        (
            "Assets/Packages/ZombieKit/Prefabs/Zombie_Basic.prefab",
            &["zombie", "enemy"],
        ),
        (
            "Assets/Packages/ZombieKit/Prefabs/Zombie_Fast.prefab",
            &["zombie", "enemy"],
        ),
        ("Assets/Packages/ZombieKit/Prefabs/Survivor_Player.prefab", &["player"]),
        ("Assets/Packages/ZombieKit/Scripts/ZombieAI.cs", &[]),
        (
            "Assets/Packages/NatureForest/Prefabs/Tree_Pine.prefab",
            &["nature", "tree"],
        ),
        ("Assets/Packages/NatureForest/Materials/Rock_Mossy.mat", &[]),
        ("Assets/Packages/AudioKit/Music/Music_Tension.wav", &["audio", "music"]),
        ("Assets/Packages/AudioKit/SFX/SFX_Footstep.wav", &["audio", "sfx"]),
        ("Assets/Packages/UIKit/Prefabs/MainMenu.prefab", &["ui"]),
        ("Assets/Packages/UIKit/Prefabs/PauseMenu.prefab", &["ui"]),
    ])
}

const NOTHING_MATCHES: &str = "spaceship laser cannon";
const FALLBACK_1_K5: &str = "[unity-assets:search] fallback stage 1: top-K expansion (K=5)";
const FALLBACK_1_K8: &str = "[unity-assets:search] fallback stage 1: top-K expansion (K=8)";
/// The builtin ranks every asset from the search index (a model would map-reduce chunks).
const FALLBACK_2: &str = "[unity-assets:search] fallback stage 2: every asset ranked (search index)";
const FALLBACK_3: &str = "[unity-assets:search] fallback stage 3: no_match (suggested_action=reindex)";

#[test]
fn search_prints_every_routed_group_and_writes_a_valid_result() {
    let project = game_project();
    let run = project.run(&["search", "좀비 적 캐릭터, 배경 음악", "--reindex"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("[unity-assets:index]"),
        "--reindex indexes first: {run:?}"
    );
    assert!(!run.stdout.contains("warning: the index is missing"), "{run:?}");
    let lines = run.lines();
    assert!(
        lines.contains(&"[unity-assets:search] 2 sub-intent(s) for \"좀비 적 캐릭터, 배경 음악\""),
        "{run:?}"
    );
    assert!(
        lines.contains(&"1. 좀비 적 캐릭터") && lines.contains(&"2. 배경 음악"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains(&cli::suggested(project.path(), "pick 0")),
        "{run:?}"
    );

    let result = project.result();
    assert_eq!(result["status"], "ok");
    assert_eq!(result["query"], "좀비 적 캐릭터, 배경 음악");
    assert_eq!(result["manifest_version"], project.json("manifest.json")["version"]);
    let paths = candidate_paths(&result);
    assert_eq!(paths.len(), 2, "one group per sub-intent: {result:#}");
    assert!(paths[0][0].contains("/Zombie_"), "{paths:?}");
    assert_eq!(paths[1][0], "Assets/Packages/AudioKit/Music/Music_Tension.wav");

    // --json prints the document the file holds.
    let run = project.run(&["search", "좀비 적 캐릭터, 배경 음악", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let printed = run.json();
    assert_eq!(printed, project.result());
}

#[test]
fn a_sub_intent_without_candidates_keeps_its_group() {
    let project = game_project();
    project.reindex();
    let run = project.run(&["search", "zombie enemy, spaceship laser"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run
        .lines()
        .contains(&"[unity-assets:search] 2 sub-intent(s) for \"zombie enemy, spaceship laser\""));
    let result = project.result();
    let paths = candidate_paths(&result);
    assert_eq!(paths.len(), 2, "{result:#}");
    assert!(!paths[0].is_empty() && paths[1].is_empty(), "{paths:?}");
}

#[test]
fn rejected_queries_print_no_query_and_exit_2() {
    let project = game_project();
    // A malformed query must not destroy the last pickable result.
    assert_eq!(project.run(&["index"]).code, 0);
    assert_eq!(project.run(&["search", "zombie enemy"]).code, 0);
    let good = project.result();
    for query in ["", "   ", "\"zombie", "좀비 “적", "😀🎮🔥"] {
        let run = project.run(&["search", query]);
        assert_eq!(run.code, 2, "{query:?}: {run:?}");
        let line = run
            .lines()
            .into_iter()
            .find(|l| l.starts_with("{\"status\": \"no_query\", \"reason\": "))
            .unwrap_or_else(|| panic!("{query:?}: no no_query line\n{run:?}"));
        let printed: Value = serde_json::from_str(line).expect("the line is JSON");
        assert!(!printed["reason"].as_str().expect("a reason").is_empty());
        assert_eq!(project.result(), good, "{query:?} replaced search-result.json");
    }
    assert_eq!(
        project.run(&["pick", "0"]).code,
        0,
        "the earlier result is still pickable"
    );
    // --json: the no_query document alone on stdout, even though the run stops early.
    let run = project.run(&["search", "", "--json"]);
    assert_eq!(run.code, 2, "{run:?}");
    let printed = run.json();
    assert_eq!(printed["status"], "no_query");
    assert_eq!(printed["groups"], json!([]));
}

#[test]
fn search_json_without_an_index_says_why_on_stdout() {
    let project = game_project();
    let run = project.run(&["search", "zombie", "--json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let printed = run.json();
    assert_eq!(printed["status"], "no_index");
    assert!(printed["reason"].as_str().unwrap().contains("unity-assets index"));
}

#[test]
fn json_flag_prints_each_commands_document() {
    let project = game_project();
    let index = project.run(&["index", "--json"]);
    let indexed = index.json();
    assert!(indexed["assets"].as_u64().unwrap() > 0, "{indexed}");
    assert!(
        index.stderr.contains("[unity-assets:index]"),
        "the summary line moves to stderr: {index:?}"
    );

    let doctor = project.run(&["doctor", "--offline", "--json"]);
    let report = doctor.json();
    assert_eq!(report["ok"], doctor.code == 0, "{report}");
    assert!(report["checks"].as_array().is_some_and(|c| c.len() >= 6), "{report}");

    let refused = project.run(&["pick", "0", "--json"]);
    assert_eq!(refused.code, 1, "no search yet: {refused:?}");
    let why = refused.json();
    assert_eq!(why["ok"], false, "{why}");
}

#[test]
fn missing_or_stale_index_warns_with_both_ways_out() {
    let project = game_project();
    let warns = |run: &Run| {
        run.stdout.contains("warning: the index is missing or stale")
            && run.stdout.contains(&cli::suggested(project.path(), "reindex"))
            && run.stdout.contains("`--reindex`")
    };
    let missing = project.run(&["search", "zombie"]);
    assert!(warns(&missing), "{missing:?}");

    let reindexed = project.run(&["search", "zombie", "--reindex"]);
    assert!(
        !warns(&reindexed) && reindexed.stdout.contains("[unity-assets:index]"),
        "{reindexed:?}"
    );
    assert_eq!(project.result()["status"], "ok");
    let fresh = project.run(&["search", "zombie"]);
    assert!(
        !warns(&fresh) && !fresh.stdout.contains("[unity-assets:index]"),
        "{fresh:?}"
    );

    // assets.jsonl touched after the last index run.
    let assets = std::fs::File::options()
        .write(true)
        .open(project.index_file("assets.jsonl"))
        .unwrap();
    assets
        .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(60))
        .unwrap();
    let stale = project.run(&["search", "zombie"]);
    assert!(warns(&stale), "{stale:?}");
    // The query's own "재인덱스해서 검색" counts as --reindex.
    let asked = project.run(&["search", "zombie 재인덱스해서 검색"]);
    assert!(
        !warns(&asked) && asked.stdout.contains("[unity-assets:index]"),
        "{asked:?}"
    );
}

#[test]
fn a_rich_index_or_a_small_context_takes_the_map_reduce_branch() {
    let project = game_project();
    project.configure("index_depth: rich\nmax_assets_in_context: 4\n");
    project.reindex();
    let assets = std::fs::read_to_string(project.index_file("assets.jsonl"))
        .unwrap()
        .lines()
        .count();
    let run = project.run(&["search", "zombie enemy"]);
    assert_eq!(run.code, 0, "{run:?}");
    // The builtin ranks every asset from the search index: no chunks.
    let line = format!("[unity-assets:search] map-reduce 분기 활성 (assets={assets}, search index)");
    assert_eq!(run.count(&line), 1, "expected {line}\n{run:?}");
    let paths = candidate_paths(&project.result());
    assert!(paths[0][0].contains("/Zombie_"), "{paths:?}");
}

#[test]
fn more_than_2000_assets_take_the_map_reduce_branch() {
    let project = game_project();
    for i in 0..2000 {
        project.add_asset(&format!("Assets/Packages/Props/Crate_{i:04}.prefab"), &[]);
    }
    project.reindex();
    let run = project.run(&["search", "mossy rock"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.count("[unity-assets:search] map-reduce 분기 활성 (assets=2010, search index)"),
        1,
        "{run:?}"
    );
    assert_eq!(
        candidate_paths(&project.result())[0][0],
        "Assets/Packages/NatureForest/Materials/Rock_Mossy.mat"
    );
}

#[test]
fn a_query_that_matches_nothing_goes_through_all_three_fallback_stages() {
    let project = game_project();
    project.reindex();
    let run = project.run(&["search", NOTHING_MATCHES]);
    assert_eq!(run.code, 0, "{run:?}");
    let markers: Vec<&str> = run
        .lines()
        .into_iter()
        .filter(|l| l.contains("fallback stage"))
        .collect();
    assert_eq!(
        markers,
        [FALLBACK_1_K5, FALLBACK_1_K8, FALLBACK_2, FALLBACK_3],
        "{run:?}"
    );
    let result = project.result();
    assert_eq!(result["status"], "no_match");
    assert_eq!(result["suggested_action"], "reindex");
    assert_eq!(result["groups"], Value::Array(vec![]));

    // max_stage 2: stage 2 is the last try, then straight to no_match.
    project.configure("fallback:\n  max_stage: 2\n");
    let run = project.run(&["search", NOTHING_MATCHES]);
    let markers: Vec<&str> = run
        .lines()
        .into_iter()
        .filter(|l| l.contains("fallback stage"))
        .collect();
    assert_eq!(
        markers,
        [FALLBACK_1_K5, FALLBACK_1_K8, FALLBACK_2, FALLBACK_3],
        "{run:?}"
    );
    assert_eq!(project.result()["status"], "no_match");
}

#[test]
fn fallback_stops_at_k5_when_a_wider_package_choice_finds_the_asset() {
    // Three packages each hold one word of the query per asset, so their
    // vocabularies cover the whole query and they are chosen first, but no
    // single asset of theirs reaches 0.40: their prefabs lack the query's
    // subject (lamp, its last noun) and the one naming it is a script. The
    // asset with the subject and most of the query sits in a fourth
    // package, reached only with K=5.
    let mut assets: Vec<(String, Vec<&str>)> = Vec::new();
    for package in ["Alpha", "Bravo", "Charlie"] {
        for word in ["Red", "Crystal", "Tower"] {
            assets.push((format!("Assets/Packages/{package}/{word}_{package}.prefab"), vec![]));
        }
        assets.push((format!("Assets/Packages/{package}/Lamp{package}.cs"), vec![]));
    }
    assets.push(("Assets/Packages/Delta/Red_Crystal_Lamp.prefab".to_owned(), vec![]));
    assets.push(("Assets/Packages/Delta/Bench.prefab".to_owned(), vec![]));
    let refs: Vec<(&str, &[&str])> = assets.iter().map(|(p, l)| (p.as_str(), l.as_slice())).collect();
    let project = Project::new(&refs);
    project.reindex();
    let run = project.run(&["search", "red crystal tower lamp"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.count(FALLBACK_1_K5), 1, "{run:?}");
    for absent in [FALLBACK_1_K8, FALLBACK_2, FALLBACK_3] {
        assert_eq!(run.count(absent), 0, "{absent}\n{run:?}");
    }
    let result = project.result();
    assert_eq!(result["status"], "ok");
    let top = &result["groups"][0]["candidates"][0];
    assert_eq!(top["path"], "Assets/Packages/Delta/Red_Crystal_Lamp.prefab");
    assert!(top["confidence"].as_f64().unwrap() >= 0.40, "{top}");
}

const PICK_NO_RESULT: &str = "[unity-assets:pick] error: no search result; run /unity-assets:search first";
const PICK_STALE: &str = "[unity-assets:pick] error: stale search result; reindex required";
const PICK_LOCKED: &str = "[unity-assets:pick] error: feedback.jsonl locked";

#[test]
fn pick_prints_its_five_lines_with_their_exit_codes() {
    let project = game_project();
    project.reindex();
    let run = project.run(&["pick", "0"]);
    assert_eq!((run.code, run.lines()[0]), (1, PICK_NO_RESULT), "{run:?}");
    let search = cli::suggested(project.path(), "search 'zombie enemy'");
    assert_eq!(
        run.lines()[1],
        format!("  help: search first — in a shell {search} with your own words — then pick a number it lists")
    );

    assert_eq!(project.run(&["search", "zombie enemy"]).code, 0);
    let result = project.result();
    let candidates = result["groups"][0]["candidates"].as_array().unwrap().clone();
    let out_of_range = candidates.len().to_string();
    let run = project.run(&["pick", &out_of_range]);
    let line = format!(
        "[unity-assets:pick] error: index {out_of_range} out of range (max {})",
        candidates.len() - 1
    );
    // The fixed line, then that pick counts from 0.
    assert_eq!((run.code, run.lines()[0]), (1, line.as_str()), "{run:?}");
    assert!(run.lines()[1].starts_with("  help: pick counts from 0"), "{run:?}");

    let lock = project.index_file("feedback.jsonl.lock");
    std::fs::write(&lock, "").unwrap();
    let run = project.run(&["pick", "0"]);
    assert_eq!((run.code, run.lines()[0]), (1, PICK_LOCKED), "{run:?}");
    std::fs::remove_file(&lock).unwrap();

    let run = project.run(&["pick", "1"]);
    let recorded = format!(
        "[unity-assets:pick] recorded: {}",
        candidates[1]["guid"].as_str().unwrap()
    );
    let path = format!("  path: {}", candidates[1]["path"].as_str().unwrap());
    assert_eq!(
        (run.code, run.lines()),
        (0, vec![recorded.as_str(), path.as_str()]),
        "{run:?}"
    );
    let feedback = std::fs::read_to_string(project.index_file("feedback.jsonl")).unwrap();
    let row: Value = serde_json::from_str(feedback.trim()).unwrap();
    assert_valid("feedback-row.schema.json", &row);
    assert_eq!(row["picked_guid"], candidates[1]["guid"]);
    assert_eq!(row["query"], "zombie enemy");

    // A reindex that changes the manifest version makes the result stale.
    let manifest_path = project.index_file("manifest.json");
    let mut manifest = project.json("manifest.json");
    manifest["version"] = Value::from("v999.0");
    std::fs::write(&manifest_path, manifest.to_string()).unwrap();
    let run = project.run(&["pick", "0"]);
    // The fixed line, then what actually helps.
    let help = format!(
        "  help: the index changed after this search: run the search again, {}, then pick",
        cli::suggested(project.path(), "search 'zombie enemy'")
    );
    assert_eq!((run.code, run.lines()), (1, vec![PICK_STALE, &help]), "{run:?}");
}

#[test]
fn fifty_concurrent_picks_leave_fifty_intact_rows() {
    let project = game_project();
    project.reindex();
    assert_eq!(project.run(&["search", "zombie enemy"]).code, 0);
    let picks: Vec<String> = (0..50).map(|i| (i % 2).to_string()).collect();
    let started = Instant::now();
    let children: Vec<_> = picks
        .iter()
        .map(|n| {
            project
                .command(&["pick", n])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("pick starts")
        })
        .collect();
    // The lock waits 3 × 50 ms; on a loaded machine a writer can be
    // descheduled longer than that while it holds the lock, and the pick
    // then says so and records nothing. The user's remedy is to pick
    // again, so a refused pick is retried here; every row must land whole.
    let mut refused = 0;
    for (child, n) in children.into_iter().zip(&picks) {
        let mut run = Run::finished(child.wait_with_output().unwrap(), started.elapsed());
        while run.code == 1 && run.lines().first() == Some(&PICK_LOCKED) {
            refused += 1;
            assert!(refused < 50, "the lock never frees: {run:?}");
            run = project.run(&["pick", n]);
        }
        assert_eq!(run.code, 0, "{run:?}");
        assert!(run.stdout.starts_with("[unity-assets:pick] recorded: "), "{run:?}");
    }
    eprintln!("{refused} of 50 concurrent picks found feedback.jsonl locked and were retried");
    let feedback = std::fs::read_to_string(project.index_file("feedback.jsonl")).unwrap();
    let rows: Vec<Value> = feedback
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("torn row {l:?}: {e}")))
        .collect();
    assert_eq!(rows.len(), 50);
    rows.iter()
        .for_each(|row| assert_valid("feedback-row.schema.json", row));
    assert!(!project.index_file("feedback.jsonl.lock").exists());
}

#[test]
fn past_picks_reach_the_next_search_and_bad_rows_are_reported_once() {
    let project = game_project();
    project.reindex();
    assert_eq!(project.run(&["search", "zombie enemy"]).code, 0);
    let before = project.result();
    let second = before["groups"][0]["candidates"][1].clone();
    for _ in 0..2 {
        assert_eq!(project.run(&["pick", "1"]).code, 0);
    }
    assert_eq!(project.run(&["search", "zombie enemy"]).code, 0);
    let after = project.result();
    let top = &after["groups"][0]["candidates"][0];
    assert_eq!(top["guid"], second["guid"], "the picked asset now leads:\n{after:#}");
    assert!(top["reasoning"].as_str().unwrap().contains("picked before"), "{top}");

    let feedback = project.index_file("feedback.jsonl");
    let mut text = std::fs::read_to_string(&feedback).unwrap();
    text.push_str("{\"not\": \"a feedback row\"}\n");
    std::fs::write(&feedback, text).unwrap();
    let run = project.run(&["search", "zombie enemy"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.count("[unity-assets:search] feedback row skipped: line 3"),
        1,
        "{run:?}"
    );
    assert_eq!(run.stdout.matches("feedback row skipped").count(), 1, "{run:?}");
}

#[test]
fn eval_scores_a_golden_file_of_our_own_format() {
    let project = game_project();
    project.reindex();
    let golden = project.path().join("golden.yml");
    std::fs::write(
        &golden,
        "queries:\n\
         \x20 - {query: \"좀비 적\", accepted: [Assets/Packages/ZombieKit/Prefabs/Zombie_Basic.prefab, Assets/Packages/ZombieKit/Prefabs/Zombie_Fast.prefab], category: character}\n\
         \x20 - {query: \"배경 음악\", accepted: [Assets/Packages/AudioKit/Music/Music_Tension.wav], category: audio}\n\
         \x20 - {query: \"이끼 낀 바위\", accepted: [Assets/Packages/NatureForest/Materials/Rock_Mossy.mat], category: environment}\n\
         \x20 - {query: \"메인 메뉴 UI\", accepted: [Assets/Packages/UIKit/Prefabs/MainMenu.prefab], category: ui}\n\
         routing:\n\
         \x20 - {query: \"좀비 적과 배경 음악\", multi: true, min_sub_intents: 2}\n\
         \x20 - {query: \"소나무 프리팹\", multi: false}\n",
    )
    .unwrap();
    let golden = golden.to_string_lossy().into_owned();
    let run = project.run(&["eval", &golden]);
    assert_eq!(run.code, 0, "{run:?}");
    for metric in ["Recall@3", "Precision@3", "MRR"] {
        assert!(run.stdout.contains(metric), "{metric}: {run:?}");
    }
    let run = project.run(&["eval", &golden, "--json"]);
    let report = run.json();
    assert_eq!(report["overall"]["queries"], 4);
    assert_eq!(report["overall"]["recall_at_3"], 1.0, "{report:#}");
    assert_eq!(report["overall"]["mrr"], 1.0, "{report:#}");
    assert_eq!(report["routing"]["correct"], 2, "{report:#}");
}

/// The seed golden set end to end: its 46 assets as files and `.meta` files
/// only, indexed by this project, then every golden query through search.
/// Skipped when `../shared/benchmarks/seed-golden` is not there.
#[test]
fn seed_golden_set_end_to_end() {
    let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/benchmarks/seed-golden");
    let Ok(text) = std::fs::read_to_string(seed.join("assets-template.yml")) else {
        eprintln!("skipped: {} is absent", seed.display());
        return;
    };
    let templates: Value = serde_yaml::from_str(&text).expect("assets-template.yml is YAML");
    let project = Project::new(&[]);
    for t in templates["templates"].as_array().expect("a templates list") {
        let field = |k: &str| t[k].as_str().unwrap_or_default();
        let rel = format!("{}/{}{}", field("dir"), field("name"), field("ext"));
        let labels: Vec<&str> = t["labels"]
            .as_array()
            .map(|ls| ls.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        project.add_asset(&rel, &labels);
    }
    project.reindex();
    let golden = seed.join("golden-queries.yml").to_string_lossy().into_owned();
    let run = project.run(&["eval", &golden, "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let report = run.json();
    let overall = &report["overall"];
    let routing = &report["routing"];
    eprintln!(
        "seed golden end to end: Recall@3 {} Precision@3 {} MRR {} routing {}/{}",
        overall["recall_at_3"], overall["precision_at_3"], overall["mrr"], routing["correct"], routing["total"]
    );
    assert!(overall["recall_at_3"].as_f64().unwrap() >= 0.90, "{report:#}");
    assert!(routing["correct"].as_u64().unwrap() >= 8, "{report:#}");
}

#[test]
fn json_mode_keeps_stdout_a_single_document() {
    let project = game_project();
    project.reindex();
    // A query that matches nothing walks every fallback stage: their lines go
    // to stderr, the document alone to stdout.
    let run = project.run(&["search", "quantum spaceship cockpit hologram", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let printed = run.json();
    assert_eq!(printed["status"], "no_match");
    assert!(
        run.stderr
            .contains("[unity-assets:search] fallback stage 3: no_match (suggested_action=reindex)"),
        "{run:?}"
    );
}

/// With a model in exhaustive mode, map-reduce sends each chunk once for all sub-intents (not
/// once per chunk and sub-intent) and merges the chunks' answers per
/// sub-intent, a guid named twice counted once; only indexed assets, with
/// the index's paths, reach the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_ranks_each_chunk_for_every_sub_intent_in_one_call() {
    let project = game_project();
    project.reindex();
    let zombie = "Assets/Packages/ZombieKit/Prefabs/Zombie_Fast.prefab";
    let music = "Assets/Packages/AudioKit/Music/Music_Tension.wav";
    let usage = json!({"prompt_tokens": 10, "completion_tokens": 10});
    let route = json!({"multi_category": true, "sub_intents": [
        {"intent": "좀비 적", "category_hint": "character", "subtype_hint": "Prefab/character"},
        {"intent": "배경 음악", "category_hint": "audio", "subtype_hint": null},
    ]});
    let candidate = |path: &str, confidence: f64| json!({"guid": seed_guid(path), "path": path, "confidence": confidence, "reasoning": "It is what was asked."});
    // Every chunk names the same two assets: the merge must not list them twice.
    // One of them with an altered path, and an asset the index does not hold:
    // the index's path wins, the invented asset is dropped.
    let mut altered = candidate(zombie, 0.9);
    altered["path"] = json!("Assets/../../outside.prefab");
    let invented =
        json!({"guid": "f".repeat(32), "path": "Assets/Invented.prefab", "confidence": 0.95, "reasoning": "Trust me."});
    let ranked = json!({"groups": [{"candidates": [invented, altered]}, {"candidates": [candidate(music, 0.8)]}]});
    let llm = LlmServer::start(vec![
        Reply::openai_content(&route.to_string(), usage.clone()),
        Reply::openai_content(&ranked.to_string(), usage),
    ])
    .await;
    project.configure(&format!(
        "llm: {{provider: openai, base_url: \"{}/v1\"}}\nmax_assets_in_context: 6\nsearch: {{mode: exhaustive}}\n",
        llm.url()
    ));
    let run = tokio::task::block_in_place(|| project.run(&["search", "좀비 적과 배경 음악"]));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.count("[unity-assets:search] map-reduce 분기 활성 (assets=10, chunks=2)"),
        1,
        "{run:?}"
    );
    let requests = llm.requests();
    assert_eq!(
        requests.len(),
        3,
        "one routing call, then one call per chunk: {requests:#?}"
    );
    for chunk_call in &requests[1..] {
        let prompt = chunk_call.body.to_string();
        assert!(
            prompt.contains("1. 좀비 적 (subtype hint: Prefab/character)") && prompt.contains("2. 배경 음악"),
            "{prompt}"
        );
    }
    assert_eq!(
        candidate_paths(&project.result()),
        [vec![zombie.to_owned()], vec![music.to_owned()]]
    );
    let dropped = format!(
        "[unity-assets:search] warning: dropped candidate \"{}\" (\"Assets/Invented.prefab\"): not in the index",
        "f".repeat(32)
    );
    assert_eq!(run.count(&dropped), 1, "{run:?}");
}
