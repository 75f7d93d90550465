//! End-to-end runs of the index stages on generated projects: scan → diff →
//! plan → tag (builtin) → check → checkpoint → finalize, called directly.

use std::fs;
use std::path::{Path, PathBuf};

use super::data::embedded;
use super::record::{Depth, PackageRecord};
use super::row::AssetRow;
use super::run::{self, Finalized, Plan};
use super::scan::{self, ScanOptions, ScanResult, WarningKind};
use super::store::{self, index_freshness, TaggedBy};
use super::tagger::{self, TagRequest};
use crate::search::term_index::TermIndex;
use engine::io::Limits;
use test_support::project::copy_tree;

const ZOMBIE: &str = "a1000000000000000000000000000001";
const BUTTON: &str = "b2000000000000000000000000000002";
const THEME: &str = "c3000000000000000000000000000003";
const SCRIPT: &str = "d4000000000000000000000000000004";
const STONE: &str = "e5000000000000000000000000000005";
const CONTROLLER: &str = "f6000000000000000000000000000006";
const TOOL: &str = "07000000000000000000000000000007";
const ROCK_N: &str = "08000000000000000000000000000008";

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn meta(guid: &str, importer: &str) -> String {
    format!("fileFormatVersion: 2\nguid: {guid}\n{importer}")
}

/// A small project with one of each edge case the scan must survive.
fn fixture(root: &Path) {
    write(
        root,
        "Assets/ZombieKit.meta",
        &meta(
            "f0000000000000000000000000000000",
            "folderAsset: yes\nDefaultImporter:\n",
        ),
    );
    write(
        root,
        "Assets/ZombieKit/Prefabs/Zombie_Walker.prefab",
        &format!(
            "%YAML 1.1\n%TAG !u! tag:unity3d.com,2011:\n--- !u!1 &1\nGameObject:\n  m_Name: Zombie_Walker\n\
             --- !u!4 &2\nTransform:\n  m_Father: {{fileID: 0}}\n--- !u!95 &3\nAnimator:\n  \
             m_Controller: {{fileID: 9100000, guid: {CONTROLLER}, type: 2}}\n--- !u!114 &4\nMonoBehaviour:\n  \
             m_Script: {{fileID: 11500000, guid: {SCRIPT}, type: 3}}\n--- !u!23 &5\nMeshRenderer:\n  \
             m_Materials:\n  - {{fileID: 2100000, guid: {STONE}, type: 2}}\n"
        ),
    );
    write(
        root,
        "Assets/ZombieKit/Prefabs/Zombie_Walker.prefab.meta",
        &meta(ZOMBIE, "PrefabImporter:\n  labels:\n  - Undead\n"),
    );
    write(
        root,
        "Assets/ZombieKit/Materials/Stone.mat",
        "%YAML 1.1\n--- !u!21 &2100000\nMaterial:\n  m_Name: Stone\n  m_SavedProperties:\n    m_TexEnvs:\n    \
         - _MainTex:\n        m_Texture: {fileID: 0}\n    m_Floats:\n    - _Glossiness: 0.5\n",
    );
    write(
        root,
        "Assets/ZombieKit/Materials/Stone.mat.meta",
        &meta(STONE, "NativeFormatImporter:\n  mainObjectFileID: 2100000\n"),
    );
    write(
        root,
        "Assets/ZombieKit/Animations/Zombie.controller",
        "%YAML 1.1\n--- !u!91 &9100000\nAnimatorController:\n  m_Name: Zombie\n--- !u!1102 &1\nAnimatorState:\n  \
         m_Name: Walk\n--- !u!1102 &2\nAnimatorState:\n  m_Name: Bite\n",
    );
    write(
        root,
        "Assets/ZombieKit/Animations/Zombie.controller.meta",
        &meta(CONTROLLER, "NativeFormatImporter:\n  mainObjectFileID: 9100000\n"),
    );
    write(root, "Assets/ZombieKit/Textures/Rock_normal.png", "");
    // A BOM and CRLF line ends.
    write(
        root,
        "Assets/ZombieKit/Textures/Rock_normal.png.meta",
        &format!("\u{feff}fileFormatVersion: 2\r\nguid: {ROCK_N}\r\nTextureImporter:\r\n  textureType: 1\r\n"),
    );
    write(root, "Assets/UIKit/UI/Button_9-Slice.png", "");
    write(
        root,
        "Assets/UIKit/UI/Button_9-Slice.png.meta",
        &meta(
            BUTTON,
            "labels: [Menu, Blue]\nTextureImporter:\n  spriteMode: 1\n  textureType: 8\n",
        ),
    );
    write(root, "Assets/AudioKit/Music/Theme_Loop.ogg", "");
    write(
        root,
        "Assets/AudioKit/Music/Theme_Loop.ogg.meta",
        &meta(THEME, "AudioImporter:\n  defaultSettings:\n    loadType: 2\n"),
    );
    // Importer-less meta: still an asset.
    write(root, "Assets/Scripts/ZombieBrain.cs", "class ZombieBrain {}");
    write(root, "Assets/Scripts/ZombieBrain.cs.meta", &meta(SCRIPT, ""));
    write(root, "Packages/com.acme.tools/Runtime/Tool.cs", "");
    write(
        root,
        "Packages/com.acme.tools/Runtime/Tool.cs.meta",
        &meta(TOOL, "MonoImporter:\n"),
    );
    write(root, "Packages/manifest.json", "{}");
    // Edge cases reported, never indexed.
    write(
        root,
        "Assets/Orphan.png.meta",
        &meta("90000000000000000000000000000009", "TextureImporter:\n"),
    );
    write(root, "Assets/NoMeta.png", "");
    write(root, "Assets/Bad.txt", "");
    write(root, "Assets/Bad.txt.meta", "fileFormatVersion: 2\nguid: not-a-guid\n");
    write(root, "Assets/ZombieKit/Copy/Zombie_Walker.prefab", "");
    write(
        root,
        "Assets/ZombieKit/Copy/Zombie_Walker.prefab.meta",
        &meta(ZOMBIE, "PrefabImporter:\n"),
    );
    // Skipped entirely: dot-folders, `~` folders, ignore_paths.
    write(root, "Assets/.hidden/Dup.png", "");
    write(root, "Assets/.hidden/Dup.png.meta", &meta(BUTTON, ""));
    write(root, "Assets/Samples~/S.png", "");
    write(root, "Assets/Plugins/Editor/Gizmo.cs", "");
    write(
        root,
        "Assets/Plugins/Editor/Gizmo.cs.meta",
        &meta("0a00000000000000000000000000000a", "MonoImporter:\n"),
    );
    write(
        root,
        ".claude/unity-assets.labels.yml",
        "- glob: \"Assets/ZombieKit/**\"\n  labels: [Zombie, enemy]\n",
    );
}

