//! The content facts of normal-depth rows, on a generated project: every
//! fact from its Unity YAML, the missing-script rule, and minimal rows that
//! hold what they held before.

use std::fs;
use std::path::Path;

use super::data::embedded;
use super::record::{Depth, ScannedAsset};
use super::row::AssetRow;
use super::scan::{self, ScanOptions};
use engine::io::Limits;

const DOOR: &str = "a0000000000000000000000000000001";
const DOOR_VARIANT: &str = "a0000000000000000000000000000002";
const LOCKED_DOOR_CS: &str = "b0000000000000000000000000000001";
const WEAPON_DATA_CS: &str = "b0000000000000000000000000000002";
const CACHED_CS: &str = "b0000000000000000000000000000003";
const GONE_CS: &str = "b0000000000000000000000000000004";
const DLL_CLASS: &str = "b0000000000000000000000000000005";
const MOSS_SHADER: &str = "c0000000000000000000000000000001";
const MOSS_ALBEDO: &str = "c0000000000000000000000000000002";
const MOSS_MAT: &str = "c0000000000000000000000000000003";
const PLAIN_MAT: &str = "c0000000000000000000000000000004";
const CONTROLLER: &str = "d0000000000000000000000000000001";
const SWORD: &str = "d0000000000000000000000000000002";
const LEVEL: &str = "d0000000000000000000000000000003";

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// An asset and its `.meta`.
fn asset(root: &Path, rel: &str, guid: &str, importer: &str, text: &str) {
    write(root, rel, text);
    write(
        root,
        &format!("{rel}.meta"),
        &format!("fileFormatVersion: 2\nguid: {guid}\n{importer}:\n"),
    );
}

fn script(guid: &str) -> String {
    format!("  m_Script: {{fileID: 11500000, guid: {guid}, type: 3}}\n")
}

fn project(root: &Path) {
    const YAML: &str = "%YAML 1.1\n%TAG !u! tag:unity3d.com,2011:\n";
    asset(root, "Assets/Scripts/LockedDoor.cs", LOCKED_DOOR_CS, "MonoImporter", "");
    asset(root, "Assets/Scripts/WeaponData.cs", WEAPON_DATA_CS, "MonoImporter", "");
    asset(
        root,
        "Assets/Props/Door.prefab",
        DOOR,
        "PrefabImporter",
        &format!(
            "{YAML}--- !u!1 &1\nGameObject:\n  m_Name: Door\n--- !u!1 &2\nGameObject:\n  m_Name: Door_Lock\n\
             --- !u!4 &3\nTransform:\n  m_Father: {{fileID: 0}}\n--- !u!65 &4\nBoxCollider:\n  m_Size: {{x: 1}}\n\
             --- !u!114 &5\nMonoBehaviour:\n{}--- !u!114 &6\nMonoBehaviour:\n{}--- !u!114 &7\nMonoBehaviour:\n{}\
             --- !u!114 &8\nMonoBehaviour:\n  m_Script: {{fileID: 1392445389, guid: {DLL_CLASS}, type: 3}}\n",
            script(LOCKED_DOOR_CS),
            script(CACHED_CS),
            script(GONE_CS)
        ),
    );
    asset(
        root,
        "Assets/Props/Door_Red.prefab",
        DOOR_VARIANT,
        "PrefabImporter",
        &format!(
            "{YAML}--- !u!1001 &1\nPrefabInstance:\n  m_Modification:\n    m_TransformParent: {{fileID: 0}}\n    \
             m_Modifications:\n    - target: {{fileID: 1, guid: {DOOR}, type: 3}}\n      propertyPath: m_Name\n      \
             value: Door_Red\n  m_SourcePrefab: {{fileID: 100100000, guid: {DOOR}, type: 3}}\n"
        ),
    );
    asset(
        root,
        "Assets/Shaders/Moss.shader",
        MOSS_SHADER,
        "ShaderImporter",
        "// moss\nShader \"Custom/Moss Rock\" {\n}\n",
    );
    asset(
        root,
        "Assets/Textures/Moss_Albedo.png",
        MOSS_ALBEDO,
        "TextureImporter",
        "",
    );
    asset(
        root,
        "Assets/Materials/Moss.mat",
        MOSS_MAT,
        "NativeFormatImporter",
        &format!(
            "{YAML}--- !u!21 &2100000\nMaterial:\n  m_Name: Moss\n  m_Shader: {{fileID: 4800000, guid: {MOSS_SHADER}, type: 3}}\n  \
             m_SavedProperties:\n    m_TexEnvs:\n    - _MainTex:\n        m_Texture: {{fileID: 2800000, guid: {MOSS_ALBEDO}, type: 3}}\n"
        ),
    );
    asset(
        root,
        "Assets/Materials/Plain.mat",
        PLAIN_MAT,
        "NativeFormatImporter",
        &format!(
            "{YAML}--- !u!21 &2100000\nMaterial:\n  m_Name: Plain\n  \
             m_Shader: {{fileID: 46, guid: 0000000000000000f000000000000000, type: 0}}\n"
        ),
    );
    asset(
        root,
        "Assets/Anim/Guard.controller",
        CONTROLLER,
        "NativeFormatImporter",
        &format!(
            "{YAML}--- !u!1102 &1\nAnimatorState:\n  m_Name: Patrol\n--- !u!1102 &2\nAnimatorState:\n  m_Name: Alert\n"
        ),
    );
    asset(
        root,
        "Assets/Data/Sword.asset",
        SWORD,
        "NativeFormatImporter",
        &format!(
            "{YAML}--- !u!114 &11400000\nMonoBehaviour:\n{}  m_Name: Sword\n",
            script(WEAPON_DATA_CS)
        ),
    );
    asset(
        root,
        "Assets/Scenes/Level.unity",
        LEVEL,
        "DefaultImporter",
        &format!(
            "{YAML}--- !u!104 &2\nRenderSettings:\n  m_Fog: 0\n--- !u!1 &3\nGameObject:\n  m_Name: Gate\n\
             --- !u!114 &4\nMonoBehaviour:\n{}--- !u!108 &5\nLight:\n  m_Type: 1\n",
            script(LOCKED_DOOR_CS)
        ),
    );
}

