//! What a player build starts from, as Unity decides it: the enabled scenes
//! of the build settings (`ProjectSettings/EditorBuildSettings.asset`) and
//! its config objects, every asset in a `Resources/` folder outside editor
//! folders, `StreamingAssets/` (copied as is), and the Addressables entries
//! (`m_GUID` of the group assets under `AddressableAssetsData/`; a folder
//! entry brings everything under it).

use std::collections::HashSet;
use std::path::Path;

use engine::io::Limits;

use crate::index::graph::ReferenceGraph;

pub const BUILD_SETTINGS: &str = "ProjectSettings/EditorBuildSettings.asset";

/// The roots found, each a list of graph nodes.
#[derive(Debug, Default)]
pub struct Roots {
    /// Whether the build settings file was there; without it every scene
    /// of the project counts (a project whose settings were not shared).
    pub build_settings: bool,
    pub scenes: Vec<u32>,
    /// Build-settings scenes (by path) that are no asset of the index.
    pub missing_scenes: Vec<String>,
    pub config: Vec<u32>,
    pub resources: Vec<u32>,
    pub streaming: Vec<u32>,
    pub addressables: Vec<u32>,
}

impl Roots {
    pub fn all(&self) -> impl Iterator<Item = u32> + '_ {
        self.scenes
            .iter()
            .chain(&self.config)
            .chain(&self.resources)
            .chain(&self.streaming)
            .chain(&self.addressables)
            .copied()
    }
}

/// Assets of folders only the editor loads (`Editor/`, `Editor Default
/// Resources/`, `Gizmos/`): never in a player build.
pub fn is_editor_only(path: &str) -> bool {
    path.split('/')
        .rev()
        .skip(1)
        .any(|dir| matches!(dir, "Editor" | "Editor Default Resources" | "Gizmos"))
}

fn in_resources(path: &str) -> bool {
    path.split('/').rev().skip(1).any(|dir| dir == "Resources") && !is_editor_only(path)
}

/// Read every root of the project.
pub fn find(project: &Path, limits: &Limits, graph: &ReferenceGraph) -> Roots {
    let mut roots = Roots::default();
    let by_guid_or_path = |guid: Option<&str>, path: Option<&str>| {
        guid.and_then(|g| graph.by_guid(g))
            .or_else(|| path.and_then(|p| graph.by_path(p)))
    };
    match read(project, BUILD_SETTINGS, limits) {
        Some(text) => {
            roots.build_settings = true;
            let settings = parse_build_settings(&text);
            for scene in settings.scenes.iter().filter(|s| s.enabled) {
                match by_guid_or_path(scene.guid.as_deref(), scene.path.as_deref()) {
                    Some(i) => roots.scenes.push(i),
                    None => roots
                        .missing_scenes
                        .push(scene.path.clone().or_else(|| scene.guid.clone()).unwrap_or_default()),
                }
            }
            roots.config = settings.config.iter().filter_map(|g| graph.by_guid(g)).collect();
        }
        None => {
            roots.scenes = (0..graph.nodes.len() as u32)
                .filter(|&i| graph.node(i).asset_type == "Scene" && !is_editor_only(&graph.node(i).path))
                .collect();
        }
    }
    for (i, node) in graph.nodes.iter().enumerate() {
        if in_resources(&node.path) {
            roots.resources.push(i as u32);
        } else if node.path.starts_with("Assets/StreamingAssets/") {
            roots.streaming.push(i as u32);
        }
    }
    roots.addressables = addressables(project, limits, graph);
    roots
}

fn read(project: &Path, rel: &str, limits: &Limits) -> Option<String> {
    let path = engine::io::confine(project, rel).ok()?;
    engine::io::read_text_if_present(&path, limits.file_bytes, engine::io::FILE_KEY, &crate::PRODUCT).ok()?
}

/// A scene line of the build settings.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SceneEntry {
    pub enabled: bool,
    pub path: Option<String>,
    pub guid: Option<String>,
}

/// `EditorBuildSettings.asset`, the parts `unused` reads.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct BuildSettings {
    pub scenes: Vec<SceneEntry>,
    /// `m_configObjects` (Addressables settings, input settings, …).
    pub config: Vec<String>,
}

pub fn parse_build_settings(text: &str) -> BuildSettings {
    let mut settings = BuildSettings::default();
    let mut section = "";
    for line in text.lines() {
        let trimmed = line.trim();
        if line.starts_with("  m_") && !line.starts_with("   ") {
            section = trimmed.split(':').next().unwrap_or("");
        }
        match section {
            "m_Scenes" => {
                if let Some(rest) = trimmed.strip_prefix("- ") {
                    settings.scenes.push(SceneEntry::default());
                    scene_field(rest, &mut settings.scenes);
                } else {
                    scene_field(trimmed, &mut settings.scenes);
                }
            }
            "m_configObjects" => settings.config.extend(guid_value(trimmed, "guid:")),
            _ => {}
        }
    }
    settings
}

