//! Filters beside natural language (`docs/filters.md`) end to end: the
//! example project copied to a temporary folder, indexed by the real binary,
//! searched through `pipelines/search.yaml` in every retrieval mode.
//!
//! The example has no prefab variant, no missing script and stub scenes, so
//! [`augment`] gives three rows the `variant_of`, `missing_scripts` and
//! `component_types` fields the index writes for such files, and each filter is tested on rows holding what it reads.

use std::path::Path;

use proptest::prelude::*;
use serde_json::{json, Value};
use test_support::project::{Project, INDEX_DIR};

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");

const PLAYER: &str = "Assets/Prefabs/Player.prefab";
const BOSS: &str = "Assets/ZombieKit/Prefabs/좀비_보스.prefab";
const LEVEL: &str = "Assets/Scenes/Survival_Level01.unity";

/// The example project indexed at `depth`, its rows augmented.
fn example(depth: &str) -> Project {
    let project = Project::configured(BIN, &format!("index_depth: {depth}\n"));
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/zombie-survival"),
        project.path(),
    );
    let run = project.run(&["index"]);
    assert_eq!(run.code, 0, "{}", run.output());
    augment(
        &project,
        &[
            (PLAYER, json!({"variant_of": "ffffffffffffffffffffffffffffffff"})),
            (BOSS, json!({"missing_scripts": ["eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"]})),
            (LEVEL, json!({"component_types": ["Light", "WaveSpawner"]})),
        ],
    );
    project
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Add `fields` to the rows of these paths, keeping `assets.jsonl`'s
/// modification time so the index stays fresh; the search index, built from
/// the rows before, is removed so the first search builds it from these.
fn augment(project: &Project, fields: &[(&str, Value)]) {
    let file = project.path().join(INDEX_DIR).join("assets.jsonl");
    let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
    let mut rows = rows(project);
    for (path, extra) in fields {
        let row = rows
            .iter_mut()
            .find(|r| r["path"] == *path)
            .unwrap_or_else(|| panic!("{path} is indexed"));
        for (key, value) in extra.as_object().unwrap() {
            row[key] = value.clone();
        }
    }
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&file, text).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    std::fs::remove_file(project.path().join(INDEX_DIR).join("search-index.bin")).unwrap();
}