fn options(depth: Depth) -> ScanOptions {
    ScanOptions {
        index_depth: depth,
        ignore_paths: vec!["Assets/Plugins/Editor".into()],
    }
}

fn scan(project: &Path, depth: Depth) -> ScanResult {
    scan::scan(project, &Limits::default(), &embedded(), &options(depth)).unwrap()
}

/// Tag one planned batch with the builtin and checkpoint it.
fn tag_and_checkpoint(project: &Path, batch: &run::Batch, depth: Depth) {
    let tags = tagger::tag_batch(&TagRequest {
        assets: batch.assets.clone(),
        index_depth: depth,
    });
    let check = run::check_tags(batch, Some(&tags), depth);
    assert!(
        check.retry.is_empty(),
        "builtin rows are always usable: {:?}",
        check.problems
    );
    run::checkpoint(project, &Limits::default(), batch, &[&tags], TaggedBy::Builtin, depth).unwrap();
}

/// The scan as the finalize stage receives it: through its JSON output.
fn as_text(scan: &ScanResult) -> run::ScanText {
    serde_json::from_value(scan.clone().into_value().unwrap()).unwrap()
}

/// The no-op fast path's verdict (`index.unchanged` as the product registers it).
fn unchanged(project: &Path, depth: Depth, force: bool) -> bool {
    let data = embedded();
    let check = run::unchanged(
        project,
        &Limits::default(),
        &data,
        &options(depth),
        force,
        TermIndex::lines_not_rows,
    );
    check.unwrap().same
}

fn index(project: &Path, depth: Depth, force: bool) -> Finalized {
    let scan = scan(project, depth);
    let diff = run::diff(project, &Limits::default(), &scan, force).unwrap();
    let plan: Plan = run::plan_batches(project, &Limits::default(), &scan, &diff, 3).unwrap();
    for batch in &plan.batches {
        tag_and_checkpoint(project, batch, depth);
    }
    let finalized = run::finalize(project, &Limits::default(), &as_text(&scan), &diff).unwrap();
    // The pipeline's last step: the no-op fast path trusts only rows it indexed.
    let version = Some(finalized.manifest_version.as_str());
    TermIndex::refresh(&store::index_dir(project), version, &Limits::default()).unwrap();
    finalized
}

