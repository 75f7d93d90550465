//! Facts read from an asset's Unity YAML (`index_depth: normal`/`rich`).
//!
//! Unity's serialisation is regular — `--- !u!<class> &<id>` object headers,
//! `{fileID: …, guid: …, type: …}` references — so one pass over the lines
//! finds what the index needs, much faster than a YAML parser would and
//! without failing on Unity's non-standard tags. Every set it fills is
//! bounded ([`MAX_NAMES`]), so a hostile file costs its length, not more.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use memchr::memmem::Finder;

use super::meta::is_written_guid;

const GAME_OBJECT: u32 = 1;
const MATERIAL: u32 = 21;
/// MonoBehaviour: its `m_Script` names the script's GUID.
const MONO_BEHAVIOUR: u32 = 114;
/// PrefabInstance (Unity 2018.3+): a nested prefab, or a variant's parent.
const PREFAB_INSTANCE: u32 = 1001;
const ANIMATOR_STATE: u32 = 1102;
/// The `fileID` of a reference to a script file (`.cs`); a class inside a
/// DLL is referenced by a hash of its name instead.
pub const SCRIPT_FILE_ID: &str = "11500000";
/// At most this many names per set: a scene with 50,000 objects still
/// gives a bounded row.
pub const MAX_NAMES: usize = 128;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct YamlFacts {
    /// Every GUID referenced, sorted, without duplicates.
    pub guids: BTreeSet<String>,
    /// The class ID of every object, in file order (the first is the main object).
    pub classes: Vec<u32>,
    /// GUIDs of the scripts MonoBehaviours run, sorted.
    pub script_guids: BTreeSet<String>,
    /// A material's saved property names (`_MainTex`, `_Color`, …), sorted.
    pub shader_props: BTreeSet<String>,
    /// Names of AnimatorState objects, sorted.
    pub animator_states: BTreeSet<String>,
    /// GameObject names, and names given to prefab instances' objects
    /// (`propertyPath: m_Name`), sorted; at most [`MAX_NAMES`].
    pub object_names: BTreeSet<String>,
    /// `m_Script` GUIDs referenced as a script file ([`SCRIPT_FILE_ID`]).
    pub script_file_guids: BTreeSet<String>,
    /// The script of the first object when it is a MonoBehaviour (a
    /// ScriptableObject asset's class).
    pub main_script_guid: Option<String>,
    /// `m_SourcePrefab` of a PrefabInstance at the root (no transform
    /// parent): in a prefab file, the variant's parent.
    pub root_instance_source: Option<String>,
    /// A material's `m_Shader` as `(fileID, guid)`.
    pub shader: Option<(String, String)>,
    /// GUIDs of the textures a material's `m_TexEnvs` use, sorted.
    pub texture_guids: BTreeSet<String>,
}

/// The lines of a Unity text file (YAML, `.meta`) as [`str::lines`] gives
/// them: std looks for each line's end apart, memchr finds them in one
/// vectorised pass (a scan reads millions of short lines).
pub(super) fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).map(Some).chain([None]);
    ends.filter_map(move |end| {
        let line = match end {
            Some(end) => text[start..end].strip_suffix('\r').unwrap_or(&text[start..end]),
            None => Some(&text[start..]).filter(|last| !last.is_empty())?,
        };
        start = end.map_or(text.len(), |end| end + 1);
        Some(line)
    })
}

/// Whether `text` is Unity YAML (and not a binary-serialised asset).
pub fn is_unity_yaml(text: &str) -> bool {
    text.trim_start_matches('\u{feff}').starts_with("%YAML")
}

/// Where the line pass stands inside the current object.
#[derive(Default)]
struct Cursor {
    class: Option<u32>,
    /// Inside a material's `m_SavedProperties`.
    in_saved_properties: bool,
    /// After `- first:` in a Unity 5 era material: the name comes next.
    awaiting_old_style_name: bool,
    /// After `propertyPath: m_Name` in a prefab instance's modifications.
    awaiting_name_value: bool,
    /// This PrefabInstance has no transform parent.
    instance_at_root: bool,
}