fn rows(project: &Project) -> Vec<Value> {
    std::fs::read_to_string(project.path().join(INDEX_DIR).join("assets.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn row_of<'a>(rows: &'a [Value], path: &str) -> &'a Value {
    rows.iter().find(|r| r["path"] == path).unwrap()
}

/// `search QUERY --json` with `--set` flags: the document.
fn search(project: &Project, query: &str, sets: &[&str]) -> Value {
    let mut args = vec!["search", query, "--json"];
    for set in sets {
        args.extend(["--set", set]);
    }
    let run = project.run(&args);
    assert_eq!(run.code, 0, "{query:?} {sets:?}: {}", run.output());
    assert!(
        !run.stderr.contains("stale"),
        "the augmented index stays fresh: {}",
        run.output()
    );
    run.json()
}

/// Every candidate's path, over all groups.
fn paths(document: &Value) -> Vec<String> {
    document["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["candidates"].as_array().unwrap())
        .map(|c| c["path"].as_str().unwrap().to_owned())
        .collect()
}

fn strings(row: &Value, field: &str) -> Vec<String> {
    row[field]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

fn sorted(mut paths: Vec<String>) -> Vec<String> {
    paths.sort();
    paths
}

/// The paths of the rows `keep` accepts, sorted as a listing is.
fn expected(rows: &[Value], keep: impl Fn(&Value) -> bool) -> Vec<String> {
    sorted(
        rows.iter()
            .filter(|r| keep(r))
            .map(|r| r["path"].as_str().unwrap().to_owned())
            .collect(),
    )
}

#[test]
fn each_filter_alone_lists_exactly_its_matches() {
    let project = example("rich");
    let rows = rows(&project);
    let guid_of = |path: &str| row_of(&rows, path)["guid"].as_str().unwrap().to_owned();
    let texture = "Assets/MedievalVillage/Textures/Stone_Wall_Albedo.png";
    let referencing = expected(&rows, |r| strings(r, "dependencies").contains(&guid_of(texture)));
    assert!(
        !referencing.is_empty(),
        "the example's materials reference their textures"
    );
    let player_guid = guid_of(PLAYER);
    let cases: Vec<(String, Vec<String>)> = vec![
        ("t:Material".into(), expected(&rows, |r| r["type"] == "Material")),
        ("t=Texture2D".into(), expected(&rows, |r| r["type"] == "Texture2D")),
        (
            "t:ZombieAI".into(),
            expected(&rows, |r| strings(r, "component_types").contains(&"ZombieAI".into())),
        ),
        (
            "t:Light".into(),
            expected(&rows, |r| strings(r, "component_types").contains(&"Light".into())),
        ),
        (
            "t:WaveConfig".into(),
            expected(&rows, |r| r["script_class"] == "WaveConfig"),
        ),
        (
            "l:nature".into(),
            expected(&rows, |r| strings(r, "labels").contains(&"nature".into())),
        ),
        (
            "dir:Rocks".into(),
            expected(&rows, |r| r["path"].as_str().unwrap().contains("/Rocks/")),
        ),
        (
            "path:UIKit/Sprites".into(),
            expected(&rows, |r| {
                r["path"].as_str().unwrap().starts_with("Assets/UIKit/Sprites/")
            }),
        ),
        (
            "ext:wav".into(),
            expected(&rows, |r| r["path"].as_str().unwrap().ends_with(".wav")),
        ),
        (format!("ref:{texture}"), referencing.clone()),
        (format!("ref={}", guid_of(texture)), referencing),
        (player_guid.clone(), vec![PLAYER.to_owned()]),
        (format!("guid:{}", player_guid.to_uppercase()), vec![PLAYER.to_owned()]),
        ("prefab:variant".into(), vec![PLAYER.to_owned()]),
        (
            "prefab:regular".into(),
            expected(&rows, |r| r["type"] == "Prefab" && r["path"] != PLAYER),
        ),
        ("missing:scripts".into(), vec![BOSS.to_owned()]),
        (
            "t:Prefab -l:nature -dir:UIKit".into(),
            expected(&rows, |r| {
                r["type"] == "Prefab"
                    && !strings(r, "labels").contains(&"nature".into())
                    && !r["path"].as_str().unwrap().starts_with("Assets/UIKit/")
            }),
        ),
    ];
    for (query, want) in cases {
        assert!(!want.is_empty(), "{query}: the example has matches");
        let document = search(&project, &query, &[]);
        assert_eq!(document["listing"], true, "{query}: {document}");
        assert_eq!(document["matched"], want.len(), "{query}");
        assert_eq!(paths(&document), want, "{query}");
    }
}

#[test]
fn filters_narrow_and_the_words_rank_in_every_mode() {
    let project = example("normal");
    let rows = rows(&project);
    for mode in ["drill-down", "exhaustive", "rerank"] {
        let set = format!("search.mode={mode}");
        let document = search(&project, "t:Prefab dir:NatureForest 이끼 낀 바위", &[&set]);
        let found = paths(&document);
        assert_eq!(
            found.first().map(String::as_str),
            Some("Assets/NatureForest/Prefabs/Rocks/Mossy_Rock_Large.prefab"),
            "{mode}: {document}"
        );
        for path in &found {
            assert!(
                row_of(&rows, path)["type"] == "Prefab" && path.contains("/NatureForest/"),
                "{mode}: {path}"
            );
        }
        assert!(document.get("listing").is_none(), "{mode}: words rank");
        assert_eq!(document["filters"][0], json!({"key": "type", "value": "Prefab"}));
        // Without the filter the same words reach the rock's textures and material.
        let unfiltered = paths(&search(&project, "이끼 낀 바위", &[&set]));
        assert!(
            unfiltered.iter().any(|p| !p.ends_with(".prefab")),
            "{mode}: {unfiltered:?}"
        );
        let excluded = paths(&search(&project, "-t:Prefab 이끼 낀 바위", &[&set]));
        assert!(
            !excluded.is_empty() && excluded.iter().all(|p| !p.ends_with(".prefab")),
            "{mode}: {excluded:?}"
        );
    }
    let run = project.run(&["search", "t:Prefab dir:NatureForest 이끼 낀 바위"]);
    let matched = expected(&rows, |r| {
        r["type"] == "Prefab" && r["path"].as_str().unwrap().contains("/NatureForest/")
    })
    .len();
    assert!(
        run.stdout.contains(&format!(
            "[unity-assets:search] filters t:Prefab dir:NatureForest keep {matched} asset(s); the words rank them"
        )),
        "{}",
        run.output()
    );
}

#[test]
fn a_filters_only_query_lists_capped_with_the_count() {
    let project = example("normal");
    let prefabs = expected(&rows(&project), |r| r["type"] == "Prefab");
    let run = project.run(&["search", "t:Prefab", "--set", "search.list_limit=2"]);
    assert_eq!(run.code, 0, "{}", run.output());
    assert!(
        run.stdout.contains(&format!(
            "[unity-assets:search] {} asset(s) match t:Prefab; the first 2 by path:\n   [0] {} — ",
            prefabs.len(),
            prefabs[0]
        )),
        "{}",
        run.output()
    );
    let document: Value = serde_json::from_str(
        &std::fs::read_to_string(project.path().join(INDEX_DIR).join("search-result.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(paths(&document), prefabs[..2]);
    assert_eq!(document["matched"], prefabs.len());
    // A listed match is picked like a ranked candidate.
    let pick = project.run(&["pick", "1"]);
    assert_eq!(pick.code, 0, "{}", pick.output());
    assert!(pick.stdout.contains(&prefabs[1]), "{}", pick.output());

    let none = project.run(&["search", "t:Prefab ext:wav"]);
    assert_eq!(none.code, 0, "{}", none.output());
    assert!(
        none.stdout
            .contains("[unity-assets:search] no asset matches t:Prefab ext:wav"),
        "{}",
        none.output()
    );
}

#[test]
fn an_unknown_filter_is_refused_with_a_did_you_mean() {
    let project = example("normal");
    let run = project.run(&["search", "tpye:Prefab 바위"]);
    assert_eq!(run.code, 2, "{}", run.output());
    assert!(
        run.stdout.contains("tpye:Prefab") && run.stdout.contains("`tpye:` is not a filter; did you mean `type:`?"),
        "{}",
        run.output()
    );
    let run = project.run(&["search", "prefab:varient"]);
    assert_eq!(run.code, 2, "{}", run.output());
    assert!(
        run.output().contains("did you mean `prefab:variant`?"),
        "{}",
        run.output()
    );
    // Text that only looks like a filter stays words.
    let run = project.run(&["search", "UI: button https://example.com"]);
    assert_eq!(run.code, 0, "{}", run.output());
    let run = project.run(&["search", "ref:Assets/Gone.mat"]);
    assert!(
        run.output()
            .contains("ref: Assets/Gone.mat names no asset of the index"),
        "{}",
        run.output()
    );
}

#[test]
fn search_help_lists_the_filters() {
    let run = Project::configured(BIN, "").run(&["search", "--help"]);
    for filter in [
        "t:TYPE",
        "l:LABEL",
        "dir:FOLDER",
        "path:TEXT",
        "ext:EXT",
        "ref:ASSET",
        "prefab:KIND",
        "missing:scripts",
        "-KEY:VALUE",
    ] {
        assert!(run.stdout.contains(filter), "{filter}: {}", run.output());
    }
}

/// One filter of the property test, and what it means for a row, written
/// out independently of the implementation.
struct Atom {
    written: &'static str,
    holds: fn(&Value) -> bool,
}

fn path(row: &Value) -> &str {
    row["path"].as_str().unwrap()
}

const ATOMS: &[Atom] = &[
    Atom {
        written: "t:Prefab",
        holds: |r| r["type"] == "Prefab",
    },
    Atom {
        written: "t=Material",
        holds: |r| r["type"] == "Material",
    },
    Atom {
        written: "t:Sprite",
        holds: |r| r["type"] == "Sprite",
    },
    Atom {
        written: "l:nature",
        holds: |r| strings(r, "labels").contains(&"nature".into()),
    },
    Atom {
        written: "dir:Prefabs",
        holds: |r| path(r).split('/').rev().skip(1).any(|d| d == "Prefabs"),
    },
    Atom {
        written: "dir:ZombieKit",
        holds: |r| path(r).starts_with("Assets/ZombieKit/"),
    },
    Atom {
        written: "path:Rock",
        holds: |r| path(r).to_lowercase().contains("rock"),
    },
    Atom {
        written: "ext:png",
        holds: |r| path(r).ends_with(".png"),
    },
    Atom {
        written: "prefab:variant",
        holds: |r| r["path"] == PLAYER,
    },
    Atom {
        written: "missing:scripts",
        holds: |r| r["path"] == BOSS,
    },
    Atom {
        written: "ref:Assets/MedievalVillage/Textures/Stone_Wall_Albedo.png",
        holds: |r| strings(r, "dependencies").contains(&"8ee3c7445e27e77dd55f1e8f75419a30".into()),
    },
];

const WORDS: &[&str] = &["", "이끼 낀 바위", "zombie", "ui button", "나무"];
const MODES: &[&str] = &["drill-down", "exhaustive", "rerank"];

/// Whatever the combination, the words and the mode, no candidate
/// violates one of the filters, and `matched` counts exactly the rows
/// passing them all.
#[test]
fn no_result_violates_a_filter() {
    let project = example("normal");
    let rows = rows(&project);
    let config = ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let cases = (
        proptest::collection::vec((0..ATOMS.len(), any::<bool>()), 1..4),
        0..WORDS.len(),
        0..MODES.len(),
    );
    proptest::test_runner::TestRunner::new(config)
        .run(&cases, |(picks, words, mode)| {
            let filters: Vec<String> = picks
                .iter()
                .map(|(i, negated)| format!("{}{}", if *negated { "-" } else { "" }, ATOMS[*i].written))
                .collect();
            let query = format!("{} {}", filters.join(" "), WORDS[words]).trim().to_owned();
            let document = search(&project, &query, &[&format!("search.mode={}", MODES[mode])]);
            for found in paths(&document) {
                let row = row_of(&rows, &found);
                for (i, negated) in &picks {
                    prop_assert!(
                        (ATOMS[*i].holds)(row) != *negated,
                        "{query:?} ({}) returned {found}",
                        MODES[mode]
                    );
                }
            }
            let matching = rows
                .iter()
                .filter(|r| picks.iter().all(|(i, n)| (ATOMS[*i].holds)(r) != *n))
                .count();
            prop_assert_eq!(document["matched"].as_u64(), Some(matching as u64), "{}", query);
            Ok(())
        })
        .unwrap();
}
