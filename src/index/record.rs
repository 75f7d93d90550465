//! The rows the indexer passes between stages and writes to disk.

use serde::{Deserialize, Serialize};

/// `index_depth`: how much each asset row holds; each tier adds to the one
/// before (`docs/contracts.md#index-depth`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Depth {
    /// guid, path, name, type, labels, tags, summary (+ subtype, signals):
    /// `.meta` files only, the fastest.
    Minimal,
    /// Adds size, last_modified, package_id, dependencies, llm_use_cases
    /// and the content facts read from Unity YAML (components, child names,
    /// variant parent, shader, textures, animator states, script class,
    /// missing scripts).
    #[default]
    Normal,
    /// Adds shader_props (Material); search switches to map-reduce.
    Rich,
}

impl Depth {
    /// The depth as written in settings and rows (`minimal`, `normal`, `rich`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Minimal => "minimal",
            Self::Normal => "normal",
            Self::Rich => "rich",
        }
    }
}

/// One asset as the scan saw it: everything but the generated tags. Not
/// the row of `assets.jsonl` (`AssetRecord`) because it holds what no row
/// keeps: the `signature` the diff compares, the taxonomy's `use_cases` a
/// tagger is given, and the package, size and mtime at every depth; the
/// row keeps what its `index_depth` holds, and the tags.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScannedAsset {
    /// The asset's guid, from its `.meta`.
    pub guid: String,
    /// The asset's project-relative path.
    pub path: String,
    /// The file's name without its extension.
    pub name: String,
    /// The asset's Unity type (`Prefab`, `Material`, ...).
    #[serde(rename = "type")]
    pub asset_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) type_subtype: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) filename_signals: Vec<String>,
    /// Curated labels, then `.meta` labels (see `labels.rs`).
    pub labels: Vec<String>,
    /// The package it belongs to (see `packages.rs`).
    pub package_id: String,
    /// What the taxonomy says the asset is for (`llm_use_cases` of the builtin tagger).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) use_cases: Vec<String>,
    /// Asset and `.meta` mtime + size: a changed signature means re-tag.
    pub signature: String,
    pub(crate) size: u64,
    /// The asset's mtime, RFC 3339 UTC to the second.
    pub(crate) last_modified: String,
    /// Read from the asset's Unity YAML (index_depth normal/rich).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Details>,
}

/// What normal and rich rows add from the asset's content
/// (`docs/contracts.md#index-depth`); `None` fields are left out of the row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Details {
    pub(crate) dependencies: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) component_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shader_props: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) animator_states: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) child_names: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) variant_of: Option<String>,
    /// A material's shader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shader: Option<String>,
    /// The textures a material uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub textures: Option<Vec<String>>,
    /// The class a script defines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_class: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) missing_scripts: Option<Vec<String>>,
}

/// The tag stage's answer for one asset (`schemas/index-tags.schema.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagRow {
    /// The asset's guid.
    pub guid: String,
    /// Short tags for search.
    pub llm_tags: Vec<String>,
    /// One sentence on what the asset is.
    pub llm_summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) llm_use_cases: Option<Vec<String>>,
}

/// One line of `assets.jsonl` (`schemas/asset-record.schema.json`), as the
/// indexer writes it and reads its previous run. Field order is the
/// serialisation order, so equal inputs give equal bytes; search reads the
/// same lines as its tolerant `search::records::AssetRow`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AssetRecord {
    /// The asset's guid.
    pub guid: String,
    /// The asset's project-relative path.
    #[serde(deserialize_with = "project_path")]
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
    pub labels: Vec<String>,
    /// The tagger's tags.
    pub llm_tags: Vec<String>,
    /// The tagger's one-sentence summary.
    pub llm_summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last_modified: Option<String>,
    /// The package it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_id: Option<String>,
    /// The first `ROW_DEPENDENCIES` referenced guids, sorted (`graph.json` has them all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Vec<String>>,
    /// How many guids the asset references, when `dependencies` lists only the first ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependency_count: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) llm_use_cases: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) component_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shader_props: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) animator_states: Option<Vec<String>>,
    /// GameObject names of a prefab or scene, sorted, at most 128.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_names: Option<Vec<String>>,
    /// A prefab variant's parent prefab (guid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant_of: Option<String>,
    /// A material's shader name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shader: Option<String>,
    /// Names of the textures a material uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub textures: Option<Vec<String>>,
    /// A ScriptableObject asset's script class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_class: Option<String>,
    /// `m_Script` guids that resolve to no script (`docs/indexing.md#content-facts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_scripts: Option<Vec<String>>,
}