fn index_file(project: &Path, name: &str) -> PathBuf {
    store::index_dir(project).join(name)
}

fn rows(project: &Path) -> Vec<AssetRow> {
    fs::read_to_string(index_file(project, store::ASSETS_FILE))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn scan_pairs_classifies_and_reports_edge_cases() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let result = scan(dir.path(), Depth::Minimal);
    let paths: Vec<&str> = result.assets.iter().map(|a| a.row.path.as_str()).collect();
    assert_eq!(paths.len(), 8, "{paths:?}");
    assert!(!paths
        .iter()
        .any(|p| p.contains(".hidden") || p.contains("Samples~") || p.contains("Plugins/Editor")));
    let kinds: Vec<(WarningKind, &str)> = result.warnings.iter().map(|w| (w.kind, w.path.as_str())).collect();
    assert_eq!(
        kinds,
        [
            (WarningKind::OrphanMeta, "Assets/Orphan.png.meta"),
            (WarningKind::MissingMeta, "Assets/NoMeta.png"),
            // The copy comes first in path order, so it keeps the guid.
            (
                WarningKind::DuplicateGuid,
                "Assets/ZombieKit/Prefabs/Zombie_Walker.prefab"
            ),
            (WarningKind::BadMeta, "Assets/Bad.txt.meta"),
        ]
    );
    let by_guid = |g: &str| &result.assets.iter().find(|a| a.row.guid == g).unwrap().row;
    assert_eq!(by_guid(ZOMBIE).path, "Assets/ZombieKit/Copy/Zombie_Walker.prefab");
    let button = by_guid(BUTTON);
    assert_eq!(
        (button.asset_type.as_str(), button.type_subtype.as_deref()),
        ("Sprite", Some("Sprite/ui"))
    );
    assert_eq!(button.filename_signals, ["nine-slice"]);
    assert_eq!(button.labels, ["Menu", "Blue"]);
    assert_eq!(by_guid(THEME).type_subtype.as_deref(), Some("AudioClip/music"));
    assert_eq!(by_guid(ROCK_N).type_subtype.as_deref(), Some("Texture/normal-map"));
    assert_eq!(by_guid(ROCK_N).labels, ["Zombie", "enemy"]);
    assert_eq!(by_guid(SCRIPT).asset_type, "MonoScript");
    assert_eq!(by_guid(STONE).asset_type, "Material");
    let packages: Vec<(&str, &str)> = result
        .packages
        .iter()
        .map(|p| (p.package_id.as_str(), p.root.as_str()))
        .collect();
    assert_eq!(
        packages,
        [
            ("project", "Assets"),
            ("audio-kit", "Assets/AudioKit"),
            ("ui-kit", "Assets/UIKit"),
            ("zombie-kit", "Assets/ZombieKit"),
            ("com-acme-tools", "Packages/com.acme.tools"),
        ]
    );
}

#[test]
fn full_run_writes_sorted_rows_and_reindex_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    fixture(project);
    let first = index(project, Depth::Minimal, false);
    assert_eq!(
        (first.assets, first.changed, first.tagged_builtin, first.warnings),
        (8, 8, 8, 4)
    );
    assert_eq!(first.manifest_version, "v1.0");
    let records = rows(project);
    let guids: Vec<&str> = records.iter().map(|r| r.guid.as_str()).collect();
    let mut sorted = guids.clone();
    sorted.sort();
    assert_eq!(guids, sorted);
    assert!(records
        .iter()
        .all(|r| r.size.is_none() && !r.llm_tags.is_empty() && r.llm_summary.ends_with('.')));
    // Curated and meta labels never repeat as tags.
    let rock = records.iter().find(|r| r.guid == ROCK_N).unwrap();
    assert!(
        !rock.llm_tags.iter().any(|t| t == "zombie" || t == "enemy"),
        "{:?}",
        rock.llm_tags
    );
    assert!(index_freshness(project, &Limits::default()).is_fresh());
    assert!(!index_file(project, store::PARTIAL_FILE).exists());

    let assets_before = fs::read(index_file(project, store::ASSETS_FILE)).unwrap();
    let packages_before = fs::read(index_file(project, store::PACKAGES_FILE)).unwrap();
    let again = index(project, Depth::Minimal, true);
    assert_eq!(again.changed, 8);
    assert!(!again.assets_rewritten);
    assert_eq!(again.manifest_version, "v1.0");
    assert_eq!(
        fs::read(index_file(project, store::ASSETS_FILE)).unwrap(),
        assets_before
    );
    assert_eq!(
        fs::read(index_file(project, store::PACKAGES_FILE)).unwrap(),
        packages_before
    );
    assert!(index_freshness(project, &Limits::default()).is_fresh());

    let packages: Vec<PackageRecord> = fs::read_to_string(index_file(project, store::PACKAGES_FILE))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let zombie = packages.iter().find(|p| p.package_id == "zombie-kit").unwrap();
    assert_eq!(zombie.asset_count, 4);
    assert!(
        zombie.summary.starts_with("ZombieKit: 4 assets, mostly"),
        "{}",
        zombie.summary
    );
}

