//! The walk of a project's asset folders: every file and folder under
//! `Assets/` and `Packages/<name>/`, with each file's mtime and size.
//!
//! A no-op `index` is this walk and nothing else, so it is built for a
//! million files: folders are read in parallel (rayon), each file is
//! `stat`ed relative to its open folder (`DirEntry::metadata`, no path
//! lookup from the root), and relative paths grow from their parent's
//! instead of being cut from absolute ones.
//!
//! What Unity skips is skipped: dot-files and dot-folders, folders ending in
//! `~`, and the configured `ignore_paths`. Links are not followed (a linked
//! file is signed by what it links to). A name that is not UTF-8 is one
//! warning and nothing below it; a folder that cannot be read is a warning.

use std::fs;
use std::path::Path;
use std::sync::OnceLock;
use std::time::SystemTime;

use rayon::prelude::*;

use super::scan::{Warning, WarningKind};

/// A walked file or folder, project-relative with `/` separators.
pub(super) struct Entry {
    pub path: String,
    pub is_dir: bool,
    /// A regular file as its folder lists it (not a link, FIFO or device):
    /// found without following a link, so it is inside the project and may
    /// be opened by its path as it is (see `scan::open_listed`).
    pub regular: bool,
    /// A file's mtime (ns) and size, read during the walk.
    pub stat: Option<(u128, u64)>,
}

/// Threads that read the project's files and folders at once. Reading a
/// million small files from a cold disk waits on the disk, not the CPU:
/// a virtual disk answers many requests in flight far faster than the two a
/// two-core machine's default pool keeps waiting.
const IO_THREADS: usize = 16;

/// Run `work` (rayon inside) on the pool of [`IO_THREADS`] threads made for
/// reading the project; on the default pool when that cannot be started.
pub(super) fn on_io_threads<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    let pool = POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(IO_THREADS.max(rayon::current_num_threads()))
            .thread_name(|i| format!("index-io-{i}"))
            .build()
            .ok()
    });
    match pool {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

/// Every file and folder under `Assets/` and `Packages/<name>/`, sorted by
/// path, and a warning for each entry the walk could not read.
pub(super) fn walk(project: &Path, ignore_paths: &[String]) -> (Vec<Entry>, Vec<Warning>) {
    on_io_threads(|| walk_here(project, ignore_paths))
}

fn walk_here(project: &Path, ignore_paths: &[String]) -> (Vec<Entry>, Vec<Warning>) {
    let mut roots = vec!["Assets".to_owned()];
    if let Ok(read) = fs::read_dir(project.join("Packages")) {
        roots.extend(
            read.filter_map(Result::ok)
                .filter_map(|e| e.file_name().to_str().map(|name| format!("Packages/{name}"))),
        );
    }
    // A linked root is not followed either: it may lead out of the project.
    roots.retain(|root| fs::symlink_metadata(project.join(root)).is_ok_and(|m| m.is_dir()));
    let ignored: Vec<String> = ignore_paths
        .iter()
        .map(|p| p.trim_end_matches('/').to_owned())
        .collect();
    let walker = Walker { project, ignored };
    let (mut entries, mut problems) = roots
        .par_iter()
        .map(|root| walker.folder(root))
        .reduce(Found::default, Found::join)
        .into_parts();
    entries.par_sort_unstable_by(|a, b| a.path.cmp(&b.path));
    problems.sort_unstable_by(|a, b| (&a.path, &a.detail).cmp(&(&b.path, &b.detail)));
    (entries, problems)
}

/// What a part of the walk found.
#[derive(Default)]
struct Found {
    entries: Vec<Entry>,
    problems: Vec<Warning>,
}

impl Found {
    fn join(mut self, mut other: Found) -> Found {
        if self.entries.len() < other.entries.len() {
            std::mem::swap(&mut self, &mut other);
        }
        self.entries.append(&mut other.entries);
        self.problems.append(&mut other.problems);
        self
    }

    fn into_parts(self) -> (Vec<Entry>, Vec<Warning>) {
        (self.entries, self.problems)
    }
}

struct Walker<'a> {
    project: &'a Path,
    ignored: Vec<String>,
}

