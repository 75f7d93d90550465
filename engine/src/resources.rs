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

/// Embedded folders (each under its name: `pipelines`, `prompts`, ...) with
/// an optional override folder on top.
#[derive(Clone)]
pub struct Resources {
    embedded: Vec<(&'static str, &'static Dir<'static>)>,
    overrides: Option<PathBuf>,
}

impl Resources {
    pub fn new(embedded: &[(&'static str, &'static Dir<'static>)], overrides: Option<PathBuf>) -> Self {
        Self {
            embedded: embedded.to_vec(),
            overrides,
        }
    }

    /// Files from a folder only (tests and tools with no embedded set).
    pub fn from_dir(dir: PathBuf) -> Self {
        Self {
            embedded: vec![],
            overrides: Some(dir),
        }
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
                return Some(Resource {
                    text: Cow::Owned(text),
                    origin: p.display().to_string(),
                });
            }
        }
        let (folder, rest) = rel.split_once('/')?;
        let (_, dir) = self.embedded.iter().find(|(name, _)| *name == folder)?;
        let text = dir.get_file(rest)?.contents_utf8()?;
        Some(Resource {
            text: Cow::Borrowed(text),
            origin: rel.to_owned(),
        })
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
        if p.is_dir() {
            collect_disk(root, &p, out);
        } else if let Ok(rel) = p.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}