fn scene_field(field: &str, scenes: &mut [SceneEntry]) {
    let Some(scene) = scenes.last_mut() else { return };
    if let Some(v) = field.strip_prefix("enabled:") {
        scene.enabled = v.trim() == "1";
    } else if let Some(v) = field.strip_prefix("path:") {
        scene.path = Some(v.trim().to_owned()).filter(|p| !p.is_empty());
    } else if let Some(v) = field.strip_prefix("guid:") {
        scene.guid = guid_value(&format!("guid:{v}"), "guid:");
    }
}

/// The 32-hex-digit value after `key` in `line`, lower-cased.
fn guid_value(line: &str, key: &str) -> Option<String> {
    let at = line.find(key)?;
    let value = line[at + key.len()..].trim_start();
    let guid = value.get(..32)?;
    guid.bytes()
        .all(|b| b.is_ascii_hexdigit())
        .then(|| guid.to_ascii_lowercase())
}

/// The Addressables entries: files by guid, folders by everything under them.
fn addressables(project: &Path, limits: &Limits, graph: &ReferenceGraph) -> Vec<u32> {
    let mut entries: HashSet<String> = HashSet::new();
    for node in graph
        .nodes
        .iter()
        .filter(|n| n.path.contains("/AddressableAssetsData/") && n.path.ends_with(".asset"))
    {
        if let Some(text) = read(project, &node.path, limits) {
            entries.extend(text.lines().filter_map(|l| guid_value(l, "m_GUID:")));
        }
    }
    let mut found: Vec<u32> = entries.iter().filter_map(|g| graph.by_guid(g)).collect();
    let folders: HashSet<&str> = entries
        .iter()
        .map(String::as_str)
        .filter(|g| graph.by_guid(g).is_none())
        .collect();
    if !folders.is_empty() {
        let mut prefixes = vec![];
        folder_guids(project, "Assets", &folders, &mut prefixes, limits);
        for (i, node) in graph.nodes.iter().enumerate() {
            if prefixes.iter().any(|p: &String| node.path.starts_with(p.as_str())) {
                found.push(i as u32);
            }
        }
    }
    found
}

/// The folders under `rel` whose `.meta` guid is one of `wanted`, as
/// `path/` prefixes (real folders only: a link is not followed).
fn folder_guids(project: &Path, rel: &str, wanted: &HashSet<&str>, out: &mut Vec<String>, limits: &Limits) {
    let Ok(entries) = std::fs::read_dir(project.join(rel)) else {
        return;
    };
    for entry in entries.flatten() {
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if !is_dir || name.starts_with('.') {
            continue;
        }
        let child = format!("{rel}/{name}");
        let guid = read(project, &format!("{child}.meta"), limits)
            .and_then(|meta| meta.lines().find_map(|l| guid_value(l, "guid:")));
        if guid.is_some_and(|g| wanted.contains(g.as_str())) {
            out.push(format!("{child}/"));
        }
        folder_guids(project, &child, wanted, out, limits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_settings_scenes_and_config_objects() {
        let text = "%YAML 1.1\n--- !u!1045 &1\nEditorBuildSettings:\n  m_ObjectHideFlags: 0\n  serializedVersion: 2\n  m_Scenes:\n  - enabled: 1\n    path: Assets/Scenes/Main.unity\n    guid: 2CDA990E2423BBF4892E6590BA056729\n  - enabled: 0\n    path: Assets/Scenes/Old.unity\n    guid: 00000000000000000000000000000001\n  m_configObjects:\n    com.unity.addressableassets: {fileID: 11400000, guid: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, type: 2}\n";
        let settings = parse_build_settings(text);
        assert_eq!(
            settings.scenes,
            [
                SceneEntry {
                    enabled: true,
                    path: Some("Assets/Scenes/Main.unity".into()),
                    guid: Some("2cda990e2423bbf4892e6590ba056729".into()),
                },
                SceneEntry {
                    enabled: false,
                    path: Some("Assets/Scenes/Old.unity".into()),
                    guid: Some("00000000000000000000000000000001".into()),
                },
            ]
        );
        assert_eq!(settings.config, ["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]);
    }

    #[test]
    fn editor_folders_and_resources() {
        assert!(is_editor_only("Assets/Tools/Editor/Icon.png"));
        assert!(is_editor_only("Assets/Gizmos/Light.png"));
        assert!(!is_editor_only("Assets/Editor.png"));
        assert!(in_resources("Assets/Game/Resources/Sub/Hero.prefab"));
        assert!(!in_resources("Assets/Editor/Resources/Icon.png"));
        assert!(!in_resources("Assets/Resources.png"));
    }
}
