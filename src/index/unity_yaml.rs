//! Facts read from an asset's Unity YAML (`index_depth: normal`/`rich`).
//!
//! Unity's serialisation is regular — `--- !u!<class> &<id>` object headers,
//! `{fileID: …, guid: …, type: …}` references — so one pass over the lines
//! finds what the index needs, much faster than a YAML parser would and
//! without failing on Unity's non-standard tags.

use std::collections::BTreeSet;

/// MonoBehaviour: its `m_Script` names the script's GUID.
const MONO_BEHAVIOUR: u32 = 114;
const MATERIAL: u32 = 21;
const ANIMATOR_STATE: u32 = 1102;

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
}

/// Whether `text` is Unity YAML (and not a binary-serialised asset).
pub fn is_unity_yaml(text: &str) -> bool {
    text.trim_start_matches('\u{feff}').starts_with("%YAML")
}

/// Scan Unity YAML text.
pub fn scan(text: &str) -> YamlFacts {
    let mut facts = YamlFacts::default();
    let mut class = None;
    let mut in_saved_properties = false;
    let mut awaiting_old_style_name = false;

    for raw in text.lines() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if let Some(header) = line.strip_prefix("--- !u!") {
            class = header.split_whitespace().next().and_then(|id| id.parse::<u32>().ok());
            facts.classes.extend(class);
            in_saved_properties = false;
            continue;
        }
        for guid in guids_in(line) {
            facts.guids.insert(guid.to_owned());
        }
        let content = line.trim_start();
        let indent = line.len() - content.len();
        match class {
            Some(MONO_BEHAVIOUR) if content.starts_with("m_Script:") => {
                facts.script_guids.extend(guids_in(line).map(str::to_owned));
            }
            Some(MATERIAL) => {
                if indent == 2 {
                    in_saved_properties = content.starts_with("m_SavedProperties:");
                } else if in_saved_properties {
                    saved_property(content, &mut awaiting_old_style_name, &mut facts.shader_props);
                }
            }
            Some(ANIMATOR_STATE) if indent == 2 => {
                if let Some(name) = content.strip_prefix("m_Name:") {
                    let name = name.trim();
                    if !name.is_empty() {
                        facts.animator_states.insert(name.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    facts
}

/// One line inside `m_SavedProperties`: `- _Name: …` (current format) or
/// `- first:` followed by `name: _Name` (Unity 5 era).
fn saved_property(content: &str, awaiting_old_style_name: &mut bool, props: &mut BTreeSet<String>) {
    if let Some(item) = content.strip_prefix("- ") {
        let key = item.split(':').next().unwrap_or_default().trim();
        *awaiting_old_style_name = key == "first";
        if !*awaiting_old_style_name && !key.is_empty() {
            props.insert(key.to_owned());
        }
    } else if *awaiting_old_style_name {
        if let Some(name) = content.strip_prefix("name:") {
            props.insert(name.trim().to_owned());
            *awaiting_old_style_name = false;
        }
    }
}

/// The 32-hex guids of a line: after `guid:`, and after keys that end in `GUID:`
/// (TextMesh Pro's `referencedFontAssetGUID`, Addressables' `m_AssetGUID`
/// and group entries' `m_GUID`), which reference assets as well.
fn guids_in(line: &str) -> impl Iterator<Item = &str> {
    let keys = line.match_indices("guid:").chain(line.match_indices("GUID:"));
    keys.filter_map(move |(at, key)| {
        let value = line[at + key.len()..].trim_start();
        let guid = value.get(..32)?;
        let ends = value[32..].chars().next().is_none_or(|c| !c.is_ascii_hexdigit());
        (ends && guid.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))).then_some(guid)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn ignores_malformed_guids() {
        let text = format!(
            "x: {{guid: {A}0}}\ny: {{guid: 0123}}\nz: {{guid: {}}}\n",
            B.to_uppercase()
        );
        assert!(scan(&text).guids.is_empty());
        assert!(!is_unity_yaml("\u{0}\u{1}binary"));
    }
}
