//! Reading the index files search needs: the manifest version, the
//! packages, and asset rows (all, or those of chosen packages).
//!
//! Rows are decoded straight into [`AssetRow`] line by line; a row that
//! does not decode is skipped (the indexer and `doctor` own validation).
//! Rows handed to the ranking stages stay the index's own JSONL lines
//! ([`read_asset_lines`]): a string is cheap to pass between stages, the
//! ranker decodes only what it scores, and a model is shown the same line.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::path::Path;

use anyhow::Context as _;

use super::records::{AssetRow, PackageRow};
use super::text::{for_each_part, Scratch};

pub const ASSETS_FILE: &str = "assets.jsonl";
pub const PACKAGES_FILE: &str = "packages.jsonl";
pub const MANIFEST_FILE: &str = "manifest.json";

/// `manifest.json::version`, if the manifest exists and has one.
pub fn manifest_version(index_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(index_dir.join(MANIFEST_FILE)).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    manifest["version"].as_str().map(str::to_owned)
}

/// Whether `guid` is a row of `assets.jsonl`.
pub fn indexed_guid(index_dir: &Path, guid: &str) -> anyhow::Result<bool> {
    #[derive(serde::Deserialize)]
    struct Guid {
        guid: String,
    }
    let mut found = false;
    for_each_row(&index_dir.join(ASSETS_FILE), |row: Guid| found |= row.guid == guid)?;
    Ok(found)
}

fn for_each_row<T: serde::de::DeserializeOwned>(path: &Path, mut f: impl FnMut(T)) -> anyhow::Result<()> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    for line in std::io::BufReader::new(file).lines() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        if let Ok(row) = serde_json::from_str(line.trim_start_matches('\u{feff}')) {
            f(row);
        }
    }
    Ok(())
}

pub fn read_packages(index_dir: &Path) -> anyhow::Result<Vec<PackageRow>> {
    let mut out = Vec::new();
    for_each_row(&index_dir.join(PACKAGES_FILE), |row| out.push(row))?;
    Ok(out)
}

/// Which package an asset row belongs to. A row names its package from the
/// normal tier on; below it, a row belongs to the package whose root is the
/// longest prefix of its path (the indexer's own grouping).
struct PackageOf {
    /// `(root with a trailing slash, package_id)`.
    roots: Vec<(String, String)>,
}

impl PackageOf {
    fn new(packages: &[PackageRow]) -> Self {
        Self {
            roots: packages
                .iter()
                .map(|p| (format!("{}/", p.root.trim_end_matches('/')), p.package_id.clone()))
                .collect(),
        }
    }

    fn get<'a>(&'a self, row: &'a AssetRow) -> Option<&'a str> {
        row.package_id.as_deref().or_else(|| {
            self.roots
                .iter()
                .filter(|(root, _)| row.path.starts_with(root.as_str()))
                .max_by_key(|(root, _)| root.len())
                .map(|(_, id)| id.as_str())
        })
    }
}