/// Scan Unity YAML text.
pub fn scan(text: &str) -> YamlFacts {
    let mut facts = YamlFacts::default();
    let mut at = Cursor::default();
    // Borrowed, sorted and made unique once at the end: a scene names the
    // same few guids thousands of times.
    let mut guids: Vec<&str> = Vec::new();
    for raw in lines(text) {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if let Some(header) = line.strip_prefix("--- !u!") {
            at = Cursor {
                class: header.split_whitespace().next().and_then(|id| id.parse::<u32>().ok()),
                ..Cursor::default()
            };
            facts.classes.extend(at.class);
            continue;
        }
        guids.extend(guids_in(line));
        object_line(line, &mut at, &mut facts);
    }
    guids.sort_unstable();
    guids.dedup();
    facts.guids = guids.into_iter().map(str::to_owned).collect();
    facts
}

/// One line of the object `at` stands in.
fn object_line(line: &str, at: &mut Cursor, facts: &mut YamlFacts) {
    let content = line.trim_ascii_start();
    let indent = line.len() - content.len();
    match at.class {
        Some(GAME_OBJECT) if indent == 2 => {
            if let Some(name) = content.strip_prefix("m_Name:") {
                insert_name(&mut facts.object_names, name);
            }
        }
        Some(MONO_BEHAVIOUR) if content.starts_with("m_Script:") => {
            let guid = guids_in(line).next().map(str::to_owned);
            if facts.classes.len() == 1 && facts.main_script_guid.is_none() {
                facts.main_script_guid.clone_from(&guid);
            }
            if let Some(guid) = guid {
                if file_id(content) == Some(SCRIPT_FILE_ID) {
                    facts.script_file_guids.insert(guid.clone());
                }
                facts.script_guids.insert(guid);
            }
        }
        Some(MATERIAL) => {
            if indent == 2 {
                at.in_saved_properties = content.starts_with("m_SavedProperties:");
                if content.starts_with("m_Shader:") {
                    facts.shader = file_id(content)
                        .zip(guids_in(line).next())
                        .map(|(id, guid)| (id.to_owned(), guid.to_owned()));
                }
            } else if at.in_saved_properties {
                if content.starts_with("m_Texture:") {
                    facts.texture_guids.extend(guids_in(line).map(str::to_owned));
                } else {
                    saved_property(content, &mut at.awaiting_old_style_name, &mut facts.shader_props);
                }
            }
        }
        Some(PREFAB_INSTANCE) => {
            if content.starts_with("m_TransformParent:") {
                at.instance_at_root = file_id(content) == Some("0");
            } else if indent == 2 && content.starts_with("m_SourcePrefab:") {
                if at.instance_at_root && facts.root_instance_source.is_none() {
                    facts.root_instance_source = guids_in(line).next().map(str::to_owned);
                }
            } else if let Some(path) = content.strip_prefix("propertyPath:") {
                at.awaiting_name_value = path.trim_ascii() == "m_Name";
            } else if let Some(value) = content.strip_prefix("value:").filter(|_| at.awaiting_name_value) {
                insert_name(&mut facts.object_names, value);
                at.awaiting_name_value = false;
            }
        }
        Some(ANIMATOR_STATE) if indent == 2 => {
            if let Some(name) = content.strip_prefix("m_Name:") {
                insert_name(&mut facts.animator_states, name);
            }
        }
        _ => {}
    }
}

/// Add a YAML scalar (plain or quoted) to a bounded set of names.
fn insert_name(names: &mut BTreeSet<String>, value: &str) {
    let value = value.trim_ascii();
    let unquoted = ['\'', '"']
        .iter()
        .find_map(|q| value.strip_prefix(*q).and_then(|v| v.strip_suffix(*q)))
        .unwrap_or(value)
        .trim_ascii();
    if !unquoted.is_empty() && names.len() < MAX_NAMES {
        names.insert(unquoted.to_owned());
    }
}

/// The `fileID` of a `{fileID: …}` reference on a line.
fn file_id(content: &str) -> Option<&str> {
    let (_, rest) = content.split_once("fileID:")?;
    let rest = rest.trim_ascii_start();
    let end = rest.find([',', '}', ' ']).unwrap_or(rest.len());
    Some(&rest[..end]).filter(|id| !id.is_empty())
}

/// One line inside `m_SavedProperties`: `- _Name: …` (current format) or
/// `- first:` followed by `name: _Name` (Unity 5 era).
fn saved_property(content: &str, awaiting_old_style_name: &mut bool, props: &mut BTreeSet<String>) {
    if let Some(item) = content.strip_prefix("- ") {
        let key = item.split(':').next().unwrap_or_default().trim_ascii();
        *awaiting_old_style_name = key == "first";
        if !*awaiting_old_style_name && !key.is_empty() {
            props.insert(key.to_owned());
        }
    } else if *awaiting_old_style_name {
        if let Some(name) = content.strip_prefix("name:") {
            props.insert(name.trim_ascii().to_owned());
            *awaiting_old_style_name = false;
        }
    }
}

