//! The walk of a project's asset folders: every file and folder under
//! `Assets/` and `Packages/<name>/`, with each file's mtime and size.
//!
//! A no-op `index` is this walk and nothing else, so it is built for a
//! million files: folders are read in parallel (rayon), each one as
//! [`super::folder`] reads it (names and stats relative to the open folder),
//! and relative paths grow from their parent's instead of being cut from
//! absolute ones. Each folder hashes what it holds into a digest its parent
//! hashes in turn, so the no-op check
//! ([`tree_digest`]) makes no path string, sorts nothing but a folder's
//! names, and keeps no entry.
//!
//! What Unity skips is skipped: dot-files and dot-folders, folders ending in
//! `~`, and the configured `ignore_paths`. Links are not followed (a linked
//! file is signed by what it links to). A name that is not UTF-8 is one
//! warning and nothing below it; a folder that cannot be read is a warning.

use std::cmp::Ordering;
use std::fs;
use std::path::Path;
use std::sync::OnceLock;
use std::time::SystemTime;

use rayon::prelude::*;
use sha2::{Digest as _, Sha256};

use super::folder::{Folder, Kind};
use super::scan::{Warning, WarningKind};

/// A walked file or folder, project-relative with `/` separators.
pub(super) struct Entry {
    pub path: String,
    pub is_dir: bool,
    /// A regular file, not a link: it may be opened without confining its
    /// path again ([`super::open`]).
    pub regular: bool,
    /// A file's mtime (ns) and size, read during the walk.
    pub stat: Option<(u128, u64)>,
}

/// What a walk found: its entries (sorted by path; none for
/// [`tree_digest`]), a warning for each entry it could not read, and the
/// digest of the tree.
pub(super) struct Walked {
    pub entries: Vec<Entry>,
    pub problems: Vec<Warning>,
    /// A SHA-256 over every walked name with its kind, mtime and size,
    /// folder by folder (each folder's digest in its parent's), so a walk
    /// that keeps no entries gives the digest a walk that keeps them does.
    pub digest: [u8; 32],
    /// The tree holds a link, symbolic or hard (a file with more than one
    /// name): its target, or its other name, may change where no watch
    /// sees it ([`super::watch`]).
    pub linked: bool,
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
/// path, a warning for each entry the walk could not read, and the tree's digest.
pub(super) fn walk(project: &Path, ignore_paths: &[String]) -> Walked {
    on_io_threads(|| {
        let mut walked = Walker::new(project, ignore_paths, true).walk();
        walked.entries.par_sort_unstable_by(|a, b| a.path.cmp(&b.path));
        walked
    })
}

/// [`walk`]'s digest and warnings alone, without a path string per entry:
/// what a no-op `index` compares with the last run's.
pub(super) fn tree_digest(project: &Path, ignore_paths: &[String]) -> Walked {
    Walker::new(project, ignore_paths, false).walk()
}

/// What a part of the walk found.
#[derive(Default)]
struct Found {
    entries: Vec<Entry>,
    problems: Vec<Warning>,
    linked: bool,
}

impl Found {
    fn join(mut self, mut other: Found) -> Found {
        if self.entries.len() < other.entries.len() {
            std::mem::swap(&mut self, &mut other);
        }
        self.entries.append(&mut other.entries);
        self.problems.append(&mut other.problems);
        self.linked |= other.linked;
        self
    }
}

/// A name the walk keeps from a folder's listing.
struct Child {
    name: String,
    kind: Kind,
    stat: Option<(u128, u64)>,
}

impl Child {
    fn is_dir(&self) -> bool {
        self.kind == Kind::Folder
    }
}

struct Walker<'a> {
    project: &'a Path,
    ignored: Vec<String>,
    /// Keep an [`Entry`] per file and folder (a scan), or only hash them.
    keep_entries: bool,
}

impl<'a> Walker<'a> {
    fn new(project: &'a Path, ignore_paths: &[String], keep_entries: bool) -> Self {
        let ignored = ignore_paths
            .iter()
            .map(|p| p.trim_end_matches('/').to_owned())
            .collect();
        Walker {
            project,
            ignored,
            keep_entries,
        }
    }

    fn walk(&self) -> Walked {
        // A linked root is not followed either: it may lead out of the project.
        let mut roots = Vec::new();
        if fs::symlink_metadata(self.project.join("Assets")).is_ok_and(|m| m.is_dir()) {
            roots.push("Assets".to_owned());
        }
        let packages = Folder::open(self.project, "Packages").and_then(|folder| folder.list());
        roots.extend(
            packages
                .unwrap_or_default()
                .into_iter()
                .filter(|package| package.kind == Kind::Folder)
                .filter_map(|package| package.name.ok())
                .map(|name| format!("Packages/{name}")),
        );
        roots.sort_unstable();
        let walked: Vec<(Found, [u8; 32])> = roots
            .par_iter()
            .map(|root| self.folder(root, Folder::open(self.project, root)))
            .collect();
        let mut hasher = Sha256::new();
        let mut found = Found::default();
        for (root, (part, digest)) in roots.iter().zip(walked) {
            hash_name(&mut hasher, root);
            hasher.update(digest);
            found = found.join(part);
        }
        found
            .problems
            .sort_unstable_by(|a, b| (&a.path, &a.detail).cmp(&(&b.path, &b.detail)));
        Walked {
            entries: found.entries,
            problems: found.problems,
            digest: hasher.finalize().into(),
            linked: found.linked,
        }
    }