/// Most guids a row lists in `dependencies`: a scene referencing 30,000
/// assets keeps its row far under `limits.line_kb` (its graph node keeps them all).
const ROW_DEPENDENCIES: usize = 4096;
/// Most items of any other list of a row (labels, tags, component types,
/// child names, …), as the Unity YAML reader already keeps its name sets.
const ROW_ITEMS: usize = super::unity_yaml::MAX_NAMES;
/// Most bytes one name, label, tag, shader or class takes in a row, as JSON
/// writes it (escapes counted).
const ROW_TEXT: usize = 256;
/// Most bytes `llm_summary` takes in a row, as JSON writes it.
const ROW_SUMMARY: usize = 1024;

impl AssetRecord {
    /// The row as `assets.jsonl` holds it: every list and free text cut to
    /// the caps above, so that whatever a project's files, a model or a
    /// previous index hold, a row stays under half a megabyte and within
    /// what the index's readers accept (`limits.line_kb`, 1024 by default).
    pub fn bounded(mut self) -> Self {
        if let Some(dependencies) = self.dependencies.as_mut().filter(|d| d.len() > ROW_DEPENDENCIES) {
            self.dependency_count = Some(dependencies.len());
            dependencies.truncate(ROW_DEPENDENCIES);
        }
        for list in [&mut self.filename_signals, &mut self.labels, &mut self.llm_tags] {
            bound(list);
        }
        let optional = [
            &mut self.llm_use_cases,
            &mut self.component_types,
            &mut self.shader_props,
            &mut self.animator_states,
            &mut self.child_names,
            &mut self.textures,
            &mut self.missing_scripts,
        ];
        for list in optional.into_iter().flatten() {
            bound(list);
        }
        for text in [&mut self.shader, &mut self.script_class].into_iter().flatten() {
            cut(text, ROW_TEXT);
        }
        cut(&mut self.llm_summary, ROW_SUMMARY);
        self
    }
}

/// A list cut to [`ROW_ITEMS`] items of at most [`ROW_TEXT`] bytes each.
fn bound(list: &mut Vec<String>) {
    list.truncate(ROW_ITEMS);
    for item in list {
        cut(item, ROW_TEXT);
    }
}

/// `text` cut on a character boundary to at most `max` bytes as JSON
/// writes it: a control character takes up to six.
fn cut(text: &mut String, max: usize) {
    let mut written = 0;
    for (at, c) in text.char_indices() {
        written += match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if c < ' ' => 6,
            c => c.len_utf8(),
        };
        if written > max {
            text.truncate(at);
            return;
        }
    }
}

/// Why `path` cannot be an asset row's path, if it cannot: a row names a
/// file of the project under `Assets/` or `Packages/`, relative, never
/// climbing out with `..` (an edited or shipped index is data; a row
/// `/etc/…` must not steer pick or build outside the project).
pub(crate) fn check_path(path: &str) -> Result<(), String> {
    let inside = path.strip_prefix("Assets/").or_else(|| path.strip_prefix("Packages/"));
    let why = match inside {
        _ if path.starts_with(['/', '\\']) || path.get(1..2) == Some(":") => "it is absolute",
        _ if path.contains('\0') => "it holds a NUL character",
        None => "it is not under Assets/ or Packages/",
        Some(rest) if rest.split(['/', '\\']).any(|part| part == "..") => "it climbs out with `..`",
        Some(rest) if rest.split(['/', '\\']).all(str::is_empty) => "it names no file",
        Some(_) => return Ok(()),
    };
    Err(format!("the path {path:?} is refused: {why}"))
}