#[test]
fn same_project_in_two_places_gives_the_same_bytes() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    fixture(a.path());
    fixture(b.path());
    index(a.path(), Depth::Rich, false);
    index(b.path(), Depth::Rich, false);
    // Rich rows carry mtimes; align them by comparing everything else.
    let strip = |p: &Path| -> Vec<AssetRow> {
        rows(p)
            .into_iter()
            .map(|r| AssetRow {
                last_modified: None,
                ..r
            })
            .collect()
    };
    assert_eq!(strip(a.path()), strip(b.path()));
}

#[test]
fn incremental_runs_retag_only_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    fixture(project);
    index(project, Depth::Minimal, false);
    let bytes = fs::read(index_file(project, store::ASSETS_FILE)).unwrap();
    let last_run = store::read_state(project, &Limits::default()).unwrap().last_run;

    std::thread::sleep(std::time::Duration::from_millis(20));
    let noop = index(project, Depth::Minimal, false);
    assert_eq!(
        (noop.changed, noop.removed, noop.unchanged, noop.tagged_builtin),
        (0, 0, 8, 0)
    );
    assert!(!noop.assets_rewritten);
    assert_eq!(fs::read(index_file(project, store::ASSETS_FILE)).unwrap(), bytes);
    assert_ne!(
        store::read_state(project, &Limits::default()).unwrap().last_run,
        last_run,
        "last_run moves on a no-op run"
    );
    assert!(index_freshness(project, &Limits::default()).is_fresh());

    std::thread::sleep(std::time::Duration::from_millis(20));
    write(project, "Assets/AudioKit/Music/Theme_Loop.ogg", "new audio bytes");
    fs::remove_file(project.join("Assets/Scripts/ZombieBrain.cs")).unwrap();
    fs::remove_file(project.join("Assets/Scripts/ZombieBrain.cs.meta")).unwrap();
    let changed = index(project, Depth::Minimal, false);
    assert_eq!((changed.changed, changed.removed, changed.unchanged), (1, 1, 6));
    assert_eq!(changed.manifest_version, "v1.1");
    assert!(!rows(project).iter().any(|r| r.guid == SCRIPT));

    let rich = index(project, Depth::Rich, false);
    assert_eq!((rich.changed, rich.manifest_version.as_str()), (7, "v2.0"));
}

#[test]
fn the_no_op_fast_path_sees_every_change_a_scan_would() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    fixture(project);
    let same = |depth: Depth, force: bool| unchanged(project, depth, force);
    assert!(!same(Depth::Minimal, false), "no index yet");
    let full = index(project, Depth::Minimal, false);
    let bytes = fs::read(index_file(project, store::ASSETS_FILE)).unwrap();
    assert!(same(Depth::Minimal, false));
    assert!(!same(Depth::Minimal, true), "reindex always scans");
    assert!(!same(Depth::Rich, false), "another depth is another scan");

    std::thread::sleep(std::time::Duration::from_millis(20));
    let touched = run::touch(project, &Limits::default(), &full.last_run, None).unwrap();
    assert_eq!(
        (
            touched.assets,
            touched.packages,
            touched.warnings,
            touched.unchanged,
            touched.changed
        ),
        (full.assets, full.packages, full.warnings, full.assets, 0)
    );
    assert_eq!(touched.manifest_version, full.manifest_version);
    assert_ne!(touched.last_run, full.last_run, "last_run moves");
    assert_eq!(fs::read(index_file(project, store::ASSETS_FILE)).unwrap(), bytes);
    assert!(index_freshness(project, &Limits::default()).is_fresh());
    assert!(same(Depth::Minimal, false), "a touched index stays on the fast path");

    let changes: [&dyn Fn(); 4] = [
        &|| write(project, "Assets/AudioKit/Music/Theme_Loop.ogg", "other audio bytes"),
        &|| {
            write(
                project,
                ".claude/unity-assets.labels.yml",
                "- glob: \"Assets/**\"\n  labels: [Any]\n",
            )
        },
        &|| fs::remove_file(project.join("Assets/Scripts/ZombieBrain.cs")).unwrap(),
        &|| write(project, "Assets/New.png", "png"),
    ];
    for (n, change) in changes.iter().enumerate() {
        change();
        assert!(!same(Depth::Minimal, false), "change {n} unseen");
        index(project, Depth::Minimal, false);
        assert!(same(Depth::Minimal, false), "after change {n} and a run");
    }

    let scan = scan(project, Depth::Minimal);
    let diff = run::diff(project, &Limits::default(), &scan, true).unwrap();
    run::plan_batches(project, &Limits::default(), &scan, &diff, 3).unwrap();
    assert!(!same(Depth::Minimal, false), "a run in progress must finish first");
}

