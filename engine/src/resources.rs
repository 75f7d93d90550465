//! The files pipelines are made of — pipelines, prompts, schemas, data —
//! embedded in the binary and overridable file by file from a folder.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use include_dir::Dir;

/// One resource and where it came from.
#[derive(Debug, Clone)]
pub struct Resource {
    pub text: Cow<'static, str>,
    /// What messages call it: the override's path, or the embedded path.
    pub origin: String,
}

/// Embedded files with an optional override folder on top.
#[derive(Clone)]
pub struct Resources {
    embedded: &'static Dir<'static>,
    overrides: Option<PathBuf>,
}

impl Resources {
    pub fn new(embedded: &'static Dir<'static>, overrides: Option<PathBuf>) -> Self {
        Self { embedded, overrides }
    }

    /// The override folder, if any.
    pub fn overrides(&self) -> Option<&Path> {
        self.overrides.as_deref()
    }

    /// The file at `rel` (`pipelines/search.yaml`): the override if present, else embedded.
    pub fn get(&self, rel: &str) -> Option<Resource> {
        if let Some(dir) = &self.overrides {
            let p = dir.join(rel);
            if let Ok(text) = std::fs::read_to_string(&p) {
                return Some(Resource { text: Cow::Owned(text), origin: p.display().to_string() });
            }
        }
        let file = self.embedded.get_file(rel)?;
        let text = file.contents_utf8()?;
        Some(Resource { text: Cow::Borrowed(text), origin: rel.to_owned() })
    }

    /// Relative paths of every file under `folder`, embedded and overridden, sorted.
    pub fn list(&self, folder: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(dir) = self.embedded.get_dir(folder) {
            collect_embedded(dir, &mut out);
        }
        if let Some(root) = &self.overrides {
            collect_disk(root, &root.join(folder), &mut out);
        }
        out.sort();
        out.dedup();
        out
    }

    /// Every embedded file, for `eject`.
    pub fn embedded_files(&self) -> Vec<(&'static str, &'static [u8])> {
        let mut out = Vec::new();
        collect_bytes(self.embedded, &mut out);
        out.sort_by_key(|(p, _)| *p);
        out
    }
}

fn collect_embedded(dir: &'static Dir<'static>, out: &mut Vec<String>) {
    for f in dir.files() {
        out.push(f.path().to_string_lossy().replace('\\', "/"));
    }
    for d in dir.dirs() {
        collect_embedded(d, out);
    }
}

fn collect_bytes(dir: &'static Dir<'static>, out: &mut Vec<(&'static str, &'static [u8])>) {
    for f in dir.files() {
        if let Some(p) = f.path().to_str() {
            out.push((p, f.contents()));
        }
    }
    for d in dir.dirs() {
        collect_bytes(d, out);
    }
}

fn collect_disk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_disk(root, &p, out);
        } else if let Ok(rel) = p.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}