    /// The entries below the folder `rel` (not the folder itself), its
    /// sub-folders read in parallel, and its digest.
    fn folder(&self, rel: &str, opened: std::io::Result<Folder>) -> (Found, [u8; 32]) {
        let mut found = Found::default();
        let (folder, listed) = match opened.and_then(|folder| folder.list().map(|listed| (folder, listed))) {
            Ok(read) => read,
            Err(e) => {
                found.problems.push(unreadable(rel, &e.to_string()));
                return (found, Sha256::digest(b"unreadable").into());
            }
        };
        let mut children = Vec::new();
        for item in listed {
            let is_dir = item.kind == Kind::Folder;
            let shown = item.name.as_ref().unwrap_or_else(|lossy| lossy);
            if shown.starts_with('.') || (is_dir && shown.ends_with('~')) || self.is_ignored(rel, shown) {
                continue;
            }
            let name = match item.name {
                Ok(name) => name,
                // It would not open once read back lossily (nor import in Unity).
                Err(lossy) => {
                    found.problems.push(unreadable(
                        &format!("{rel}/{lossy}"),
                        "the name is not UTF-8 text; rename it",
                    ));
                    continue;
                }
            };
            found.linked |= item.kind == Kind::Link || item.hard_linked;
            children.push(Child {
                name,
                kind: item.kind,
                stat: item.stat,
            });
        }
        let below: Vec<(Found, [u8; 32])> = children
            .par_iter()
            .filter(|c| c.is_dir())
            .map(|c| self.folder(&format!("{rel}/{}", c.name), folder.sub(&c.name)))
            .collect();
        let digest = folder_digest(&children, &below);
        if self.keep_entries {
            found.entries.extend(children.into_iter().map(|c| Entry {
                path: format!("{rel}/{}", c.name),
                is_dir: c.is_dir(),
                regular: c.kind == Kind::File,
                stat: c.stat,
            }));
        }
        let found = below.into_iter().fold(found, |found, (part, _)| found.join(part));
        (found, digest)
    }

    fn is_ignored(&self, folder: &str, name: &str) -> bool {
        self.ignored.iter().any(|i| {
            i.strip_prefix(folder)
                .and_then(|rest| rest.strip_prefix('/'))
                .and_then(|rest| rest.strip_prefix(name))
                .is_some_and(|rest| rest.is_empty())
                || folder
                    .strip_prefix(i.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }
}

/// A folder's digest: each child's name, kind, mtime and size, and each
/// sub-folder's digest, in name order.
fn folder_digest(children: &[Child], below: &[(Found, [u8; 32])]) -> [u8; 32] {
    let mut order: Vec<usize> = (0..children.len()).collect();
    order.sort_unstable_by(|&a, &b| by_name(&children[a].name, &children[b].name));
    let mut hasher = Sha256::new();
    let mut sub_folders = below.iter();
    // Sub-folders were walked in `children` order.
    let mut digests: Vec<Option<&[u8; 32]>> = children
        .iter()
        .map(|c| c.is_dir().then(|| sub_folders.next().map(|(_, d)| d)).flatten())
        .collect();
    for i in order {
        let child = &children[i];
        hash_name(&mut hasher, &child.name);
        let (mtime, len) = child.stat.unwrap_or_default();
        hasher.update([u8::from(child.is_dir())]);
        hasher.update(mtime.to_le_bytes());
        hasher.update(len.to_le_bytes());
        if let Some(digest) = digests[i].take() {
            hasher.update(digest);
        }
    }
    hasher.finalize().into()
}

fn by_name(a: &str, b: &str) -> Ordering {
    a.as_bytes().cmp(b.as_bytes())
}

/// A length-prefixed name: no two lists of names hash alike.
fn hash_name(hasher: &mut Sha256, name: &str) {
    hasher.update((name.len() as u64).to_le_bytes());
    hasher.update(name.as_bytes());
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
        walk(project, &ignore).entries.into_iter().map(|e| e.path).collect()
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

    /// The no-op check's digest is the scan's, and moves with any change a
    /// scan would see: a file's bytes, a new file, a rename, a new folder.
    #[test]
    fn the_tree_digest_is_the_walks_and_sees_every_change() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        for file in [
            "Assets/A/x.png",
            "Assets/A.png",
            "Assets/B/C/y.mat",
            "Packages/com.x/z.cs",
        ] {
            fs::create_dir_all(project.join(file).parent().unwrap()).unwrap();
            fs::write(project.join(file), "1").unwrap();
        }
        let ignore = ["Assets/B/C".to_owned()];
        let digest = || {
            let digest = tree_digest(project, &ignore).digest;
            assert_eq!(walk(project, &ignore).digest, digest);
            digest
        };
        let mut seen = vec![digest()];
        let mut changed = |what: &str| {
            let now = digest();
            assert!(!seen.contains(&now), "{what} unseen");
            seen.push(now);
        };
        fs::write(project.join("Assets/A/x.png"), "22").unwrap();
        changed("a file's bytes");
        fs::write(project.join("Packages/com.x/new.cs"), "").unwrap();
        changed("a new file");
        fs::rename(project.join("Assets/A.png"), project.join("Assets/A2.png")).unwrap();
        changed("a rename");
        fs::create_dir_all(project.join("Assets/D")).unwrap();
        changed("a new folder");
        let before = digest();
        fs::write(project.join("Assets/B/C/y.mat"), "ignored").unwrap();
        assert_eq!(digest(), before, "an ignored path changes nothing");
    }
}