/// Serde's reader of a row's path: [`check_path`], so every reader of
/// the index skips such a row as it skips any row it cannot read.
pub(crate) fn project_path<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let path = String::deserialize(deserializer)?;
    check_path(&path).map_err(serde::de::Error::custom)?;
    Ok(path)
}

/// One line of `packages.jsonl` (`schemas/package-record.schema.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PackageRecord {
    /// The package's id, as asset rows name it.
    pub package_id: String,
    /// Its display name.
    pub name: String,
    /// The folder it is rooted at.
    pub root: String,
    pub(crate) asset_count: usize,
    /// Asset type → count, sorted by type name.
    pub(crate) type_histogram: std::collections::BTreeMap<String, usize>,
    pub(crate) summary: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_path_is_a_project_file_under_assets_or_packages() {
        for ok in [
            "Assets/a.prefab",
            "Packages/com.x/b.mat",
            "Assets/.../c.png",
            "Assets/a..b/c",
        ] {
            assert_eq!(check_path(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("/etc/passwd.prefab", "absolute"),
            ("\\\\host\\x.prefab", "absolute"),
            ("C:/x.prefab", "absolute"),
            ("Assets/../../etc/x.prefab", "`..`"),
            ("Assets/a\\..\\..\\x", "`..`"),
            ("ProjectSettings/x.asset", "not under"),
            ("Assets", "not under"),
            ("Assets/", "names no file"),
            ("Assets/a\0.prefab", "NUL"),
        ] {
            let err = check_path(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
        let row = r#"{"guid":"a","path":"/etc/x.prefab","name":"x","type":"Prefab","labels":[],"llm_tags":[],"llm_summary":""}"#;
        let err = serde_json::from_str::<AssetRecord>(row).unwrap_err().to_string();
        assert!(err.contains("absolute"), "{err}");
    }

    #[test]
    fn a_bounded_row_keeps_a_count_of_its_references_and_fits_its_caps() {
        let guids: Vec<String> = (0..30_000).map(|i| format!("{i:032x}")).collect();
        let long = "\u{1}".repeat(10_000);
        let record = AssetRecord {
            guid: "f".repeat(32),
            path: "Assets/Big.prefab".into(),
            name: "Big".into(),
            asset_type: "Prefab".into(),
            type_subtype: None,
            filename_signals: vec![],
            labels: vec![long.clone(); 1000],
            llm_tags: vec!["tag".into(); 1000],
            llm_summary: long.clone(),
            size: Some(1),
            last_modified: None,
            package_id: None,
            dependencies: Some(guids),
            dependency_count: None,
            llm_use_cases: None,
            component_types: Some(vec![long.clone(); 1000]),
            shader_props: Some(vec![long.clone(); 1000]),
            animator_states: Some(vec![long.clone(); 1000]),
            child_names: Some(vec![long.clone(); 1000]),
            variant_of: None,
            shader: Some(long.clone()),
            textures: Some(vec![long.clone(); 1000]),
            script_class: Some(long),
            missing_scripts: Some(vec!["0".repeat(32); 1000]),
        }
        .bounded();
        assert_eq!(record.dependencies.as_ref().map(Vec::len), Some(ROW_DEPENDENCIES));
        assert_eq!(record.dependency_count, Some(30_000));
        assert_eq!(record.labels.len(), ROW_ITEMS);
        assert_eq!(
            record.labels[0].len(),
            ROW_TEXT / 6,
            "control characters count as JSON writes them"
        );
        let line = serde_json::to_string(&record).unwrap();
        assert!(line.len() < 512 * 1024, "{} bytes", line.len());
        let mut text = "ab\"cd".to_owned();
        cut(&mut text, 4);
        assert_eq!(text, "ab\"", "the quote takes two bytes");
    }
}