impl Walker<'_> {
    /// The entries below the folder `rel` (not the folder itself), its
    /// sub-folders read in parallel.
    fn folder(&self, rel: &str) -> Found {
        let mut found = Found::default();
        let read = match fs::read_dir(self.project.join(rel)) {
            Ok(read) => read,
            Err(e) => {
                found.problems.push(unreadable(rel, &e.to_string()));
                return found;
            }
        };
        let mut folders = Vec::new();
        for item in read {
            let item = match item {
                Ok(item) => item,
                Err(e) => {
                    found.problems.push(unreadable(rel, &e.to_string()));
                    continue;
                }
            };
            let file_name = item.file_name();
            let lossy = file_name.to_string_lossy();
            let file_type = match item.file_type() {
                Ok(t) => t,
                Err(e) => {
                    found
                        .problems
                        .push(unreadable(&format!("{rel}/{lossy}"), &e.to_string()));
                    continue;
                }
            };
            let is_dir = file_type.is_dir();
            if lossy.starts_with('.') || (is_dir && lossy.ends_with('~')) {
                continue;
            }
            let path = format!("{rel}/{lossy}");
            if self.is_ignored(&path) {
                continue;
            }
            if file_name.to_str().is_none() {
                // It would not open once read back lossily (nor import in Unity).
                found
                    .problems
                    .push(unreadable(&path, "the name is not UTF-8 text; rename it"));
                continue;
            }
            let stat = (!is_dir)
                .then(|| match file_type.is_symlink() {
                    true => fs::metadata(item.path()).ok(),
                    false => item.metadata().ok(),
                })
                .flatten()
                .map(|m| (mtime_nanos(&m), m.len()));
            if is_dir {
                folders.push(path.clone());
            }
            found.entries.push(Entry {
                path,
                is_dir,
                regular: file_type.is_file(),
                stat,
            });
        }
        folders
            .par_iter()
            .map(|folder| self.folder(folder))
            .reduce(Found::default, Found::join)
            .join(found)
    }

    fn is_ignored(&self, rel: &str) -> bool {
        self.ignored
            .iter()
            .any(|i| rel == i || rel.strip_prefix(i.as_str()).is_some_and(|rest| rest.starts_with('/')))
    }
}

fn unreadable(path: &str, detail: &str) -> Warning {
    Warning {
        kind: WarningKind::Unreadable,
        path: path.to_owned(),
        detail: detail.to_owned(),
    }
}

pub(super) fn mtime_nanos(meta: &fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(project: &Path, ignore: &[&str]) -> Vec<String> {
        let ignore: Vec<String> = ignore.iter().map(|s| (*s).to_owned()).collect();
        walk(project, &ignore).0.into_iter().map(|e| e.path).collect()
    }

    #[test]
    fn the_walk_skips_what_unity_skips_and_never_follows_a_linked_folder() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.txt"), "x").unwrap();
        let project = dir.path();
        for folder in [
            "Assets/A/B",
            "Assets/.git",
            "Assets/Docs~",
            "Assets/Plugins/Editor",
            "Packages/com.x",
        ] {
            fs::create_dir_all(project.join(folder)).unwrap();
        }
        for file in [
            "Assets/A/B/c.png",
            "Assets/.hidden",
            "Assets/Docs~/d.md",
            "Assets/Plugins/Editor/e.cs",
            "Packages/com.x/f.mat",
        ] {
            fs::write(project.join(file), "").unwrap();
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outside.path(), project.join("Assets/Linked")).unwrap();
            std::os::unix::fs::symlink(outside.path(), project.join("Packages/com.linked")).unwrap();
        }
        let mut expected = vec![
            "Assets/A",
            "Assets/A/B",
            "Assets/A/B/c.png",
            "Assets/Plugins",
            "Packages/com.x/f.mat",
        ];
        // A linked folder is an entry (signed by what it links to), never walked into.
        if cfg!(unix) {
            expected.push("Assets/Linked");
        }
        expected.sort();
        assert_eq!(paths(project, &["Assets/Plugins/Editor"]), expected);
    }
}
