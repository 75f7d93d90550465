//! `refs`, `deps` and `unused` end to end: on a generated project with
//! real Unity YAML references (CLI and MCP), and on the real corpora of
//! `../shared/corpora` (skipped when absent), where `refs`/`deps` must agree
//! with a brute-force scan of every YAML file and `unused` must never list
//! what a scene reaches.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use rmcp::model::CallToolRequestParams;
use serde_json::{json, Value};
use test_support::project::Project;

#[path = "support/mcp.rs"]
mod support;

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");
const MISSING: &str = "dddddddddddddddddddddddddddddddd";

fn guid(n: u32) -> String {
    format!("{n:032x}")
}

/// Unity YAML whose objects reference `guids`.
fn yaml(guids: &[String]) -> String {
    let mut text =
        "%YAML 1.1\n%TAG !u! tag:unity3d.com,2011:\n--- !u!1 &100\nGameObject:\n  m_Name: Thing\n".to_owned();
    for (i, g) in guids.iter().enumerate() {
        text.push_str(&format!(
            "--- !u!114 &{}\nMonoBehaviour:\n  m_Script: {{fileID: 11500000, guid: {g}, type: 3}}\n",
            200 + i
        ));
    }
    text
}

/// A small game: a build-settings scene with a rock prefab (its material,
/// texture and script), a disabled scene with a lonely prefab, a Resources
/// prefab, an orphan material, an editor-only icon, a tool folder and two
/// files named alike.
fn game() -> Project {
    let project = Project::configured(BIN, "index_depth: normal\n");
    let add = |rel: &str, n: u32, text: &str| {
        let file = project.path().join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, text).unwrap();
        std::fs::write(
            format!("{}.meta", file.display()),
            format!("fileFormatVersion: 2\nguid: {}\n", guid(n)),
        )
        .unwrap();
    };
    add("Assets/Scripts/Door.cs", 1, "class Door {}\n");
    add("Assets/Textures/Moss.png", 2, "");
    add(
        "Assets/Materials/Rock.mat",
        3,
        &yaml(&[guid(2), "0000000000000000f000000000000000".into()]),
    );
    add("Assets/Prefabs/Rock.prefab", 4, &yaml(&[guid(3), guid(1)]));
    add("Assets/Scenes/Main.unity", 5, &yaml(&[guid(4)]));
    add("Assets/Scenes/Old.unity", 6, &yaml(&[guid(7)]));
    add("Assets/Prefabs/Lonely.prefab", 7, &yaml(&[MISSING.into()]));
    add("Assets/Resources/Loaded.prefab", 8, &yaml(&[guid(9)]));
    add("Assets/Materials/Glow.mat", 9, &yaml(&[]));
    add("Assets/Unused/Orphan.mat", 10, &yaml(&[]));
    add("Assets/Editor/Tool.png", 11, "");
    add("Assets/Tools/Tool.png", 12, "");
    add("Assets/UI/Icon.png", 13, "");
    add("Assets/HUD/Icon.png", 14, "");
    std::fs::create_dir_all(project.path().join("ProjectSettings")).unwrap();
    std::fs::write(
        project.path().join("ProjectSettings/EditorBuildSettings.asset"),
        format!(
            "%YAML 1.1\n--- !u!1045 &1\nEditorBuildSettings:\n  serializedVersion: 2\n  m_Scenes:\n  - enabled: 1\n    path: Assets/Scenes/Main.unity\n    guid: {}\n  - enabled: 0\n    path: Assets/Scenes/Old.unity\n    guid: {}\n  m_configObjects: {{}}\n",
            guid(5),
            guid(6)
        ),
    )
    .unwrap();
    let index = project.run(&["index"]);
    assert_eq!(index.code, 0, "{}", index.stderr);
    project
}

fn json_of(project: &Project, args: &[&str]) -> (i32, Value) {
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let run = project.run(&with_json);
    let document = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", run.stdout, run.stderr));
    (run.code, document)
}