#[cfg(unix)]
#[test]
fn a_linked_asset_is_signed_by_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("Game");
    fixture(&project);
    let target = dir.path().join("shared/Rock.png");
    write(dir.path(), "shared/Rock.png", "png");
    std::os::unix::fs::symlink(&target, project.join("Assets/Rock.png")).unwrap();
    write(
        &project,
        "Assets/Rock.png.meta",
        &meta("a7000000000000000000000000000007", "TextureImporter:\n"),
    );
    index(&project, Depth::Minimal, false);
    assert!(unchanged(&project, Depth::Minimal, false));
    fs::write(&target, "a longer png").unwrap();
    assert!(!unchanged(&project, Depth::Minimal, false));
    assert_eq!(index(&project, Depth::Minimal, false).changed, 1);
}

#[test]
fn label_changes_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    fixture(project);
    index(project, Depth::Minimal, false);
    write(
        project,
        ".claude/unity-assets.labels.yml",
        "- glob: \"Assets/UIKit/**\"\n  labels: [Menu]\n",
    );
    let result = index(project, Depth::Minimal, false);
    let changed: Vec<&str> = result.label_changes.iter().map(|c| c.path.as_str()).collect();
    assert!(
        changed.contains(&"Assets/ZombieKit/Textures/Rock_normal.png"),
        "{changed:?}"
    );
    assert!(
        !changed.contains(&"Assets/UIKit/UI/Button_9-Slice.png"),
        "Menu was already a .meta label"
    );
    assert_eq!(result.changed, 0, "labels do not need re-tagging");
}

#[test]
fn rich_rows_hold_dependencies_components_properties_and_states() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    fixture(project);
    fs::remove_dir_all(project.join("Assets/ZombieKit/Copy")).unwrap();
    index(project, Depth::Rich, false);
    let records = rows(project);
    let row = |g: &str| records.iter().find(|r| r.guid == g).unwrap().clone();
    let zombie = row(ZOMBIE);
    let mut deps = vec![CONTROLLER.to_owned(), SCRIPT.to_owned(), STONE.to_owned()];
    deps.sort();
    assert_eq!(zombie.dependencies, Some(deps));
    assert_eq!(zombie.package_id.as_deref(), Some("zombie-kit"));
    assert_eq!(
        zombie.component_types.clone().unwrap(),
        ["Animator", "MeshRenderer", "Transform", "ZombieBrain"],
        "the MonoBehaviour shows as its script's name"
    );
    assert!(zombie
        .llm_use_cases
        .is_some_and(|u| u.contains(&"character".to_owned())));
    assert_eq!(row(STONE).shader_props.unwrap(), ["_Glossiness", "_MainTex"]);
    assert_eq!(row(CONTROLLER).animator_states.unwrap(), ["Bite", "Walk"]);
    assert_eq!(row(THEME).dependencies, Some(vec![]));
    assert!(row(THEME).component_types.is_none());

    // Normal depth (the default) has every content fact but the properties.
    index(project, Depth::Normal, false);
    let records = rows(project);
    let row = |g: &str| records.iter().find(|r| r.guid == g).unwrap().clone();
    assert_eq!(row(ZOMBIE).component_types, zombie.component_types);
    assert_eq!(row(CONTROLLER).animator_states.unwrap(), ["Bite", "Walk"]);
    assert!(row(STONE).shader_props.is_none());
}

