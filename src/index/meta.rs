//! `.meta` files: a line scanner for the few fields the index needs.
//!
//! Unity writes `.meta` files as simple YAML, but real projects carry UTF-8
//! BOMs, CRLF line ends, importer-less files and labels in either list style.
//! A full YAML parse of 100,000 files would dominate the index time, and a
//! broken file must produce a warning, not abort the run, so this reads line
//! by line and keeps only what it recognises.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

/// What a `.meta` file says about its asset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    pub file_format_version: Option<u32>,
    /// 32 lower-case hex digits.
    pub guid: String,
    /// `folderAsset: yes`: the meta of a folder, which is not an asset.
    pub folder: bool,
    /// The importer block's name (`TextureImporter`, `ScriptedImporter`, ...);
    /// `None` for importer-less metas.
    pub importer: Option<String>,
    /// The importer settings asked for (first occurrence of each key, so the
    /// default settings win over per-platform overrides).
    pub settings: BTreeMap<String, String>,
    /// `mainObjectFileID` (NativeFormatImporter): the main object's class ID × 100000.
    pub main_object_file_id: Option<i64>,
    /// Asset labels in file order, without duplicates.
    pub labels: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetaError {
    #[error("no `guid:` line")]
    MissingGuid,
    #[error("guid `{0}` is not 32 hexadecimal digits")]
    BadGuid(String),
}

impl Meta {
    /// The Unity class ID of the main object, when the importer names it.
    pub fn main_class_id(&self) -> Option<u32> {
        let id = self.main_object_file_id?;
        (id > 0 && id % 100_000 == 0)
            .then(|| u32::try_from(id / 100_000).ok())
            .flatten()
    }
}

