//! A row's content facts (`index_depth: normal` and up): what the Unity
//! YAML facts of one asset ([`YamlFacts`]) mean once every asset of the
//! project is known — the classes of its scripts, the shader and textures a
//! material uses, a variant's parent, the scripts that are missing
//! (`docs/indexing.md#content-facts`).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use super::data::IndexData;
use super::meta::{meta_text, parse_meta};
use super::open::{open_in_project, read_meta, Listed};
use super::record::Depth;
use super::row::AssetRow;
use super::unity_yaml::{YamlFacts, MAX_NAMES};

const MONO_BEHAVIOUR: u32 = 114;
/// Object classes that are a prefab's or scene's structure or settings
/// rather than its components: GameObject, PrefabInstance, and a scene's
/// OcclusionCullingSettings, RenderSettings, LightmapSettings,
/// NavMeshSettings and SceneRoots.
const NOT_COMPONENTS: [u32; 7] = [1, 1001, 29, 104, 157, 196, 1_660_057_539];
/// Where Unity unpacks the registry and git packages a project uses.
const PACKAGE_CACHE: &str = "Library/PackageCache";
/// At most this many files of the package cache are looked at.
const PACKAGE_CACHE_FILES: usize = 200_000;
/// Unity's built-in resources: shaders there are known by `fileID` only.
const BUILTIN_RESOURCES: &str = "0000000000000000f000000000000000";
/// The built-in shaders whose `fileID` is certain (the Standard shaders).
const BUILTIN_SHADERS: [(&str, &str); 2] = [("46", "Standard"), ("45", "Standard (Specular setup)")];
/// How much of a `.shader` file is read for its `Shader "Name"` line.
const SHADER_HEAD: usize = 16 * 1024;

/// What turns the guids of an asset's YAML into names: the project's
/// assets that some YAML names, the scripts Unity keeps outside the
/// project, and the shader names materials need. It keeps its own copy of
/// what it needs of the assets (the few that are named), so the facts it
/// finds go straight into the rows it was made from.
pub(super) struct Lookup {
    /// The project's assets some YAML references (scripts, script files,
    /// textures), by guid.
    named: HashMap<String, Named>,
    /// Script guid → class, for the scripts of `Library/PackageCache`.
    cached_scripts: HashMap<String, String>,
    /// Whether every script the project can use is visible here, so an
    /// unresolved script guid is really missing (see [`Lookup::new`]).
    scripts_all_known: bool,
    /// Shader guid → its name, for the shaders materials use.
    shader_names: HashMap<String, String>,
}

/// An asset of the project as another asset's YAML names it.
struct Named {
    name: String,
    is_script: bool,
}

impl Lookup {
    /// `parsed`: every asset the scan kept, with its YAML facts if read.
    ///
    /// The missing-script rule: a MonoBehaviour's script counts as missing
    /// only when `Library/PackageCache/` exists (Unity has resolved the
    /// project's registry and git packages there) and the guid is in neither
    /// the project's assets (`Assets/`, embedded packages) nor any `.cs.meta`
    /// of that cache. Without the cache the project cannot know what its
    /// packages hold, so nothing is called missing. A class inside a DLL
    /// (a `fileID` other than the script-file id) may come with the editor
    /// itself and is never called missing.
    pub(super) fn new(
        project: &Path,
        data: &IndexData,
        depth: Depth,
        parsed: &[(&AssetRow, Option<&YamlFacts>)],
    ) -> Self {
        let mut lookup = Self {
            named: HashMap::new(),
            cached_scripts: HashMap::new(),
            scripts_all_known: false,
            shader_names: HashMap::new(),
        };
        if depth == Depth::Minimal {
            return lookup;
        }
        let assets: HashMap<&str, &AssetRow> = parsed.iter().map(|(row, _)| (row.guid.as_str(), *row)).collect();
        let yamls = || parsed.iter().filter_map(|(_, yaml)| *yaml);
        let named_guids = yamls().flat_map(|y| {
            (y.script_guids.iter().chain(&y.script_file_guids))
                .chain(&y.main_script_guid)
                .chain(&y.texture_guids)
        });
        for guid in named_guids {
            if let Some(row) = assets.get(guid.as_str()).filter(|_| !lookup.named.contains_key(guid)) {
                let named = Named {
                    name: row.name.clone(),
                    is_script: row.asset_type == "MonoScript",
                };
                lookup.named.insert(guid.clone(), named);
            }
        }
        let unresolved = yamls()
            .flat_map(|y| &y.script_guids)
            .any(|guid| lookup.script_class(guid).is_none());
        let cache = project.join(PACKAGE_CACHE);
        lookup.scripts_all_known = cache.is_dir();
        if unresolved && lookup.scripts_all_known {
            lookup.cached_scripts = cached_scripts(&cache, data);
        }
        let shaders: BTreeSet<&str> = yamls()
            .filter_map(|y| y.shader.as_ref())
            .map(|(_, guid)| guid.as_str())
            .collect();
        for guid in shaders {
            if let Some(row) = assets.get(guid) {
                lookup.shader_names.insert(guid.to_owned(), shader_name(project, row));
            }
        }
        lookup
    }

