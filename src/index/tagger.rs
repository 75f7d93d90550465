//! The builtin tagger (`index.tag`): `llm_tags` and `llm_summary` derived
//! from what the scan knows — path, name, type, subtype, signals, labels,
//! package — deterministically and offline. It is the `builtin:` of the tag
//! stage and the fallback for rows a model got wrong, so no asset is ever
//! left untagged.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::classify::{folder_segments, name_words};
use super::record::{Depth, ScannedAsset, TagRow};

/// At most this many tags per asset: enough to search by, few enough to read.
const MAX_TAGS: usize = 12;

/// Words that say nothing about an asset: folder conventions, copies,
/// versions and variants.
const NOISE_WORDS: &[&str] = &[
    "assets",
    "packages",
    "asset",
    "prefab",
    "prefabs",
    "material",
    "materials",
    "mat",
    "texture",
    "textures",
    "tex",
    "model",
    "models",
    "mesh",
    "meshes",
    "art",
    "resources",
    "scripts",
    "script",
    "source",
    "sources",
    "new",
    "copy",
    "old",
    "final",
    "temp",
    "tmp",
    "test",
    "var",
    "variant",
    "ver",
    "version",
    "lod",
    "the",
    "of",
    "and",
    "for",
    "with",
    "a",
    "an",
    "v",
    "runtime",
    "editor",
    "data",
    "default",
    "file",
    "files",
];

/// What a tagger (builtin or model) is told about one asset: one line of
/// the tag prompt (`prompts/index/tag.j2` prints it as it is). The one type
/// beside [`AssetRow`](super::row::AssetRow) that spells an asset's
/// columns, because it is another line: the facts a model may tag from,
/// the package by its display name rather than its id, the taxonomy's use
/// cases as hints, none of a row's tags, size, time or content facts. The
/// tag stages read it back from that line (the builtin, `check_tags`,
/// `checkpoint`), so it is a type of its own rather than a view of the
/// row, made in one place (`TagSubject::of`). The builtin reads the same
/// lines, so it answers from what a model would have been shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagSubject {
    /// The asset's guid.
    pub guid: String,
    /// The asset's project-relative path.
    pub path: String,
    /// The file's name without its extension.
    pub name: String,
    /// The asset's Unity type.
    #[serde(rename = "type")]
    pub asset_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) type_subtype: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) filename_signals: Vec<String>,
    /// Curated labels, then `.meta` labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// The package's display name.
    pub package: String,
    /// Use cases the taxonomy suggests (asked for at depth normal/rich).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) use_cases: Vec<String>,
}

impl TagSubject {
    /// What a tagger is told of `asset`; `package_names`: each package's
    /// display name by its id.
    pub(crate) fn of(asset: &ScannedAsset, package_names: &HashMap<&str, &str>) -> Self {
        let row = &asset.row;
        let package = asset.package_id();
        Self {
            guid: row.guid.clone(),
            path: row.path.clone(),
            name: row.name.clone(),
            asset_type: row.asset_type.clone(),
            type_subtype: row.type_subtype.clone(),
            filename_signals: row.filename_signals.clone(),
            labels: row.labels.clone(),
            package: package_names.get(package).copied().unwrap_or(package).to_owned(),
            use_cases: row.llm_use_cases.clone().unwrap_or_default(),
        }
    }
}

/// One batch to tag: the `with:` of the tag stage.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TagRequest {
    /// The assets to tag.
    #[serde(with = "super::packed::lines")]
    pub assets: Vec<TagSubject>,
    /// The depth the index is built at, which says what the tags cover.
    #[serde(default)]
    pub index_depth: Depth,
}

/// The tag stage's output (`schemas/index-tags.schema.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagBatch {
    pub(crate) rows: Vec<TagRow>,
}

/// Tag every asset of a batch.
pub fn tag_batch(request: &TagRequest) -> TagBatch {
    TagBatch {
        rows: request.assets.iter().map(|a| tag_one(a, request.index_depth)).collect(),
    }
}

pub(crate) fn tag_one(subject: &TagSubject, depth: Depth) -> TagRow {
    TagRow {
        guid: subject.guid.clone(),
        llm_tags: tags(subject),
        llm_summary: summary(subject),
        llm_use_cases: (depth >= Depth::Normal).then(|| subject.use_cases.clone()),
    }
}

/// Kebab-case of a free text (`Ground Wall` → `ground-wall`).
pub(crate) fn kebab(text: &str) -> String {
    name_words(text).join("-")
}

/// Whether `tag` is ASCII kebab-case (`^[a-z0-9]+(-[a-z0-9]+)*$`).
pub(crate) fn is_kebab_tag(tag: &str) -> bool {
    !tag.is_empty()
        && tag
            .split('-')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
}

