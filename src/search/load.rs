//! Reading the index files search needs: the manifest version, the
//! packages, and asset rows (all, or those of chosen packages).
//!
//! Rows are decoded straight into [`AssetRow`] line by line; a row that
//! does not decode is skipped (the indexer and `doctor` own validation).

use std::collections::HashSet;
use std::io::BufRead;
use std::path::Path;

use anyhow::Context as _;

use super::records::{AssetRow, PackageRow};

pub const ASSETS_FILE: &str = "assets.jsonl";
pub const PACKAGES_FILE: &str = "packages.jsonl";
pub const MANIFEST_FILE: &str = "manifest.json";

/// `manifest.json::version`, if the manifest exists and has one.
pub fn manifest_version(index_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(index_dir.join(MANIFEST_FILE)).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    manifest["version"].as_str().map(str::to_owned)
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

/// Asset rows, only those of `packages` when given. A row names its package
/// from the normal tier on; below it, a row belongs to the package whose
/// root is the longest prefix of its path (the indexer's own grouping).
pub fn read_assets(index_dir: &Path, packages: Option<&HashSet<String>>) -> anyhow::Result<Vec<AssetRow>> {
    let roots: Vec<(String, String)> = match packages {
        Some(_) => read_packages(index_dir)?
            .into_iter()
            .map(|p| (format!("{}/", p.root.trim_end_matches('/')), p.package_id))
            .collect(),
        None => vec![],
    };
    let package_of = |row: &AssetRow| -> Option<String> {
        row.package_id.clone().or_else(|| {
            roots
                .iter()
                .filter(|(root, _)| row.path.starts_with(root.as_str()))
                .max_by_key(|(root, _)| root.len())
                .map(|(_, id)| id.clone())
        })
    };
    let mut out = Vec::new();
    for_each_row(&index_dir.join(ASSETS_FILE), |row: AssetRow| {
        let wanted = packages.is_none_or(|set| package_of(&row).is_some_and(|p| set.contains(&p)));
        if wanted {
            out.push(row);
        }
    })?;
    Ok(out)
}

/// How many asset rows the index holds (non-blank lines).
pub fn count_assets(index_dir: &Path) -> anyhow::Result<usize> {
    let path = index_dir.join(ASSETS_FILE);
    match std::fs::File::open(&path) {
        Ok(file) => {
            let mut n = 0;
            for line in std::io::BufReader::new(file).lines() {
                n += usize::from(
                    !line
                        .with_context(|| format!("cannot read {}", path.display()))?
                        .trim()
                        .is_empty(),
                );
            }
            Ok(n)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
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
        assert_eq!(read_assets(dir.path(), None).unwrap().len(), 2);
        let only_p = HashSet::from(["p".to_owned()]);
        assert_eq!(read_assets(dir.path(), Some(&only_p)).unwrap()[0].guid, "a");
        assert_eq!(count_assets(dir.path()).unwrap(), 3);
        assert_eq!(manifest_version(dir.path()).as_deref(), Some("v1.2"));
        assert!(read_packages(dir.path()).unwrap().is_empty());
    }
}