fn paths(document: &Value, field: &str) -> Vec<String> {
    document[field]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["path"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn refs_and_deps_follow_references_to_a_depth_by_path_guid_or_name() {
    let project = game();
    let run = project.run(&["refs", "Assets/Materials/Rock.mat"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "[unity-assets:refs] Assets/Materials/Rock.mat (Material): used by 1 asset (Prefab 1)\n  Assets/Prefabs/Rock.prefab  Prefab\n"
    );
    let (code, two) = json_of(&project, &["refs", &guid(3), "--depth", "2"]);
    assert_eq!(code, 0);
    assert_eq!(
        paths(&two, "assets"),
        ["Assets/Prefabs/Rock.prefab", "Assets/Scenes/Main.unity"]
    );
    assert_eq!(two["assets"][1]["via"], "Assets/Prefabs/Rock.prefab");
    assert_eq!(two["asset"]["path"], "Assets/Materials/Rock.mat");
    let (_, all) = json_of(&project, &["refs", "Moss.png", "--depth", "0"]);
    assert_eq!(
        paths(&all, "assets"),
        [
            "Assets/Materials/Rock.mat",
            "Assets/Prefabs/Rock.prefab",
            "Assets/Scenes/Main.unity"
        ]
    );

    let (code, deps) = json_of(&project, &["deps", "Assets/Prefabs/Rock.prefab"]);
    assert_eq!(code, 0);
    assert_eq!(
        paths(&deps, "assets"),
        ["Assets/Materials/Rock.mat", "Assets/Scripts/Door.cs"]
    );
    let (_, deep) = json_of(&project, &["deps", "Assets/Prefabs/Rock.prefab", "--depth", "2"]);
    assert!(paths(&deep, "assets").contains(&"Assets/Textures/Moss.png".to_owned()));
    let (_, lonely) = json_of(&project, &["deps", "Assets/Prefabs/Lonely.prefab"]);
    assert_eq!(
        lonely["missing"],
        json!([MISSING]),
        "the built-in shader is no missing asset"
    );
    let nothing = project.run(&["refs", "Assets/Unused/Orphan.mat"]);
    assert!(
        nothing.stdout.contains("nothing in the index uses it"),
        "{}",
        nothing.stdout
    );
}

#[test]
fn unknown_outside_ambiguous_and_missing_index_are_refused_with_their_codes() {
    let project = game();
    let (code, unknown) = json_of(&project, &["refs", &guid(99)]);
    assert_eq!((code, unknown["status"].as_str()), (2, Some("unknown_asset")));
    let outside = project.run(&["refs", "../../etc/passwd"]);
    assert_eq!(outside.code, 2, "{}", outside.stdout);
    assert!(outside.stdout.contains("error:"), "{}", outside.stdout);
    let nowhere = project.run(&["deps", "Assets/Nope/None.mat"]);
    assert_eq!(nowhere.code, 2);
    assert!(
        nowhere.stdout.contains("no asset at Assets/Nope/None.mat"),
        "{}",
        nowhere.stdout
    );
    project.add_asset("Assets/Materials/New.mat", 50);
    let (code, new) = json_of(&project, &["refs", "Assets/Materials/New.mat"]);
    assert_eq!((code, new["status"].as_str()), (1, Some("not_indexed")));
    let (code, twins) = json_of(&project, &["refs", "Icon.png"]);
    assert_eq!((code, twins["status"].as_str()), (1, Some("ambiguous")));
    let candidates: BTreeSet<&str> = twins["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        candidates,
        BTreeSet::from(["Assets/HUD/Icon.png", "Assets/UI/Icon.png"])
    );
    // A query is searched; nothing here is about spaceships.
    let (code, query) = json_of(&project, &["refs", "purple spaceship engine"]);
    assert_ne!(code, 0, "{query}");
    assert!(
        matches!(query["status"].as_str(), Some("unknown_asset" | "ambiguous")),
        "{query}"
    );

    let bare = Project::configured(BIN, "index_depth: normal\n");
    std::fs::create_dir_all(bare.path().join("Assets")).unwrap();
    let (code, none) = json_of(&bare, &["refs", "Assets/A.mat"]);
    assert_eq!((code, none["status"].as_str()), (1, Some("no_index")));
    let minimal = Project::configured(BIN, "index_depth: minimal\n");
    minimal.add_asset("Assets/A.mat", 1);
    assert_eq!(minimal.run(&["index"]).code, 0);
    let (code, shallow) = json_of(&minimal, &["unused"]);
    assert_eq!((code, shallow["status"].as_str()), (1, Some("no_references")));
}

#[test]
fn unused_lists_what_no_root_reaches_and_roots_add_more() {
    let project = game();
    let (code, unused) = json_of(&project, &["unused"]);
    assert_eq!(code, 0, "{unused}");
    assert_eq!(
        paths(&unused, "unused"),
        [
            "Assets/HUD/Icon.png",
            "Assets/Prefabs/Lonely.prefab",
            "Assets/Scenes/Old.unity",
            "Assets/Tools/Tool.png",
            "Assets/UI/Icon.png",
            "Assets/Unused/Orphan.mat",
        ],
        "the build scene's prefab, material, texture and the Resources prefab's material are used; \
         scripts and editor folders are not listed"
    );
    assert_eq!(unused["roots"]["scenes"], json!(["Assets/Scenes/Main.unity"]));
    assert_eq!(unused["roots"]["resources"], 1);
    assert_eq!(unused["not_listed"]["editor_only"], 1);
    assert_eq!(
        unused["not_listed"]["code"], 0,
        "the script is reached through the prefab"
    );

    let (_, rooted) = json_of(
        &project,
        &["unused", "--roots", "Assets/Tools", "Assets/Scenes/Old.unity"],
    );
    assert_eq!(
        paths(&rooted, "unused"),
        ["Assets/HUD/Icon.png", "Assets/UI/Icon.png", "Assets/Unused/Orphan.mat"]
    );
    let lines = project.run(&["unused"]);
    assert!(
        lines.stdout.starts_with("[unity-assets:unused] roots: 1 scene of the build settings, 1 asset in Resources/, 0 Addressables entries; "),
        "{}",
        lines.stdout
    );
    assert!(!lines.stdout.contains("warning"), "{}", lines.stdout);
    assert_eq!(project.run(&["unused", "--roots", "../elsewhere"]).code, 2);
    assert_eq!(project.run(&["unused", "--roots", "Assets/Nothing"]).code, 2);

    // The scene it starts from emptied: everything it used shows up, and the answer says why.
    std::fs::write(project.path().join("Assets/Scenes/Main.unity"), "%YAML 1.1\n").unwrap();
    assert_eq!(project.run(&["index"]).code, 0);
    let emptied = project.run(&["unused"]);
    assert!(
        emptied.stdout.contains(
            "[unity-assets:unused] warning: scene Assets/Scenes/Main.unity references no asset (empty, or saved in a form the index cannot read)"
        ),
        "{}",
        emptied.stdout
    );
}

#[test]
fn the_graph_follows_the_index_and_a_lost_graph_is_rebuilt_with_a_line() {
    let project = game();
    let index = project.path().join(".claude/unity-asset-index");
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(index.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["graph"]["file"], "graph.json");
    let edges = manifest["graph"]["edges"].as_u64().unwrap();

    // The prefab stops using the material: an incremental index drops the edge.
    std::fs::write(project.path().join("Assets/Prefabs/Rock.prefab"), yaml(&[guid(1)])).unwrap();
    assert_eq!(project.run(&["index"]).code, 0);
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(index.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["graph"]["edges"].as_u64(), Some(edges - 1));
    let (_, refs) = json_of(&project, &["refs", "Assets/Materials/Rock.mat"]);
    assert_eq!(refs["count"], 0);

    for damage in ["", "{not json"] {
        std::fs::write(index.join("graph.json"), damage).unwrap();
        let run = project.run(&["deps", "Assets/Scenes/Main.unity"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.contains("rebuilt it from assets.jsonl"), "{}", run.stdout);
        assert!(run.stdout.contains("Assets/Prefabs/Rock.prefab"), "{}", run.stdout);
        let again = project.run(&["deps", "Assets/Scenes/Main.unity"]);
        assert!(!again.stdout.contains("rebuilt"), "written back: {}", again.stdout);
    }
}

#[tokio::test]
async fn refs_deps_and_unused_are_mcp_tools() {
    let project = game();
    let client = support::connect(project.path(), true).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    for name in ["refs", "deps", "unused"] {
        assert!(tools.iter().any(|t| t.name == name), "{name} is not a tool");
    }
    let refs = client
        .call_tool(
            CallToolRequestParams::new("refs")
                .with_arguments(support::args(json!({"asset": "Assets/Textures/Moss.png", "depth": 2}))),
        )
        .await
        .expect("tools/call refs");
    assert_ne!(refs.is_error, Some(true), "{}", support::text(&refs));
    let document = refs.structured_content.clone().expect("structured content");
    assert_eq!(
        paths(&document, "assets"),
        ["Assets/Materials/Rock.mat", "Assets/Prefabs/Rock.prefab"]
    );
    let unused = client
        .call_tool(
            CallToolRequestParams::new("unused").with_arguments(support::args(json!({"roots": ["Assets/Tools"]}))),
        )
        .await
        .expect("tools/call unused");
    let document = unused.structured_content.clone().expect("structured content");
    assert!(!paths(&document, "unused").contains(&"Assets/Tools/Tool.png".to_owned()));
    let unknown = client
        .call_tool(CallToolRequestParams::new("deps").with_arguments(support::args(json!({"asset": guid(99)}))))
        .await
        .expect("tools/call deps");
    assert_eq!(unknown.is_error, Some(true), "{}", support::text(&unknown));
}

// ---- the real corpora -------------------------------------------------------

/// `../shared/corpora/NAME.tar.gz` unpacked and indexed at normal depth, or
/// `None` (with a line) when the archive is absent.
fn corpus(name: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let archive = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../shared/corpora/{name}.tar.gz"));
    if !archive.is_file() {
        eprintln!("{name}: skipped, no {}", archive.display());
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let ok = std::process::Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(dir.path())
        .status()
        .unwrap()
        .success();
    assert!(ok, "could not unpack {}", archive.display());
    let project = dir.path().join(name);
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(project.join(".claude/unity-assets.yml"), "index_depth: normal\n").unwrap();
    let run = test_support::cli::Run::of(test_support::cli::command(Path::new(BIN), &project).args(["index", "-q"]));
    assert_eq!(run.code, 0, "{name}: {}", run.stderr);
    Some((dir, project))
}

/// Every file under `Assets/` holding Unity YAML, by path, with its text.
fn yaml_files(project: &Path) -> Vec<(String, String)> {
    let mut out = vec![];
    let mut stack = vec![project.join("Assets")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else if path.extension().is_none_or(|e| e != "meta") {
                let bytes = std::fs::read(&path).unwrap();
                if bytes.starts_with(b"%YAML") {
                    let rel = path.strip_prefix(project).unwrap().to_string_lossy().replace('\\', "/");
                    out.push((rel, String::from_utf8_lossy(&bytes).into_owned()));
                }
            }
        }
    }
    out
}

/// The maximal runs of exactly 32 lower-case hex digits in `text`.
fn hex32(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_digit() || ('a'..='f').contains(&c)))
        .filter(|run| run.len() == 32)
}

/// path → the indexed assets whose guid its text holds anywhere (its own
/// left out), found without the indexer: what `deps` must answer, and
/// reversed, what `refs` must.
fn brute_force_uses(project: &Path, guid_of: &HashMap<String, String>) -> HashMap<String, BTreeSet<String>> {
    let path_of: HashMap<&str, &str> = guid_of.iter().map(|(p, g)| (g.as_str(), p.as_str())).collect();
    let mut uses: HashMap<String, BTreeSet<String>> = HashMap::new();
    for (path, text) in yaml_files(project) {
        let Some(own) = guid_of.get(&path) else { continue };
        let found: BTreeSet<String> = hex32(&text)
            .filter(|g| g != own)
            .filter_map(|g| path_of.get(g).map(|p| (*p).to_owned()))
            .collect();
        if !found.is_empty() {
            uses.insert(path, found);
        }
    }
    uses
}

/// One corpus: the graph against the brute-force scan in both directions
/// (every asset), the CLI against the graph (a sample), and `unused`
/// against what the scenes reach by the brute-force scan.
fn check_corpus(name: &str, project: &Path) {
    let rows = std::fs::read_to_string(project.join(".claude/unity-asset-index/assets.jsonl")).unwrap();
    let guid_of: HashMap<String, String> = rows
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_owned(),
                r["guid"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let brute = brute_force_uses(project, &guid_of);
    let mut brute_users: HashMap<&str, BTreeSet<&str>> = HashMap::new();
    for (user, used) in &brute {
        for u in used {
            brute_users.entry(u.as_str()).or_default().insert(user.as_str());
        }
    }

    let loaded = unity_assets::index::graph::load(project, &engine::io::Limits::default())
        .unwrap()
        .expect("an index");
    assert!(loaded.rebuilt.is_none(), "{name}: the index run wrote graph.json");
    let graph = loaded.graph;
    assert_eq!(graph.nodes.len(), guid_of.len(), "{name}: one node per row");
    let mut edges = 0;
    for (i, node) in graph.nodes.iter().enumerate() {
        let uses: BTreeSet<String> = node.uses.iter().map(|&u| graph.node(u).path.clone()).collect();
        let expected = brute.get(&node.path).cloned().unwrap_or_default();
        assert_eq!(uses, expected, "{name}: deps of {}", node.path);
        let users: BTreeSet<&str> = graph.used_by[i].iter().map(|&u| graph.node(u).path.as_str()).collect();
        let expected = brute_users.get(node.path.as_str()).cloned().unwrap_or_default();
        assert_eq!(users, expected, "{name}: refs of {}", node.path);
        edges += uses.len();
    }
    assert!(
        edges > 100,
        "{name}: only {edges} references; the corpus should have many"
    );

    // The CLI answers what the graph holds: the most used assets and the users of the first.
    let mut most_used: Vec<usize> = (0..graph.nodes.len()).collect();
    most_used.sort_by_key(|&i| std::cmp::Reverse(graph.used_by[i].len()));
    for &i in most_used.iter().take(3) {
        let node = &graph.nodes[i];
        let users = walked(project, "refs", &node.guid);
        assert_eq!(
            users,
            brute_users[node.path.as_str()].iter().map(|p| p.to_string()).collect(),
            "{name}: refs {}",
            node.path
        );
        let user = users.iter().next().unwrap();
        assert_eq!(
            walked(project, "deps", user),
            brute[user.as_str()],
            "{name}: deps {user}"
        );
    }

    // Whatever a scene reaches (by the scan, transitively) is never unused.
    let mut reached: HashSet<&str> = HashSet::new();
    let mut todo: Vec<&str> = guid_of
        .keys()
        .filter(|p| p.ends_with(".unity"))
        .map(String::as_str)
        .collect();
    while let Some(path) = todo.pop() {
        if reached.insert(path) {
            todo.extend(brute.get(path).into_iter().flatten().map(String::as_str));
        }
    }
    let run =
        test_support::cli::Run::of(test_support::cli::command(Path::new(BIN), project).args(["unused", "--json"]));
    assert_eq!(run.code, 0, "{name}: {}", run.stderr);
    let unused: Value = serde_json::from_str(&run.stdout).unwrap();
    let listed = paths(&unused, "unused");
    assert!(!listed.is_empty(), "{name}: nothing unused at all is unlikely");
    for path in &listed {
        assert!(
            !reached.contains(path.as_str()),
            "{name}: unused lists {path}, which a scene reaches"
        );
    }
    eprintln!(
        "{name}: {} assets, {edges} references agree with the scan; {} scenes reach {} assets; {} unused",
        graph.nodes.len(),
        guid_of.keys().filter(|p| p.ends_with(".unity")).count(),
        reached.len(),
        listed.len()
    );
}

/// The graph as `refs --json` and `deps --json` report it, for one asset.
fn walked(project: &Path, command: &str, asset: &str) -> BTreeSet<String> {
    let run = test_support::cli::Run::of(
        test_support::cli::command(Path::new(BIN), project).args([command, asset, "--json"]),
    );
    assert_eq!(run.code, 0, "{command} {asset}: {}{}", run.stdout, run.stderr);
    let document: Value = serde_json::from_str(&run.stdout).unwrap();
    paths(&document, "assets").into_iter().collect()
}

#[test]
fn on_the_corpora_refs_and_deps_agree_with_a_brute_force_scan_and_unused_spares_what_scenes_reach() {
    for name in ["fpssample", "danmokou", "bossroom"] {
        if let Some((_dir, project)) = corpus(name) {
            check_corpus(name, &project);
        }
    }
}