fn scan(root: &Path, depth: Depth) -> Vec<ScannedAsset> {
    let options = ScanOptions {
        index_depth: depth,
        ..Default::default()
    };
    scan::scan(root, &Limits::default(), &embedded(), &options)
        .unwrap()
        .assets
}

fn row(assets: &[ScannedAsset], guid: &str) -> AssetRow {
    assets.iter().find(|a| a.row.guid == guid).unwrap().row.clone()
}

#[test]
fn normal_is_the_default_depth() {
    assert_eq!(ScanOptions::default().index_depth, Depth::Normal);
}

#[test]
fn prefabs_and_scenes_hold_components_children_and_the_variant_parent() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let assets = scan(dir.path(), Depth::Normal);
    let door = row(&assets, DOOR);
    assert_eq!(
        door.component_types.unwrap(),
        ["BoxCollider", "LockedDoor", "MonoBehaviour", "Transform"],
        "scripts by class; the unresolved and the DLL class as MonoBehaviour"
    );
    assert_eq!(door.child_names.unwrap(), ["Door_Lock"], "the root is the row's name");
    assert_eq!(door.variant_of, None);
    let variant = row(&assets, DOOR_VARIANT);
    assert_eq!(variant.variant_of.as_deref(), Some(DOOR));
    assert_eq!(variant.child_names, None, "its own name only");
    let level = row(&assets, LEVEL);
    assert_eq!(
        level.component_types.unwrap(),
        ["Light", "LockedDoor"],
        "scene settings are no components"
    );
    assert_eq!(level.child_names.unwrap(), ["Gate"]);
}

#[test]
fn materials_controllers_and_scriptable_objects() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let assets = scan(dir.path(), Depth::Normal);
    let moss = row(&assets, MOSS_MAT);
    assert_eq!(
        moss.shader.as_deref(),
        Some("Custom/Moss Rock"),
        "the shader's own name line"
    );
    assert_eq!(moss.textures.unwrap(), ["Moss_Albedo"]);
    assert_eq!(moss.shader_props, None, "properties are rich depth");
    assert_eq!(row(&assets, PLAIN_MAT).shader.as_deref(), Some("Standard"));
    assert_eq!(row(&assets, CONTROLLER).animator_states.unwrap(), ["Alert", "Patrol"]);
    assert_eq!(row(&assets, SWORD).asset_type, "ScriptableObject");
    assert_eq!(row(&assets, SWORD).script_class.as_deref(), Some("WeaponData"));

    // A shader file without a name line is known by its file name.
    write(dir.path(), "Assets/Shaders/Moss.shader", "");
    let assets = scan(dir.path(), Depth::Normal);
    assert_eq!(row(&assets, MOSS_MAT).shader.as_deref(), Some("Moss"));
}

#[test]
fn missing_scripts_only_when_the_package_cache_is_there() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let assets = scan(dir.path(), Depth::Normal);
    assert_eq!(
        row(&assets, DOOR).missing_scripts,
        None,
        "packages unresolved: the project cannot know"
    );

    write(
        dir.path(),
        "Library/PackageCache/com.example.doors@1.0.0/Runtime/DoorSensor.cs.meta",
        &format!("fileFormatVersion: 2\nguid: {CACHED_CS}\nMonoImporter:\n"),
    );
    let assets = scan(dir.path(), Depth::Normal);
    let door = row(&assets, DOOR);
    assert_eq!(
        door.missing_scripts.unwrap(),
        [GONE_CS],
        "the cached script is found, the DLL class is never called missing"
    );
    assert!(door.component_types.unwrap().contains(&"DoorSensor".to_owned()));
    assert!(row(&assets, LEVEL).missing_scripts.is_none());

    // A package added to the cache is a change the fingerprint sees.
    let fingerprint = |root: &Path| {
        let options = ScanOptions::default();
        let tree = scan::current_tree(root, &Limits::default(), &options, None);
        scan::fingerprint(root, &Limits::default(), &embedded(), &options, &tree).unwrap()
    };
    let before = fingerprint(dir.path());
    fs::create_dir_all(dir.path().join("Library/PackageCache/com.example.more@2.0.0")).unwrap();
    assert_ne!(before, fingerprint(dir.path()));
}

#[test]
fn minimal_rows_hold_only_the_old_fields() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let assets = scan(dir.path(), Depth::Minimal);
    assert!(assets.iter().all(|a| a.row.dependencies.is_none()));
    let keys: Vec<String> = serde_json::to_value(row(&assets, DOOR))
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    for key in [
        "component_types",
        "child_names",
        "variant_of",
        "missing_scripts",
        "dependencies",
    ] {
        assert!(!keys.contains(&key.to_owned()), "{key} in a minimal row: {keys:?}");
    }
}