/// A project to interrupt and a copy of it indexed in one go, to compare with.
fn crashed_and_clean() -> (tempfile::TempDir, tempfile::TempDir) {
    let (crashed, clean) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    fixture(crashed.path());
    fixture(clean.path());
    index(clean.path(), Depth::Minimal, false);
    (crashed, clean)
}

/// Scan, diff and plan batches of 3, as one run of the pipeline starts.
fn start(project: &Path) -> (ScanResult, run::Diff, run::Plan) {
    let scan = scan(project, Depth::Minimal);
    let diff = run::diff(project, &Limits::default(), &scan, false).unwrap();
    let plan = run::plan_batches(project, &Limits::default(), &scan, &diff, 3).unwrap();
    (scan, diff, plan)
}

#[test]
fn an_interrupted_run_resumes_and_ends_like_an_uninterrupted_one() {
    let (crashed, clean) = crashed_and_clean();
    let project = crashed.path();
    let (_, _, plan1) = start(project);
    assert_eq!(plan1.batches.len(), 3);
    tag_and_checkpoint(project, &plan1.batches[0], Depth::Minimal);
    // The process dies here: no finalize.
    let state = store::read_state(project, &Limits::default()).unwrap();
    assert_eq!(state.in_progress_run.as_deref(), Some(plan1.run_id.as_str()));
    assert_eq!(state.completed_batches, ["batch-00001"]);

    let (scan2, diff2, plan2) = start(project);
    assert_eq!(
        (plan2.run_id.as_str(), plan2.resumed, plan2.batches.len()),
        (plan1.run_id.as_str(), 3, 2)
    );
    assert_eq!(plan2.batches[0].id, "batch-00002");
    for batch in &plan2.batches {
        tag_and_checkpoint(project, batch, Depth::Minimal);
    }
    let result = run::finalize(project, &Limits::default(), &as_text(&scan2), &diff2).unwrap();
    assert_eq!(result.tagged_builtin, 8);
    assert_eq!(
        fs::read(index_file(project, store::ASSETS_FILE)).unwrap(),
        fs::read(index_file(clean.path(), store::ASSETS_FILE)).unwrap()
    );
    assert_eq!(
        store::read_state(project, &Limits::default()).unwrap().in_progress_run,
        None
    );
}

/// A kill between a batch's append to the partial and its record in
/// `state.json` (which is written at most once a second): the resume trusts
/// the appended rows, neither asking for them again nor keeping them twice.
#[test]
fn rows_appended_but_not_recorded_are_resumed_once() {
    let (crashed, clean) = crashed_and_clean();
    let project = crashed.path();
    let (_, _, plan1) = start(project);
    let planned = store::read_state(project, &Limits::default()).unwrap();
    tag_and_checkpoint(project, &plan1.batches[0], Depth::Minimal);
    tag_and_checkpoint(project, &plan1.batches[1], Depth::Minimal);
    // The process dies before either batch is recorded.
    store::write_state(project, &planned).unwrap();

    let (scan2, diff2, plan2) = start(project);
    let last: Vec<String> = plan1.batches[2].assets.iter().map(|a| a.guid.clone()).collect();
    let resumed: Vec<String> = plan2
        .batches
        .iter()
        .flat_map(|b| &b.assets)
        .map(|a| a.guid.clone())
        .collect();
    assert_eq!(
        (plan2.resumed, resumed),
        (6, last),
        "only the unfinished batch is tagged"
    );
    for batch in &plan2.batches {
        tag_and_checkpoint(project, batch, Depth::Minimal);
    }
    let mut guids: Vec<String> = store::read_partial(project, &Limits::default())
        .into_iter()
        .map(|row| row.tags.guid)
        .collect();
    guids.sort_unstable();
    let mut scanned: Vec<String> = scan2.assets.iter().map(|a| a.row.guid.clone()).collect();
    scanned.sort_unstable();
    assert_eq!(guids, scanned, "one partial row per asset");

    let result = run::finalize(project, &Limits::default(), &as_text(&scan2), &diff2).unwrap();
    assert_eq!(result.tagged_builtin, 8);
    assert_eq!(
        fs::read(index_file(project, store::ASSETS_FILE)).unwrap(),
        fs::read(index_file(clean.path(), store::ASSETS_FILE)).unwrap()
    );
}