    /// The class a script guid names: a script of the project or of the
    /// package cache, by its file name (Unity requires a MonoBehaviour's
    /// class to be named after its file).
    fn script_class(&self, guid: &str) -> Option<&str> {
        match self.named.get(guid) {
            Some(named) if named.is_script => Some(named.name.as_str()),
            Some(_) => None,
            None => self.cached_scripts.get(guid).map(String::as_str),
        }
    }

    fn is_missing_script(&self, guid: &str) -> bool {
        self.scripts_all_known && !self.named.contains_key(guid) && !self.cached_scripts.contains_key(guid)
    }

    fn name_of(&self, guid: &str) -> Option<&str> {
        self.named.get(guid).map(|named| named.name.as_str())
    }

    fn shader(&self, (file_id, guid): &(String, String)) -> Option<String> {
        if guid == BUILTIN_RESOURCES {
            return BUILTIN_SHADERS
                .iter()
                .find(|(id, _)| id == file_id)
                .map(|(_, name)| (*name).to_owned());
        }
        self.shader_names.get(guid.as_str()).cloned()
    }
}

/// Writes the content facts of one asset into its row: from `normal` up,
/// its references (none without YAML) and what its YAML says for its type;
/// nothing at `minimal`.
pub(super) fn add_facts(data: &IndexData, depth: Depth, row: &mut AssetRow, yaml: Option<&YamlFacts>, lookup: &Lookup) {
    if depth == Depth::Minimal {
        return;
    }
    let Some(yaml) = yaml else {
        row.dependencies = Some(Vec::new());
        return;
    };
    row.dependencies = Some(yaml.guids.iter().filter(|g| **g != row.guid).cloned().collect());
    let names = |set: &BTreeSet<String>| Some(set.iter().cloned().collect::<Vec<_>>()).filter(|v| !v.is_empty());
    match row.asset_type.as_str() {
        "Prefab" | "Scene" => {
            row.component_types = Some(component_types(data, yaml, lookup)).filter(|v| !v.is_empty());
            let children: Vec<String> = yaml.object_names.iter().filter(|n| **n != row.name).cloned().collect();
            row.child_names = Some(children).filter(|v| !v.is_empty());
            if row.asset_type == "Prefab" {
                row.variant_of = yaml.root_instance_source.clone();
            }
        }
        "Material" => {
            row.shader = yaml.shader.as_ref().and_then(|s| lookup.shader(s));
            let textures: BTreeSet<&str> = yaml.texture_guids.iter().filter_map(|g| lookup.name_of(g)).collect();
            row.textures = Some(textures.into_iter().map(str::to_owned).collect()).filter(|v: &Vec<_>| !v.is_empty());
            if depth >= Depth::Rich {
                row.shader_props = names(&yaml.shader_props);
            }
        }
        "AnimatorController" => row.animator_states = names(&yaml.animator_states),
        "ScriptableObject" => {
            row.script_class = yaml
                .main_script_guid
                .as_deref()
                .and_then(|g| lookup.script_class(g))
                .map(str::to_owned);
        }
        _ => {}
    }
    let missing: Vec<String> = yaml
        .script_file_guids
        .iter()
        .filter(|g| lookup.is_missing_script(g))
        .cloned()
        .collect();
    row.missing_scripts = Some(missing).filter(|v| !v.is_empty());
}