/// Whether `s` is a GUID in either case (32 hex digits): what a `.meta`
/// or a user may write, lowercased before use.
pub fn is_guid(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether `s` is a GUID exactly as Unity writes it: 32 lowercase hex
/// digits. References in Unity YAML and the search index's guid table take
/// only these.
pub fn is_written_guid(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A `.meta` file's bytes as text, with U+FFFD for what is not UTF-8:
/// `from_utf8_lossy` checks byte by byte, `from_utf8` a word at a time
/// while it meets ASCII (a scan reads every `.meta` of the project).
pub fn meta_text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Parse a `.meta` file's text, keeping the importer settings named in `wanted`.
pub fn parse_meta(text: &str, wanted: &BTreeSet<String>) -> Result<Meta, MetaError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut meta = Meta::default();
    let mut guid = None;
    let mut in_importer = false;
    // While inside a block-style `labels:` list: the indentation of its key.
    let mut labels_indent: Option<usize> = None;

    for raw in super::unity_yaml::lines(text) {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let content = line.trim_ascii_start();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let indent = line.len() - content.len();

        if let Some(key_indent) = labels_indent {
            // Block list items may sit at the key's indentation or deeper.
            if let Some(item) = content.strip_prefix("- ").or_else(|| (content == "-").then_some("")) {
                if indent >= key_indent {
                    push_label(&mut meta.labels, item);
                    continue;
                }
            }
            labels_indent = None;
        }

        let Some((key, value)) = split_key(content) else {
            continue;
        };
        if key == "labels" {
            if value.is_empty() {
                labels_indent = Some(indent);
            } else {
                flow_labels(value, &mut meta.labels);
            }
            continue;
        }

        if indent == 0 {
            in_importer = false;
            match key {
                "fileFormatVersion" => meta.file_format_version = value.parse().ok(),
                "guid" => guid = Some(value.to_owned()),
                "folderAsset" => meta.folder = value == "yes",
                _ if value.is_empty() && key.ends_with("Importer") => {
                    meta.importer = Some(key.to_owned());
                    in_importer = true;
                }
                _ => {}
            }
        } else if in_importer {
            if key == "mainObjectFileID" {
                meta.main_object_file_id = value.parse().ok();
            } else if !value.is_empty() && wanted.contains(key) && !meta.settings.contains_key(key) {
                meta.settings.insert(key.to_owned(), unquote(value).to_owned());
            }
        }
    }

    let guid = guid.ok_or(MetaError::MissingGuid)?;
    let guid = unquote(&guid);
    if !is_guid(guid) {
        return Err(MetaError::BadGuid(guid.to_owned()));
    }
    meta.guid = guid.to_ascii_lowercase();
    Ok(meta)
}

/// `key: value` (value trimmed, possibly empty); `None` for list items and
/// lines without a colon.
fn split_key(content: &str) -> Option<(&str, &str)> {
    if content.starts_with('-') {
        return None;
    }
    let (key, value) = content.split_once(':')?;
    Some((key.trim_ascii(), value.trim_ascii()))
}

/// `[a, b]` or a single scalar after `labels:`.
fn flow_labels(value: &str, labels: &mut Vec<String>) {
    let inner = value
        .strip_prefix('[')
        .and_then(|v| v.strip_suffix(']'))
        .unwrap_or(value);
    for item in inner.split(',') {
        push_label(labels, item);
    }
}

fn push_label(labels: &mut Vec<String>, item: &str) {
    let label = unquote(item.trim_ascii());
    if !label.is_empty() && !labels.iter().any(|l| l == label) {
        labels.push(label.to_owned());
    }
}

fn unquote(s: &str) -> &str {
    let s = s.trim_ascii();
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|v| v.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> BTreeSet<String> {
        ["textureType", "spriteMode", "loadType"].map(String::from).into()
    }

    const GUID: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn reads_texture_settings_and_first_occurrence_wins() {
        let text = format!(
            "fileFormatVersion: 2\nguid: {GUID}\nTextureImporter:\n  mipmaps:\n    enableMipMap: 0\n  \
             spriteMode: 1\n  textureType: 8\n  platformSettings:\n  - textureType: 0\n"
        );
        let meta = parse_meta(&text, &keys()).unwrap();
        assert_eq!(meta.file_format_version, Some(2));
        assert_eq!(meta.guid, GUID);
        assert_eq!(meta.importer.as_deref(), Some("TextureImporter"));
        assert_eq!(meta.settings.get("textureType").map(String::as_str), Some("8"));
        assert_eq!(meta.settings.get("spriteMode").map(String::as_str), Some("1"));
    }

    #[test]
    fn tolerates_bom_and_crlf() {
        let text = format!("\u{feff}fileFormatVersion: 2\r\nguid: {GUID}\r\nAudioImporter:\r\n  defaultSettings:\r\n    loadType: 2\r\n");
        let meta = parse_meta(&text, &keys()).unwrap();
        assert_eq!(meta.guid, GUID);
        assert_eq!(meta.importer.as_deref(), Some("AudioImporter"));
        assert_eq!(meta.settings.get("loadType").map(String::as_str), Some("2"));
    }

    #[test]
    fn importer_less_meta_is_still_an_asset() {
        let meta = parse_meta(&format!("fileFormatVersion: 2\nguid: {GUID}\n"), &keys()).unwrap();
        assert_eq!(meta.importer, None);
        assert!(!meta.folder);
    }

    #[test]
    fn labels_in_block_style_at_top_level() {
        let text = format!("fileFormatVersion: 2\nguid: {GUID}\nlabels:\n- Ground\n- Wall\ntimeCreated: 1\nTextureImporter:\n  textureType: 0\n");
        let meta = parse_meta(&text, &keys()).unwrap();
        assert_eq!(meta.labels, ["Ground", "Wall"]);
        assert_eq!(meta.settings.get("textureType").map(String::as_str), Some("0"));
    }

    #[test]
    fn labels_in_flow_style_inside_the_importer() {
        let text = format!("guid: {GUID}\nNativeFormatImporter:\n  labels: [Zombie, \"Enemy\", Zombie]\n  mainObjectFileID: 11400000\n");
        let meta = parse_meta(&text, &keys()).unwrap();
        assert_eq!(meta.labels, ["Zombie", "Enemy"]);
        assert_eq!(meta.main_class_id(), Some(114));
    }

    #[test]
    fn indented_block_labels_end_at_the_next_key() {
        let text = format!("guid: {GUID}\nDefaultImporter:\n  labels:\n  - a\n    - b\n  userData: x\n");
        let meta = parse_meta(&text, &keys()).unwrap();
        assert_eq!(meta.labels, ["a", "b"]);
    }

    #[test]
    fn folder_meta_is_flagged() {
        let meta = parse_meta(&format!("guid: {GUID}\nfolderAsset: yes\nDefaultImporter:\n"), &keys()).unwrap();
        assert!(meta.folder);
    }

    #[test]
    fn bad_and_missing_guids_are_errors() {
        assert_eq!(
            parse_meta("guid: 12345\n", &keys()),
            Err(MetaError::BadGuid("12345".into()))
        );
        assert_eq!(
            parse_meta("fileFormatVersion: 2\n", &keys()),
            Err(MetaError::MissingGuid)
        );
        let not_hex = "guid: 0123456789abcdef0123456789abcdeg\n";
        assert!(matches!(parse_meta(not_hex, &keys()), Err(MetaError::BadGuid(_))));
    }

    #[test]
    fn upper_case_guid_is_normalised() {
        let meta = parse_meta(&format!("guid: {}\n", GUID.to_uppercase()), &keys()).unwrap();
        assert_eq!(meta.guid, GUID);
    }
}