#[test]
fn a_partial_without_a_run_in_progress_is_discarded() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    fixture(project);
    index(project, Depth::Minimal, false);
    let stale_row = format!(
        "{{\"batch\":\"batch-00001\",\"signature\":\"x\",\"tagged_by\":\"llm\",\"guid\":\"{THEME}\",\
         \"llm_tags\":[\"stale\"],\"llm_summary\":\"Stale.\"}}\n"
    );
    write(
        project,
        &format!("{}/{}", store::INDEX_DIR, store::PARTIAL_FILE),
        &stale_row,
    );
    let result = index(project, Depth::Minimal, true);
    assert_eq!(result.tagged_llm, 0);
    assert!(!rows(project).iter().any(|r| r.llm_tags.contains(&"stale".to_owned())));
}

#[test]
fn model_rows_are_kept_and_bad_ones_fall_back_to_the_builtin() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    fixture(project);
    let scan = scan(project, Depth::Minimal);
    let diff = run::diff(project, &Limits::default(), &scan, false).unwrap();
    let plan = run::plan_batches(project, &Limits::default(), &scan, &diff, 100).unwrap();
    let batch = &plan.batches[0];
    let model = |guid: &str, tag: &str| super::record::TagRow {
        guid: guid.to_owned(),
        llm_tags: vec![tag.to_owned()],
        llm_summary: "A thing.".to_owned(),
        llm_use_cases: None,
    };
    let first = tagger::TagBatch {
        rows: vec![
            model(&batch.assets[0].guid, "good-tag"),
            model(&batch.assets[1].guid, "Bad Tag"),
        ],
    };
    let check = run::check_tags(batch, Some(&first), Depth::Minimal);
    assert_eq!(check.retry.len(), batch.assets.len() - 1);
    let retry = tagger::TagBatch {
        rows: vec![model(&batch.assets[1].guid, "fixed")],
    };
    let done = run::checkpoint(
        project,
        &Limits::default(),
        batch,
        &[&first, &retry],
        TaggedBy::Llm,
        Depth::Minimal,
    )
    .unwrap();
    assert_eq!((done.llm, done.builtin), (2, batch.assets.len() - 2));
    let result = run::finalize(project, &Limits::default(), &as_text(&scan), &diff).unwrap();
    assert_eq!((result.tagged_llm, result.tagged_builtin), (2, 6));
    let records = rows(project);
    assert_eq!(
        records
            .iter()
            .find(|r| r.guid == batch.assets[1].guid)
            .unwrap()
            .llm_tags,
        ["fixed"]
    );
}

