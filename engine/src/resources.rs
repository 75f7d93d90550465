//! The files pipelines are made of — pipelines, prompts, schemas, data —
//! embedded in the binary and overridable file by file from a folder.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use include_dir::Dir;

/// One resource and where it came from.
#[derive(Debug, Clone)]
pub struct Resource {
    /// The file's contents.
    pub text: Cow<'static, str>,
    /// What messages call it: the override's path, or the embedded path.
    pub origin: String,
}

/// A resource override is read whole; none of the embedded files comes near this.
const RESOURCE_LIMIT: u64 = 16 * 1024 * 1024;

/// An override that exists but cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{origin}: cannot use this override: {why} (fix or delete it; the embedded copy is used only when no override exists)")]
pub struct ResourceError {
    /// The override's path (or the relative path it was asked by).
    pub origin: String,
    /// What is wrong with it.
    pub why: String,
}

/// Embedded folders (each under its name: `pipelines`, `prompts`, ...) with
/// an optional override folder on top.
#[derive(Clone)]
pub struct Resources {
    embedded: Vec<(&'static str, &'static Dir<'static>)>,
    overrides: Option<PathBuf>,
    /// Named in the message of an override over its size limit.
    product: crate::Product,
}

impl Resources {
    /// The `embedded` folders, each under its name, with `overrides` (a folder) on top.
    pub fn new(embedded: &[(&'static str, &'static Dir<'static>)], overrides: Option<PathBuf>) -> Self {
        Self {
            embedded: embedded.to_vec(),
            overrides,
            product: crate::Product::NEUTRAL,
        }
    }

    /// The same files, for `product`: its settings file is named where an
    /// override's size limit is refused.
    pub fn for_product(mut self, product: crate::Product) -> Self {
        self.product = product;
        self
    }

    /// Files from a folder only (tests and tools with no embedded set).
    pub fn from_dir(dir: PathBuf) -> Self {
        Self {
            embedded: vec![],
            overrides: Some(dir),
            product: crate::Product::NEUTRAL,
        }
    }

    /// The override folder, if any.
    pub fn overrides(&self) -> Option<&Path> {
        self.overrides.as_deref()
    }

    /// The file at `rel` (`pipelines/search.yaml`): the override if present,
    /// else embedded. An override that exists but cannot be used (unreadable,
    /// not UTF-8, a folder, a FIFO, a link out of the override folder) is an
    /// error, never a silent fall back to the embedded copy.
    pub fn get(&self, rel: &str) -> Result<Option<Resource>, ResourceError> {
        let fail = |origin: String, why: String| ResourceError { origin, why };
        if let Some(dir) = &self.overrides {
            let p = crate::io::confine(dir, rel).map_err(|e| fail(rel.to_owned(), e.to_string()))?;
            match p.symlink_metadata() {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                _ => {
                    let text = crate::io::read_text_limited(&p, RESOURCE_LIMIT, crate::io::FILE_KEY, &self.product)
                        .map_err(|e| fail(p.display().to_string(), e.to_string()))?;
                    return Ok(Some(Resource {
                        text: Cow::Owned(text),
                        origin: p.display().to_string(),
                    }));
                }
            }
        }
        let Some((folder, rest)) = rel.split_once('/') else {
            return Ok(None);
        };
        let Some((_, dir)) = self.embedded.iter().find(|(name, _)| *name == folder) else {
            return Ok(None);
        };
        Ok(dir.get_file(rest).and_then(|f| f.contents_utf8()).map(|text| Resource {
            text: Cow::Borrowed(text),
            origin: rel.to_owned(),
        }))
    }

    /// Relative paths of every file under `folder`, embedded and overridden, sorted.
    pub fn list(&self, folder: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .embedded_files()
            .into_iter()
            .map(|(p, _)| p)
            .filter(|p| p.starts_with(&format!("{folder}/")))
            .collect();
        if let Some(root) = &self.overrides {
            collect_disk(root, &root.join(folder), &mut out);
        }
        out.sort();
        out.dedup();
        out
    }

    /// Every embedded file with its relative path, for `eject`.
    pub fn embedded_files(&self) -> Vec<(String, &'static [u8])> {
        let mut out = Vec::new();
        for (name, dir) in &self.embedded {
            collect_embedded(name, dir, &mut out);
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

fn collect_embedded(prefix: &str, dir: &'static Dir<'static>, out: &mut Vec<(String, &'static [u8])>) {
    for f in dir.files() {
        out.push((
            format!("{prefix}/{}", f.path().to_string_lossy().replace('\\', "/")),
            f.contents(),
        ));
    }
    for d in dir.dirs() {
        collect_embedded(prefix, d, out);
    }
}

fn collect_disk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        // The entry's own type: a symlinked folder is not walked (no loops, no escape).
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            collect_disk(root, &p, out);
        } else if let Ok(rel) = p.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}
