//! Type, `type_subtype`, `filename_signals` and use cases of one asset, from
//! the data tables (see `data/asset-types.yml`, `data/type-taxonomy.yml`,
//! `data/filename-conventions.yml`).

use std::collections::BTreeMap;

use super::data::{IndexData, SubtypeRule};

/// What classification looks at.
pub struct Subject<'a> {
    /// Project-relative path with `/` separators (`Assets/UI/Button.png`).
    pub path: &'a str,
    /// Lower-case extension without the dot.
    pub extension: &'a str,
    pub importer: Option<&'a str>,
    pub settings: &'a BTreeMap<String, String>,
    /// The main object's Unity class ID, if known.
    pub main_class: Option<u32>,
}

/// The asset type: the first rule of `asset-types.yml` that holds.
pub fn asset_type(data: &IndexData, subject: &Subject) -> String {
    for rule in &data.types.rules {
        let holds = rule.extensions.contains(subject.extension)
            && rule.importer.as_deref().is_none_or(|i| subject.importer == Some(i))
            && settings_hold(&rule.settings, subject.settings)
            && (rule.classes.is_empty() || subject.main_class.is_some_and(|c| rule.classes.contains(&c)));
        if !holds {
            continue;
        }
        if rule.type_name == "{class}" {
            match subject.main_class.and_then(|c| data.class_name(c)) {
                Some(name) => return name.to_owned(),
                None => continue,
            }
        }
        return rule.type_name.clone();
    }
    data.types.fallback.clone()
}

/// Every filename signal whose pattern matches the file's stem, in table order.
pub fn filename_signals(data: &IndexData, stem: &str) -> Vec<String> {
    let stem = stem.to_lowercase();
    data.conventions
        .signals
        .iter()
        .filter(|rule| {
            rule.prefix.iter().any(|p| stem.starts_with(p.as_str()))
                || rule.suffix.iter().any(|s| stem.ends_with(s.as_str()))
                || rule.contains.iter().any(|c| stem.contains(c.as_str()))
        })
        .map(|rule| rule.signal.clone())
        .collect()
}

/// `type_subtype` (`Texture/normal-map`) and the use cases of the matching
/// subtype rule, or of the type's default subtype.
pub fn subtype(
    data: &IndexData,
    asset_type: &str,
    subject: &Subject,
    signals: &[String],
) -> Option<(String, Vec<String>)> {
    let entry = data.taxonomy.get(asset_type)?;
    let category = entry.category.as_deref().unwrap_or(asset_type);
    let folders: Vec<String> = folder_segments(subject.path).map(str::to_lowercase).collect();
    let words = name_words(file_stem(subject.path));
    let matched = entry
        .rules
        .iter()
        .find(|rule| rule_holds(rule, subject, signals, &folders, &words));
    let (subtype, use_cases) = match matched {
        Some(rule) => (
            &rule.subtype,
            if rule.use_cases.is_empty() {
                &entry.use_cases
            } else {
                &rule.use_cases
            },
        ),
        None => (entry.default.as_ref()?, &entry.use_cases),
    };
    Some((format!("{category}/{subtype}"), use_cases.clone()))
}

/// The type's general use cases (when no subtype rule applies).
pub fn type_use_cases<'d>(data: &'d IndexData, asset_type: &str) -> &'d [String] {
    data.taxonomy
        .get(asset_type)
        .map(|t| t.use_cases.as_slice())
        .unwrap_or_default()
}

fn rule_holds(rule: &SubtypeRule, subject: &Subject, signals: &[String], folders: &[String], words: &[String]) -> bool {
    let any = |wanted: &[String], have: &[String]| wanted.is_empty() || wanted.iter().any(|w| have.contains(w));
    settings_hold(&rule.settings, subject.settings)
        && any(&rule.signals, signals)
        && any(&rule.folders, folders)
        && any(&rule.words, words)
}

fn settings_hold(wanted: &BTreeMap<String, Vec<String>>, have: &BTreeMap<String, String>) -> bool {
    wanted
        .iter()
        .all(|(key, values)| have.get(key).is_some_and(|v| values.contains(v)))
}

/// The folders of a project-relative path, without `Assets`/`Packages` and the file name.
pub fn folder_segments(path: &str) -> impl DoubleEndedIterator<Item = &str> {
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    parts.into_iter().skip(1)
}

/// The file name without its extension (`Zombie_Walk.fbx` → `Zombie_Walk`).
pub fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rfind('.') {
        Some(dot) if dot > 0 => &name[..dot],
        _ => name,
    }
}

/// Lower-case words of a name: CamelCase, snake_case, kebab-case, spaces and
/// letter/digit boundaries split; pure digits dropped (`ZombieWalk_02` →
/// `zombie`, `walk`). Non-ASCII letters (Hangul, ...) stay inside words.
pub fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut current, &mut words);
            continue;
        }
        if let Some(&prev) = i.checked_sub(1).and_then(|p| chars.get(p)) {
            let next = chars.get(i + 1).copied();
            let camel = prev.is_lowercase() && c.is_uppercase();
            // `HTTPServer` → `http`, `server`: an upper-case letter followed by a lower-case one starts a word.
            let acronym_end = prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase);
            let digit_edge = prev.is_ascii_digit() != c.is_ascii_digit();
            if camel || acronym_end || digit_edge {
                flush(&mut current, &mut words);
            }
        }
        current.extend(c.to_lowercase());
    }
    flush(&mut current, &mut words);
    words
}