/// The text of `assets.jsonl` (empty when there is none).
fn read_assets_text(index_dir: &Path) -> anyhow::Result<String> {
    let path = index_dir.join(ASSETS_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// The non-blank lines of `assets.jsonl`, without a byte-order mark.
fn row_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(|line| line.trim_start_matches('\u{feff}'))
        .filter(|line| !line.trim().is_empty())
}

/// `manifest.json::schema_tier` (the index depth), if the manifest has one.
fn manifest_tier(index_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(index_dir.join(MANIFEST_FILE)).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    manifest["schema_tier"].as_str().map(str::to_owned)
}

/// Asset rows as JSONL lines holding what search reads: all of them, or,
/// when `packages` is given, the decodable rows of those packages. A
/// minimal-depth row holds nothing else, so its line is passed on unread;
/// a deeper row is written back as an [`AssetRow`], without the fields
/// search never reads (dependencies, size, times) that would only cost a
/// model tokens.
pub fn read_asset_lines(index_dir: &Path, packages: Option<&HashSet<String>>) -> anyhow::Result<Vec<String>> {
    let text = read_assets_text(index_dir)?;
    let verbatim = manifest_tier(index_dir).is_none_or(|tier| tier == "minimal");
    if verbatim && packages.is_none() {
        return Ok(row_lines(&text).map(str::to_owned).collect());
    }
    let package_of = PackageOf::new(&match packages {
        Some(_) => read_packages(index_dir)?,
        None => vec![],
    });
    let mut out = Vec::new();
    for line in row_lines(&text) {
        let Ok(row) = serde_json::from_str::<AssetRow>(line) else {
            continue;
        };
        if packages.is_some_and(|set| !package_of.get(&row).is_some_and(|p| set.contains(p))) {
            continue;
        }
        out.push(if verbatim {
            line.to_owned()
        } else {
            serde_json::to_string(&row)?
        });
    }
    Ok(out)
}

/// The paths of those of `guids` the index holds. A line is decoded only
/// when its guid is wanted (or when it does not start the way the indexer
/// writes rows), so checking a few candidates against a large index costs
/// one pass over its text.
pub fn indexed_paths(index_dir: &Path, guids: &HashSet<&str>) -> anyhow::Result<HashMap<String, String>> {
    const HEAD: &str = "{\"guid\":\"";
    let text = read_assets_text(index_dir)?;
    let mut found = HashMap::new();
    for line in row_lines(&text) {
        let wanted = match line.strip_prefix(HEAD).and_then(|rest| rest.split_once('"')) {
            Some((guid, _)) => guids.contains(guid),
            None => true,
        };
        if let Some(row) = wanted.then(|| serde_json::from_str::<AssetRow>(line).ok()).flatten() {
            if guids.contains(row.guid.as_str()) {
                found.insert(row.guid, row.path);
            }
        }
    }
    Ok(found)
}

/// The packages, each with the `words_per_package` words most of its
/// assets use in their name, type, folders, tags, labels and filename
/// signals ([`PackageRow::asset_vocabulary`]; ties in alphabetical order).
/// Summaries are left out: their sentence words would crowd the list.
pub fn read_packages_with_vocabulary(index_dir: &Path, words_per_package: usize) -> anyhow::Result<Vec<PackageRow>> {
    let mut packages = read_packages(index_dir)?;
    let package_of = PackageOf::new(&packages);
    let position: HashMap<&str, usize> = packages
        .iter()
        .enumerate()
        .map(|(i, p)| (p.package_id.as_str(), i))
        .collect();
    // Per package: word → how many of its assets use it.
    let mut counts: Vec<HashMap<String, u32>> = vec![HashMap::new(); packages.len()];
    let mut scratch = Scratch::default();
    let mut seen: HashSet<String> = HashSet::new();
    for_each_row(&index_dir.join(ASSETS_FILE), |row: AssetRow| {
        let Some(&at) = package_of.get(&row).and_then(|id| position.get(id)) else {
            return;
        };
        seen.clear();
        let folders = row.path.rsplit_once('/').map_or("", |(dirs, _)| dirs);
        let texts = [row.name.as_str(), row.kind.as_str(), folders]
            .into_iter()
            .chain(row.type_subtype.as_deref())
            .chain(row.llm_tags.iter().map(String::as_str))
            .chain(row.labels.iter().map(String::as_str))
            .chain(row.filename_signals.iter().map(String::as_str));
        for text in texts {
            for_each_part(text, &mut scratch, |word| {
                if !seen.contains(word) {
                    seen.insert(word.to_owned());
                }
            });
        }
        for word in seen.drain() {
            *counts[at].entry(word).or_default() += 1;
        }
    })?;
    for (package, words) in packages.iter_mut().zip(counts) {
        let mut words: Vec<(String, u32)> = words.into_iter().collect();
        words.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        package.asset_vocabulary = words.into_iter().take(words_per_package).map(|(w, _)| w).collect();
    }
    Ok(packages)
}

/// How many asset rows the index holds (non-blank lines).
pub fn count_assets(index_dir: &Path) -> anyhow::Result<usize> {
    Ok(row_lines(&read_assets_text(index_dir)?).count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rows_by_package_and_skips_bad_lines() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(ASSETS_FILE),
            "{\"guid\":\"a\",\"path\":\"A\",\"package_id\":\"p\"}\nnot json\n{\"guid\":\"b\",\"path\":\"B\",\"package_id\":\"q\"}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join(MANIFEST_FILE), "{\"version\":\"v1.2\"}").unwrap();
        assert_eq!(
            read_asset_lines(dir.path(), None).unwrap().len(),
            3,
            "every line, unread"
        );
        let only_p = HashSet::from(["p".to_owned()]);
        let lines = read_asset_lines(dir.path(), Some(&only_p)).unwrap();
        assert_eq!(lines, ["{\"guid\":\"a\",\"path\":\"A\",\"package_id\":\"p\"}"]);
        assert_eq!(count_assets(dir.path()).unwrap(), 3);
        let paths = indexed_paths(dir.path(), &HashSet::from(["b", "zzz"])).unwrap();
        assert_eq!(paths, HashMap::from([("b".to_owned(), "B".to_owned())]));

        // Deeper rows lose what search never reads.
        std::fs::write(
            dir.path().join(ASSETS_FILE),
            "{\"guid\":\"a\",\"path\":\"A\",\"dependencies\":[\"b\"],\"size\":3,\"component_types\":[\"Canvas\"]}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join(MANIFEST_FILE),
            "{\"version\":\"v2.0\",\"schema_tier\":\"rich\"}",
        )
        .unwrap();
        let lines = read_asset_lines(dir.path(), None).unwrap();
        assert!(
            lines[0].contains("Canvas") && !lines[0].contains("dependencies") && !lines[0].contains("size"),
            "{lines:?}"
        );
        assert_eq!(manifest_version(dir.path()).as_deref(), Some("v2.0"));
        assert!(read_packages(dir.path()).unwrap().is_empty());
    }

    #[test]
    fn package_vocabulary_comes_from_its_assets_most_used_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(PACKAGES_FILE),
            "{\"package_id\":\"audio\",\"root\":\"Assets/Audio\",\"summary\":\"sfx\"}\n\
             {\"package_id\":\"ui\",\"root\":\"Assets/UI\"}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join(ASSETS_FILE),
            "{\"guid\":\"a\",\"path\":\"Assets/Audio/Music/Main_Theme.ogg\",\"name\":\"Main_Theme\",\"llm_tags\":[\"music\"],\"type_subtype\":\"AudioClip/music\"}\n\
             {\"guid\":\"b\",\"path\":\"Assets/Audio/Music/Battle.ogg\",\"name\":\"Battle\",\"llm_tags\":[\"music\",\"loop\"]}\n\
             {\"guid\":\"c\",\"path\":\"Assets/UI/Button.png\",\"name\":\"Button\",\"package_id\":\"ui\"}\n",
        )
        .unwrap();
        let packages = read_packages_with_vocabulary(dir.path(), 3).unwrap();
        assert_eq!(packages[0].asset_vocabulary, ["assets", "audio", "music"]);
        assert_eq!(packages[1].asset_vocabulary, ["assets", "button", "ui"]);
    }
}
