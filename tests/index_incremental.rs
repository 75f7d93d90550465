//! An incremental `index` after edits ends with the same files as a full
//! `reindex` of the same tree, on a generated realistic project (nested
//! folders, packages, Korean names, Unity YAML referencing other assets):
//! whatever the no-op check, the diff and the merge skip, they skip nothing
//! a full run would write.

use std::fs;
use std::path::{Path, PathBuf};

use test_support::cli::{self, Run};
use test_support::large_project;

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");
const INDEX: &str = ".claude/unity-asset-index";

fn index(project: &Path, command: &str) -> Run {
    let run = Run::of(cli::command(Path::new(BIN), project).args(["-q", command]));
    assert_eq!(run.code, 0, "{command}: {}", run.output());
    run
}

/// `assets.jsonl` and `packages.jsonl` as written.
fn index_files(project: &Path) -> (String, String) {
    let read = |name: &str| fs::read_to_string(project.join(INDEX).join(name)).unwrap();
    (read("assets.jsonl"), read("packages.jsonl"))
}

/// Every asset file (not `.meta`) under `dir`, sorted.
fn asset_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            found.extend(asset_files(&path));
        } else if path.extension().is_some_and(|e| e != "meta") && path.with_extension(meta_ext(&path)).is_file() {
            found.push(path);
        }
    }
    found.sort();
    found
}

fn meta_ext(path: &Path) -> String {
    format!("{}.meta", path.extension().unwrap().to_string_lossy())
}

#[test]
fn an_incremental_index_after_edits_equals_a_full_reindex() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let (words, _) = large_project::vocabulary(Path::new("no-corpora-here"));
    let generated = large_project::generate(project, 1_500, &words, 7).unwrap();
    assert!(generated.korean_names > 0 && generated.yaml_files > 0, "{generated:?}");
    fs::create_dir_all(project.join(".claude")).unwrap();
    fs::write(project.join(".claude/unity-assets.yml"), "index_depth: normal\n").unwrap();
    index(project, "index");

    // Edits of every kind a day brings: content changed (a prefab now
    // references another asset), assets deleted, assets added, a meta's labels.
    let assets = asset_files(&project.join("Assets"));
    let prefabs: Vec<&PathBuf> = assets.iter().filter(|p| p.extension().unwrap() == "prefab").collect();
    let referenced = fs::read_to_string(prefabs[1].with_extension("prefab.meta")).unwrap();
    let referenced_guid = referenced.lines().find_map(|l| l.strip_prefix("guid: ")).unwrap();
    let mut edited = fs::read_to_string(prefabs[0]).unwrap();
    edited.push_str(&format!(
        "--- !u!1001 &9\nPrefabInstance:\n  m_SourcePrefab: {{fileID: 100100000, guid: {referenced_guid}, type: 3}}\n"
    ));
    fs::write(prefabs[0], edited).unwrap();
    let added = project.join("Assets/Art/Props/Prefabs/새_상자.prefab");
    fs::create_dir_all(added.parent().unwrap()).unwrap();
    fs::write(&added, fs::read_to_string(prefabs[2]).unwrap()).unwrap();
    fs::write(
        added.with_extension("prefab.meta"),
        "fileFormatVersion: 2\nguid: 0123456789abcdef0123456789abcdef\nlabels:\n- Crate\nPrefabImporter:\n  externalObjects: {}\n",
    )
    .unwrap();
    let relabelled = assets.iter().find(|p| p.extension().unwrap() == "png").unwrap();
    let meta = relabelled.with_extension(meta_ext(relabelled));
    let text = fs::read_to_string(&meta).unwrap();
    fs::write(&meta, text.replacen("\n", "\nlabels:\n- Relabelled\n", 1)).unwrap();
    let kept = [prefabs[0], prefabs[1], prefabs[2], relabelled];
    let gone: Vec<&PathBuf> = assets.iter().step_by(97).filter(|p| !kept.contains(p)).collect();
    for path in &gone {
        fs::remove_file(path).unwrap();
        fs::remove_file(path.with_extension(meta_ext(path))).unwrap();
    }

    let summary = index(project, "index").stdout;
    assert!(
        summary.contains("changed 3,") && summary.contains(&format!("removed {},", gone.len())),
        "{summary}"
    );
    let incremental = index_files(project);
    assert!(incremental.0.contains("새_상자") && incremental.0.contains(referenced_guid));
    // The search index was updated from the rows that changed; the full
    // build below starts from nothing.
    let search_index = project.join(INDEX).join("search-index.bin");
    let updated = fs::read(&search_index).unwrap();
    fs::remove_file(&search_index).unwrap();

    index(project, "reindex");
    let full = index_files(project);
    assert!(
        fs::read(&search_index).unwrap() == updated,
        "search-index.bin differs from a build from nothing"
    );
    assert!(incremental.0 == full.0, "assets.jsonl differs after an incremental run");
    assert!(
        incremental.1 == full.1,
        "packages.jsonl differs after an incremental run"
    );
}

/// An index written before `signatures.tsv` existed (the signatures inside
/// `state.json`) is read as it is: a run that finds nothing changed and one
/// that finds one asset changed both keep every other asset, and the
/// signatures move to their own file. A `signatures.tsv` of another format
/// re-tags every asset rather than missing a change.
#[test]
fn signatures_of_an_older_state_are_read_and_moved_to_their_own_file() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let (words, _) = large_project::vocabulary(Path::new("no-corpora-here"));
    large_project::generate(project, 300, &words, 11).unwrap();
    index(project, "index");
    let index_dir = project.join(INDEX);
    let rows = || index_files(project).0.lines().count();
    let state_path = index_dir.join("state.json");
    let signatures_path = index_dir.join("signatures.tsv");
    let to_older_format = || {
        let text = fs::read_to_string(&signatures_path).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("# unity-assets signatures 1"));
        let signatures: serde_json::Map<String, serde_json::Value> = lines
            .map(|l| l.split_once('\t').unwrap())
            .map(|(guid, signature)| (guid.to_owned(), signature.into()))
            .collect();
        assert_eq!(signatures.len(), rows());
        let mut state: serde_json::Value = serde_json::from_str(&fs::read_to_string(&state_path).unwrap()).unwrap();
        state["guid_signatures"] = signatures.into();
        fs::write(&state_path, serde_json::to_string_pretty(&state).unwrap()).unwrap();
        fs::remove_file(&signatures_path).unwrap();
    };
    let moved = || {
        let state = fs::read_to_string(&state_path).unwrap();
        assert!(!state.contains("guid_signatures"), "{state}");
        assert!(fs::read_to_string(&signatures_path).unwrap().lines().count() == rows() + 1);
    };

    to_older_format();
    let summary = index(project, "index").stdout;
    assert!(summary.contains("changed 0,"), "{summary}");
    moved();

    to_older_format();
    let assets = asset_files(&project.join("Assets"));
    fs::write(&assets[5], "other bytes").unwrap();
    let summary = index(project, "index").stdout;
    assert!(summary.contains("changed 1,"), "{summary}");
    moved();

    fs::write(&signatures_path, "guid\tsignature\n").unwrap();
    fs::write(&assets[6], "other bytes").unwrap();
    let summary = index(project, "index").stdout;
    assert!(summary.contains(&format!("changed {},", rows())), "{summary}");
}