/// Component class names of a prefab or scene; MonoBehaviours by their
/// script's class when it is known, else as `MonoBehaviour`.
fn component_types(data: &IndexData, yaml: &YamlFacts, lookup: &Lookup) -> Vec<String> {
    let mut names = BTreeSet::new();
    let mut unresolved_script = false;
    for guid in &yaml.script_guids {
        match lookup.script_class(guid) {
            Some(name) => names.insert(name.to_owned()),
            None => {
                unresolved_script = true;
                false
            }
        };
    }
    for &class in yaml.classes.iter().filter(|c| !NOT_COMPONENTS.contains(c)) {
        if class == MONO_BEHAVIOUR && !unresolved_script {
            continue;
        }
        names.insert(
            data.class_name(class)
                .map_or_else(|| format!("Class{class}"), str::to_owned),
        );
    }
    names.into_iter().take(MAX_NAMES).collect()
}

/// A shader asset's name: its `Shader "Name"` line when it is a `.shader`
/// file that has one near the top, else its file name.
fn shader_name(project: &Path, asset: &AssetRow) -> String {
    use std::io::Read as _;
    let declared = || {
        if !asset.path.to_ascii_lowercase().ends_with(".shader") {
            return None;
        }
        // Few shaders, and the path is the row's: confined by its path.
        let (file, _) = open_in_project(project, &asset.path, Listed::Other)?;
        let mut head = Vec::new();
        file.take(SHADER_HEAD as u64).read_to_end(&mut head).ok()?;
        declared_shader_name(&String::from_utf8_lossy(&head))
    };
    declared().unwrap_or_else(|| asset.name.clone())
}

/// The name in a shader's `Shader "Name"` line.
fn declared_shader_name(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let rest = line.trim_ascii_start().strip_prefix("Shader")?.trim_ascii_start();
        let name = rest.strip_prefix('"')?.split('"').next()?.trim_ascii();
        (!name.is_empty()).then(|| name.to_owned())
    })
}

/// The package folders of the package cache (`name@version`), sorted, at
/// normal depth and deeper: a package added or updated changes which
/// scripts are missing, so it is part of the scan's fingerprint.
pub(super) fn package_cache_state(project: &Path, depth: Depth) -> Vec<String> {
    if depth == Depth::Minimal {
        return Vec::new();
    }
    let mut names: Vec<String> = std::fs::read_dir(project.join(PACKAGE_CACHE))
        .map(|read| {
            read.filter_map(Result::ok)
                .take(PACKAGE_CACHE_FILES)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort_unstable();
    names
}

/// Script guid → class of every `.cs.meta` under the package cache (the
/// class is the file's name), at most [`PACKAGE_CACHE_FILES`] files looked at.
fn cached_scripts(cache: &Path, data: &IndexData) -> HashMap<String, String> {
    let mut scripts = HashMap::new();
    // Depth-first, links not followed (a link could lead out of the project).
    let mut folders = vec![cache.to_path_buf()];
    let mut looked_at = 0;
    while let Some(folder) = folders.pop() {
        let Ok(read) = std::fs::read_dir(&folder) else { continue };
        for entry in read.filter_map(Result::ok) {
            looked_at += 1;
            if looked_at > PACKAGE_CACHE_FILES {
                return scripts;
            }
            let Ok(file_type) = entry.file_type() else { continue };
            if file_type.is_dir() {
                folders.push(entry.path());
                continue;
            }
            let name = entry.file_name();
            let Some(class) = name.to_str().and_then(|n| n.strip_suffix(".cs.meta")) else {
                continue;
            };
            if !file_type.is_file() {
                continue;
            }
            let Ok((bytes, _)) = read_meta(&entry.path(), Listed::Other) else {
                continue;
            };
            if let Ok(meta) = parse_meta(&meta_text(&bytes), &data.setting_keys) {
                scripts.insert(meta.guid, class.to_owned());
            }
        }
    }
    scripts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shader_line() {
        let text = "// comment\n Shader \"Custom/Moss Rock\" {\n Properties {}\n}";
        assert_eq!(declared_shader_name(text).as_deref(), Some("Custom/Moss Rock"));
        assert_eq!(declared_shader_name("Shader Foo"), None);
        assert_eq!(declared_shader_name("Shader \"\""), None);
    }
}