/// The real corpora, when `../shared/corpora` is there: every archive indexes
/// without a crash and reindexes byte-identically.
#[test]
fn shared_corpora_index_cleanly_when_present() {
    let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora");
    for name in ["fpssample", "danmokou", "bossroom"] {
        let archive = corpora.join(format!("{name}.tar.gz"));
        if !archive.is_file() {
            eprintln!("skipping {name}: {} not found", archive.display());
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let status = std::process::Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(dir.path())
            .status();
        if !status.is_ok_and(|s| s.success()) {
            eprintln!("skipping {name}: tar could not unpack it");
            continue;
        }
        let project = fs::read_dir(dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.join("Assets").is_dir());
        let project = project.unwrap_or_else(|| dir.path().to_path_buf());
        let first = index(&project, Depth::Rich, false);
        assert!(first.assets > 1000, "{name}: {}", first.summary);
        let bytes = fs::read(index_file(&project, store::ASSETS_FILE)).unwrap();
        let again = index(&project, Depth::Rich, true);
        assert!(!again.assets_rewritten, "{name}: reindex changed assets.jsonl");
        assert_eq!(fs::read(index_file(&project, store::ASSETS_FILE)).unwrap(), bytes);
        if name == "danmokou" {
            let warnings = scan(&project, Depth::Minimal).warnings;
            assert!(
                !warnings
                    .iter()
                    .any(|w| w.path.contains(".base-png") || w.detail.contains(".base-png")),
                "the .base-png dot-folder (and its duplicate guid) is skipped"
            );
        }
    }
}

/// Every file the indexer writes satisfies its schema under `schemas/`, at every depth.
#[test]
fn written_files_satisfy_their_schemas() {
    let schema = |text: &str| jsonschema::validator_for(&serde_json::from_str(text).unwrap()).unwrap();
    let asset = schema(include_str!("../../schemas/asset-record.schema.json"));
    let package = schema(include_str!("../../schemas/package-record.schema.json"));
    let manifest = schema(include_str!("../../schemas/manifest.schema.json"));
    let state = schema(include_str!("../../schemas/state.schema.json"));
    let tags = schema(include_str!("../../schemas/index-tags.schema.json"));
    let check = |validator: &jsonschema::Validator, value: &serde_json::Value, what: &str| {
        let errors: Vec<String> = validator.iter_errors(value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{what}: {errors:?}\n{value}");
    };
    for depth in [Depth::Minimal, Depth::Normal, Depth::Rich] {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        fixture(project);
        index(project, depth, false);
        let read = |name: &str| fs::read_to_string(index_file(project, name)).unwrap();
        for line in read(store::ASSETS_FILE).lines() {
            check(&asset, &serde_json::from_str(line).unwrap(), "asset row");
        }
        for line in read(store::PACKAGES_FILE).lines() {
            check(&package, &serde_json::from_str(line).unwrap(), "package row");
        }
        check(
            &manifest,
            &serde_json::from_str(&read(store::MANIFEST_FILE)).unwrap(),
            "manifest",
        );
        check(
            &state,
            &serde_json::from_str(&read(store::STATE_FILE)).unwrap(),
            "state",
        );
        let scan = scan(project, depth);
        let plan = run::plan_batches(
            project,
            &Limits::default(),
            &scan,
            &run::diff(project, &Limits::default(), &scan, true).unwrap(),
            50,
        )
        .unwrap();
        let builtin = tagger::tag_batch(&TagRequest {
            assets: plan.batches[0].assets.clone(),
            index_depth: depth,
        });
        check(&tags, &serde_json::to_value(&builtin).unwrap(), "builtin tags");
    }
}

/// The example project the README starts with indexes cleanly and richly.
#[test]
fn the_example_project_indexes_without_warnings() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/zombie-survival"),
        dir.path(),
    );
    let result = index(dir.path(), Depth::Rich, false);
    assert_eq!(result.warnings, 0, "{}", result.summary);
    assert!(result.assets >= 60, "{}", result.summary);
    let records = rows(dir.path());
    let by_path = |p: &str| {
        records
            .iter()
            .find(|r| r.path == p)
            .unwrap_or_else(|| panic!("{p} not indexed"))
    };
    let walker = by_path("Assets/ZombieKit/Prefabs/Characters/Zombie_Walker.prefab");
    assert_eq!(walker.type_subtype.as_deref(), Some("Prefab/character"));
    assert_eq!(
        walker.labels,
        ["zombie", "enemy"],
        "curated first; the .meta's `Enemy` is the same label"
    );
    assert!(walker
        .component_types
        .as_ref()
        .unwrap()
        .contains(&"ZombieAI".to_owned()));
    assert_eq!(
        by_path("Assets/AudioKit/Music/전투_BGM_Loop.ogg")
            .type_subtype
            .as_deref(),
        Some("AudioClip/music")
    );
    assert_eq!(by_path("Assets/UIKit/Icons/체력_Icon.png").asset_type, "Sprite");
    assert_eq!(
        by_path("Assets/ZombieKit/Prefabs/좀비_보스.prefab")
            .type_subtype
            .as_deref(),
        Some("Prefab/character")
    );
    assert_eq!(
        by_path("Assets/UIKit/Sprites/Icons_Spritesheet.png")
            .type_subtype
            .as_deref(),
        Some("Sprite/spritesheet")
    );
    if std::env::var_os("SHOW_EXAMPLE_INDEX").is_some() {
        println!(
            "{}\n{}",
            result.summary,
            fs::read_to_string(index_file(dir.path(), store::PACKAGES_FILE)).unwrap()
        );
        for r in &records {
            println!(
                "{} | {} | {:?} | {:?} | {}",
                r.path, r.asset_type, r.type_subtype, r.llm_tags, r.llm_summary
            );
        }
    }
}

/// `graph.json` as finalize writes it, node by node beside each row, is
/// the file a reader rebuilds from `assets.jsonl` alone.
#[test]
fn the_graph_written_with_the_rows_is_the_one_rebuilt_from_them() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    fixture(project);
    // The copy keeps the zombie's guid; the original holds the references.
    fs::remove_dir_all(project.join("Assets/ZombieKit/Copy")).unwrap();
    index(project, Depth::Normal, false);
    let path = index_file(project, super::graph::GRAPH_FILE);
    let written = fs::read(&path).unwrap();
    assert!(
        String::from_utf8_lossy(&written).contains("\"uses\""),
        "no reference in the fixture"
    );
    fs::remove_file(&path).unwrap();
    let loaded = super::graph::load(project, &Limits::default()).unwrap().unwrap();
    assert!(loaded.rebuilt.is_some());
    assert_eq!(fs::read(&path).unwrap(), written);
}