fn flush(current: &mut String, words: &mut Vec<String>) {
    if !current.is_empty() && !current.chars().all(|c| c.is_ascii_digit()) {
        words.push(std::mem::take(current));
    }
    current.clear();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::data::embedded;

    fn subject<'a>(path: &'a str, importer: Option<&'a str>, settings: &'a BTreeMap<String, String>) -> Subject<'a> {
        let extension = path.rsplit('.').next().unwrap_or_default();
        Subject {
            path,
            extension,
            importer,
            settings,
            main_class: None,
        }
    }

    fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn splits_names_in_every_style() {
        assert_eq!(name_words("ZombieWalk_02"), ["zombie", "walk"]);
        assert_eq!(name_words("HTTPServer-config v2"), ["http", "server", "config", "v"]);
        assert_eq!(name_words("좀비_보스 Attack"), ["좀비", "보스", "attack"]);
        assert_eq!(name_words("rock_lod0"), ["rock", "lod"]);
    }

    #[test]
    fn sprite_versus_texture_by_importer_setting() {
        let data = embedded();
        let sprite = settings(&[("textureType", "8")]);
        let plain = settings(&[("textureType", "0")]);
        assert_eq!(
            asset_type(&data, &subject("Assets/UI/a.png", Some("TextureImporter"), &sprite)),
            "Sprite"
        );
        assert_eq!(
            asset_type(&data, &subject("Assets/Art/a.png", None, &plain)),
            "Texture2D"
        );
    }

    #[test]
    fn scriptable_object_and_class_named_assets() {
        let data = embedded();
        let none = BTreeMap::new();
        let mut s = subject("Assets/Data/Weapon.asset", None, &none);
        s.main_class = Some(114);
        assert_eq!(asset_type(&data, &s), "ScriptableObject");
        s.main_class = Some(156);
        assert_eq!(asset_type(&data, &s), "TerrainData");
        s.main_class = None;
        assert_eq!(asset_type(&data, &s), "Asset");
        assert_eq!(
            asset_type(&data, &subject("Assets/readme.weird", None, &none)),
            "DefaultAsset"
        );
        // A SpeedTree tree is a model a level places, not an unknown file.
        let tree = subject("Assets/SpeedTree/Palm/Palm_Desktop.spm", None, &none);
        assert_eq!(asset_type(&data, &tree), "Model");
    }

    #[test]
    fn signals_from_the_conventions_table() {
        let data = embedded();
        assert_eq!(filename_signals(&data, "Explosion_FX"), ["fx"]);
        assert_eq!(filename_signals(&data, "Loop_Rain"), ["loop"]);
        assert_eq!(filename_signals(&data, "SFX_Gunshot"), ["sfx"]);
        assert_eq!(filename_signals(&data, "Rock_normal"), ["normal-map"]);
        assert_eq!(filename_signals(&data, "Metal_Mask"), ["mask"]);
        assert_eq!(filename_signals(&data, "Brick_Albedo"), ["albedo"]);
        assert_eq!(filename_signals(&data, "Panel_9-Slice"), ["nine-slice"]);
        assert_eq!(filename_signals(&data, "Dungeon_Tilesheet"), ["tilesheet"]);
        assert_eq!(filename_signals(&data, "Hero_Spritesheet"), ["spritesheet"]);
        assert!(filename_signals(&data, "Barrel").is_empty());
    }

    #[test]
    fn subtypes_from_settings_signals_and_folders() {
        let data = embedded();
        let none = BTreeMap::new();
        let check = |ty: &str, path: &str, settings: &BTreeMap<String, String>| {
            let s = subject(path, None, settings);
            let signals = filename_signals(&data, file_stem(path));
            subtype(&data, ty, &s, &signals).map(|(sub, _)| sub)
        };
        assert_eq!(
            check("Sprite", "Assets/UIKit/UI/Button.png", &none).as_deref(),
            Some("Sprite/ui")
        );
        assert_eq!(
            check("AudioClip", "Assets/AudioKit/Music/Theme.ogg", &none).as_deref(),
            Some("AudioClip/music")
        );
        assert_eq!(
            check("AudioClip", "Assets/AudioKit/Gunshot.wav", &none).as_deref(),
            Some("AudioClip/sfx")
        );
        let humanoid = settings(&[("animationType", "3")]);
        assert_eq!(
            check("Model", "Assets/Kit/Bob.fbx", &humanoid).as_deref(),
            Some("Model/character")
        );
        // A character's motion is an animation first.
        for motion in [
            "Assets/Characters/Oppy/Animations/reaction_pet.fbx",
            "Assets/Kit/Bob@Walk.fbx",
        ] {
            assert_eq!(
                check("Model", motion, &humanoid).as_deref(),
                Some("Model/animation"),
                "{motion}"
            );
        }
        assert_eq!(
            check("Texture2D", "Assets/Kit/Rock_normal.png", &none).as_deref(),
            Some("Texture/normal-map")
        );
        assert_eq!(
            check("Prefab", "Assets/Kit/Characters/Walker.prefab", &none).as_deref(),
            Some("Prefab/character")
        );
        assert_eq!(check("Material", "Assets/Kit/Stone.mat", &none), None);
        let pattern = regex_like_type_subtype();
        for (name, entry) in &data.taxonomy {
            let category = entry.category.as_deref().unwrap_or(name);
            for sub in entry.rules.iter().map(|r| &r.subtype).chain(entry.default.as_ref()) {
                assert!(pattern(&format!("{category}/{sub}")), "{category}/{sub}");
            }
        }
    }

    /// `^[A-Za-z]+/[a-z0-9-]+$`, written out.
    fn regex_like_type_subtype() -> impl Fn(&str) -> bool {
        |s: &str| match s.split_once('/') {
            Some((t, sub)) => {
                !t.is_empty()
                    && t.bytes().all(|b| b.is_ascii_alphabetic())
                    && !sub.is_empty()
                    && sub
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            }
            None => false,
        }
    }
}