/// The 32-hex guids of a line: after `guid:`, and after keys that end in `GUID:`
/// (TextMesh Pro's `referencedFontAssetGUID`, Addressables' `m_AssetGUID`
/// and group entries' `m_GUID`), which reference assets as well.
fn guids_in(line: &str) -> impl Iterator<Item = &str> {
    GUID_KEYS.iter().flat_map(move |key| {
        key.find_iter(line.as_bytes()).filter_map(move |at| {
            let value = line[at + key.needle().len()..].trim_ascii_start();
            let guid = value.get(..32)?;
            let ends = value[32..].chars().next().is_none_or(|c| !c.is_ascii_hexdigit());
            (ends && is_written_guid(guid)).then_some(guid)
        })
    })
}

/// The keys a guid follows, each searched for with a searcher made once:
/// a scan looks for them on every line of every Unity YAML file.
static GUID_KEYS: LazyLock<[Finder<'static>; 2]> = LazyLock::new(|| [Finder::new("guid:"), Finder::new("GUID:")]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_strs_lines() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\r\nb",
            "a\r\n\r\nb\r",
            "a\r\r\n",
            "\n\nx\n\n",
            "좀비\r\n끝",
        ] {
            assert_eq!(
                lines(text).collect::<Vec<_>>(),
                text.lines().collect::<Vec<_>>(),
                "{text:?}"
            );
        }
    }

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn prefab_classes_references_and_scripts() {
        let text = format!(
            "%YAML 1.1\n%TAG !u! tag:unity3d.com,2011:\n--- !u!1 &100\nGameObject:\n  m_Name: Walker\n\
             --- !u!4 &200\nTransform:\n  m_Father: {{fileID: 0}}\n--- !u!114 &300\nMonoBehaviour:\n  \
             m_Script: {{fileID: 11500000, guid: {A}, type: 3}}\n  clip: {{fileID: 8300000, guid: {B}, type: 3}}\n"
        );
        assert!(is_unity_yaml(&text));
        let facts = scan(&text);
        assert_eq!(facts.classes, [1, 4, 114]);
        assert_eq!(facts.guids.iter().collect::<Vec<_>>(), [B, A]);
        assert_eq!(facts.script_guids.iter().collect::<Vec<_>>(), [A]);
    }

    #[test]
    fn material_properties_in_both_formats() {
        let current = "--- !u!21 &2100000\nMaterial:\n  m_Name: Stone\n  m_SavedProperties:\n    m_TexEnvs:\n    \
                       - _MainTex:\n        m_Texture: {fileID: 0}\n    m_Floats:\n    - _Glossiness: 0.5\n    \
                       m_Colors:\n    - _Color: {r: 1, g: 1, b: 1, a: 1}\n  m_BuildTextureStacks: []\n";
        let facts = scan(current);
        assert_eq!(
            facts.shader_props.iter().collect::<Vec<_>>(),
            ["_Color", "_Glossiness", "_MainTex"]
        );

        let old = "--- !u!21 &2100000\nMaterial:\n  m_SavedProperties:\n    m_TexEnvs:\n    - first:\n        \
                   name: _BumpMap\n      second:\n        m_Texture: {fileID: 0}\n";
        assert_eq!(scan(old).shader_props.iter().collect::<Vec<_>>(), ["_BumpMap"]);
    }

    #[test]
    fn animator_state_names() {
        let text = "--- !u!1102 &1\nAnimatorState:\n  m_Name: Idle\n  m_Motion: {fileID: 0}\n--- !u!1102 &2\n\
                    AnimatorState:\n  m_Name: Attack\n--- !u!1107 &3\nAnimatorStateMachine:\n  m_Name: Base Layer\n";
        assert_eq!(
            scan(text).animator_states.iter().collect::<Vec<_>>(),
            ["Attack", "Idle"]
        );
    }

    #[test]
    fn object_names_scripts_and_the_variant_parent() {
        let text = format!(
            "--- !u!1 &1\nGameObject:\n  m_Name: Door\n--- !u!1 &2\nGameObject:\n  m_Name: 'Door: Lock'\n\
             --- !u!114 &3\nMonoBehaviour:\n  m_Script: {{fileID: 11500000, guid: {A}, type: 3}}\n\
             --- !u!114 &4\nMonoBehaviour:\n  m_Script: {{fileID: 1392445389, guid: {B}, type: 3}}\n\
             --- !u!1001 &5\nPrefabInstance:\n  m_Modification:\n    m_TransformParent: {{fileID: 0}}\n    \
             m_Modifications:\n    - target: {{fileID: 9, guid: {B}, type: 3}}\n      propertyPath: m_Name\n      \
             value: Door_Variant\n      objectReference: {{fileID: 0}}\n    - target: {{fileID: 9, guid: {B}, type: 3}}\n      \
             propertyPath: m_IsActive\n      value: 0\n  m_SourcePrefab: {{fileID: 100100000, guid: {B}, type: 3}}\n"
        );
        let facts = scan(&text);
        assert_eq!(
            facts.object_names.iter().collect::<Vec<_>>(),
            ["Door", "Door: Lock", "Door_Variant"]
        );
        assert_eq!(facts.script_guids.iter().collect::<Vec<_>>(), [B, A]);
        assert_eq!(
            facts.script_file_guids.iter().collect::<Vec<_>>(),
            [A],
            "a DLL class is no script file"
        );
        assert_eq!(facts.root_instance_source.as_deref(), Some(B));
        assert_eq!(facts.main_script_guid, None, "the first object is a GameObject");
    }

    #[test]
    fn a_nested_prefab_is_no_variant_parent() {
        let text = format!(
            "--- !u!1001 &5\nPrefabInstance:\n  m_Modification:\n    m_TransformParent: {{fileID: 77}}\n  \
             m_SourcePrefab: {{fileID: 100100000, guid: {B}, type: 3}}\n"
        );
        assert_eq!(scan(&text).root_instance_source, None);
    }

    #[test]
    fn scriptable_object_main_script() {
        let text = format!(
            "%YAML 1.1\n--- !u!114 &11400000\nMonoBehaviour:\n  m_Script: {{fileID: 11500000, guid: {A}, type: 3}}\n  \
             m_Name: Sword\n  icon: {{fileID: 0}}\n"
        );
        assert_eq!(scan(&text).main_script_guid.as_deref(), Some(A));
    }

    #[test]
    fn material_shader_and_textures() {
        let text = format!(
            "--- !u!21 &2100000\nMaterial:\n  m_Name: Rock\n  m_Shader: {{fileID: 46, guid: 0000000000000000f000000000000000, type: 0}}\n  \
             m_SavedProperties:\n    m_TexEnvs:\n    - _MainTex:\n        m_Texture: {{fileID: 2800000, guid: {A}, type: 3}}\n        \
             m_Scale: {{x: 1, y: 1}}\n    - _BumpMap:\n        m_Texture: {{fileID: 0}}\n"
        );
        let facts = scan(&text);
        assert_eq!(
            facts.shader,
            Some(("46".to_owned(), "0000000000000000f000000000000000".to_owned()))
        );
        assert_eq!(facts.texture_guids.iter().collect::<Vec<_>>(), [A]);
        assert_eq!(facts.shader_props.iter().collect::<Vec<_>>(), ["_BumpMap", "_MainTex"]);
    }

    #[test]
    fn names_are_bounded_and_hostile_text_never_panics() {
        let many: String = (0..1000)
            .map(|i| format!("--- !u!1 &{i}\nGameObject:\n  m_Name: Object{i}\n"))
            .collect();
        assert_eq!(scan(&many).object_names.len(), MAX_NAMES);
        for hostile in [
            "--- !u!\n--- !u!99999999999999999999 &\n  m_Name:\n",
            "--- !u!21 &1\n  m_Shader: {fileID:\n  m_Shader: fileID:,guid:\n",
            "--- !u!1001 &1\n  propertyPath: m_Name\n  value: '\n  value: \"\n",
            "--- !u!114 &1\n  m_Script: {guid: é\u{0}}\n--- !u!1 &2\n  m_Name: 'é\n",
        ] {
            let _ = scan(hostile);
        }
        assert_eq!(
            scan("--- !u!1 &1\n  m_Name: '\n")
                .object_names
                .iter()
                .collect::<Vec<_>>(),
            ["'"]
        );
    }

    #[test]
    fn ignores_malformed_guids() {
        let text = format!(
            "x: {{guid: {A}0}}\ny: {{guid: 0123}}\nz: {{guid: {}}}\n",
            B.to_uppercase()
        );
        assert!(scan(&text).guids.is_empty());
        assert!(!is_unity_yaml("\u{0}\u{1}binary"));
    }
}