fn tags(subject: &TagSubject) -> Vec<String> {
    let mut tags: Vec<String> = Vec::new();
    let mut add = |tag: String| {
        if is_kebab_tag(&tag) && !tags.contains(&tag) && tags.len() < MAX_TAGS {
            tags.push(tag);
        }
    };
    add(type_tag(&subject.asset_type));
    if let Some((_, sub)) = subject.type_subtype.as_deref().and_then(|t| t.split_once('/')) {
        add(sub.to_owned());
    }
    subject.filename_signals.iter().cloned().for_each(&mut add);
    meaningful_words(&subject.name).for_each(&mut add);
    folder_segments(&subject.path)
        .rev()
        .flat_map(meaningful_words)
        .for_each(&mut add);
    add(kebab(&subject.package));
    tags
}

fn meaningful_words(text: &str) -> impl Iterator<Item = String> {
    name_words(text)
        .into_iter()
        .filter(|w| w.len() > 1 && !NOISE_WORDS.contains(&w.as_str()))
}

/// The kebab-case tag of a type (`AnimatorController` → `animator-controller`).
pub(crate) fn type_tag(asset_type: &str) -> String {
    type_words(asset_type).join("-")
}

/// `AnimatorController` → `animator`, `controller`; `Texture2D` → `texture`.
fn type_words(asset_type: &str) -> Vec<String> {
    name_words(asset_type).into_iter().filter(|w| w.len() > 1).collect()
}

fn summary(subject: &TagSubject) -> String {
    let mut kind: Vec<String> = Vec::new();
    if let Some((_, sub)) = subject.type_subtype.as_deref().and_then(|t| t.split_once('/')) {
        kind.push(sub.replace('-', " "));
    }
    kind.push(type_words(&subject.asset_type).join(" "));
    let kind = kind.join(" ");
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "An"
    } else {
        "A"
    };
    let folder = subject.path.rsplit_once('/').map_or("", |(folder, _)| folder);
    let origin = if subject.package == super::packages::PROJECT_NAME {
        "in the project's own assets".to_owned()
    } else {
        format!("from the {} package", subject.package)
    };
    let mut sentence = format!("{article} {kind} named \"{}\" {origin} ({folder})", subject.name);
    if !subject.filename_signals.is_empty() {
        sentence.push_str(&format!(
            ", marked {} by its file name",
            subject.filename_signals.join(", ")
        ));
    }
    if !subject.labels.is_empty() {
        sentence.push_str(&format!(", labeled {}", subject.labels.join(", ")));
    }
    sentence.push('.');
    sentence
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject() -> TagSubject {
        TagSubject {
            guid: "0123456789abcdef0123456789abcdef".into(),
            path: "Assets/ZombieKit/Characters/Prefabs/ZombieWalker_02.prefab".into(),
            name: "ZombieWalker_02".into(),
            asset_type: "Prefab".into(),
            type_subtype: Some("Prefab/character".into()),
            filename_signals: vec![],
            labels: vec!["Undead".into()],
            package: "ZombieKit".into(),
            use_cases: vec!["character".into(), "spawnable-unit".into()],
        }
    }

    #[test]
    fn tags_come_from_type_subtype_name_folders_and_package() {
        let row = tag_one(&subject(), Depth::Minimal);
        assert_eq!(
            row.llm_tags,
            [
                "prefab",
                "character",
                "zombie",
                "walker",
                "characters",
                "kit",
                "zombie-kit"
            ]
        );
        assert!(row.llm_tags.iter().all(|t| is_kebab_tag(t)));
        assert_eq!(row.llm_use_cases, None);
    }

    #[test]
    fn summary_is_one_sentence() {
        let row = tag_one(&subject(), Depth::Normal);
        assert_eq!(
            row.llm_summary,
            "A character prefab named \"ZombieWalker_02\" from the ZombieKit package \
             (Assets/ZombieKit/Characters/Prefabs), labeled Undead."
        );
        assert_eq!(
            row.llm_use_cases.as_deref(),
            Some(&["character".to_owned(), "spawnable-unit".to_owned()][..])
        );
    }

    #[test]
    fn korean_names_keep_ascii_tags_and_the_name_in_the_summary() {
        let mut s = subject();
        s.name = "좀비_보스".into();
        s.path = "Assets/ZombieKit/좀비_보스.prefab".into();
        s.asset_type = "AudioClip".into();
        s.type_subtype = Some("AudioClip/sfx".into());
        s.filename_signals = vec!["loop".into()];
        let row = tag_one(&s, Depth::Minimal);
        assert_eq!(
            row.llm_tags,
            ["audio-clip", "sfx", "loop", "zombie", "kit", "zombie-kit"]
        );
        assert!(
            row.llm_summary.starts_with("A sfx audio clip named \"좀비_보스\""),
            "{}",
            row.llm_summary
        );
    }

    #[test]
    fn deterministic() {
        assert_eq!(tag_one(&subject(), Depth::Rich), tag_one(&subject(), Depth::Rich));
    }

    #[test]
    fn kebab_check() {
        assert!(is_kebab_tag("normal-map"));
        assert!(!is_kebab_tag("Normal"));
        assert!(!is_kebab_tag("a--b"));
        assert!(!is_kebab_tag("좀비"));
    }
}
