//! One folder of the project as the walk reads it: its names, each with its
//! kind, and each file's mtime and size.
//!
//! A no-op `index` is a `stat` of every file, so how a folder is read is
//! most of its cost. On Linux an open folder answers everything relative to
//! itself: its names come from `getdents64` into one buffer, each file is
//! `statx`ed by name from the folder, and a sub-folder is opened from it
//! without following a link, so no path is looked up from the root and no
//! name is copied but the one kept. Elsewhere std's `read_dir` does the
//! same work portably (on Windows its listing carries the stats).

/// What a name in a folder is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    Folder,
    /// A regular file.
    File,
    /// A symbolic link: listed, signed by what it links to, never walked into.
    Link,
    /// Anything else, or a name whose kind could not be read.
    Other,
}

/// A name read in a folder.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Listed {
    /// The name; its lossy form when it is not UTF-8.
    pub name: Result<String, String>,
    pub kind: Kind,
    /// A non-folder's mtime (ns since the epoch) and size; a link's are its
    /// target's. `None` when they could not be read.
    pub stat: Option<(u128, u64)>,
    /// A file with more than one name (a hard link): it can be rewritten
    /// through another, perhaps outside the project.
    pub hard_linked: bool,
}

#[cfg(target_os = "linux")]
pub(super) use linux::Folder;
#[cfg(not(target_os = "linux"))]
pub(super) use portable::Folder;

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::CStr;
    use std::io;
    use std::os::fd::OwnedFd;
    use std::path::Path;

    use rustix::fs::{openat, statx, AtFlags, FileType, Mode, OFlags, RawDir, Statx, StatxFlags};

    use super::{Kind, Listed};

    /// An open folder.
    pub(in crate::index) struct Folder(OwnedFd);

    const OPEN: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);

    /// What a file's signature needs, its kind and its number of names.
    const STAT: StatxFlags = StatxFlags::TYPE
        .union(StatxFlags::MTIME)
        .union(StatxFlags::SIZE)
        .union(StatxFlags::NLINK);

    impl Folder {
        /// The folder `rel` of `project`; a link there is not followed.
        pub fn open(project: &Path, rel: &str) -> io::Result<Folder> {
            Ok(Folder(openat(rustix::fs::CWD, project.join(rel), OPEN, Mode::empty())?))
        }

        /// The sub-folder `name`; a link there is not followed.
        pub fn sub(&self, name: &str) -> io::Result<Folder> {
            Ok(Folder(openat(&self.0, name, OPEN, Mode::empty())?))
        }

        /// Every name in the folder but `.` and `..`; an error reading
        /// the listing is the folder's.
        pub fn list(&self) -> io::Result<Vec<Listed>> {
            let mut buffer: Vec<u8> = Vec::with_capacity(32 * 1024);
            let mut listed = Vec::new();
            let mut entries = RawDir::new(&self.0, buffer.spare_capacity_mut());
            while let Some(entry) = entries.next() {
                let entry = entry?;
                let name = entry.file_name();
                if matches!(name.to_bytes(), b"." | b"..") {
                    continue;
                }
                listed.push(self.describe(name, entry.file_type()));
            }
            Ok(listed)
        }

        /// A listed name with its kind and stat: the listing's kind for a
        /// folder, `statx` (which also says the kind) for anything else.
        fn describe(&self, name: &CStr, listed: FileType) -> Listed {
            let text = match name.to_str() {
                Ok(text) => Ok(text.to_owned()),
                Err(_) => Err(name.to_string_lossy().into_owned()),
            };
            if listed == FileType::Directory {
                return Listed {
                    name: text,
                    kind: Kind::Folder,
                    stat: None,
                    hard_linked: false,
                };
            }
            let found = statx(&self.0, name, AtFlags::SYMLINK_NOFOLLOW, STAT).ok();
            let kind = match found
                .as_ref()
                .map_or(listed, |s| FileType::from_raw_mode(s.stx_mode.into()))
            {
                FileType::Directory => Kind::Folder,
                FileType::RegularFile => Kind::File,
                FileType::Symlink => Kind::Link,
                _ => Kind::Other,
            };
            let stat = match kind {
                Kind::Folder => None,
                Kind::Link => statx(&self.0, name, AtFlags::empty(), STAT).ok().map(|s| signature(&s)),
                Kind::File | Kind::Other => found.as_ref().map(signature),
            };
            let hard_linked = matches!(kind, Kind::File | Kind::Other) && found.is_some_and(|s| s.stx_nlink > 1);
            Listed {
                name: text,
                kind,
                stat,
                hard_linked,
            }
        }
    }

    /// mtime in ns (0 before the epoch, as std's `SystemTime` reads it) and size.
    fn signature(stat: &Statx) -> (u128, u64) {
        let mtime = u128::try_from(stat.stx_mtime.tv_sec).map_or(0, |seconds| {
            seconds * 1_000_000_000 + u128::from(stat.stx_mtime.tv_nsec)
        });
        (mtime, stat.stx_size)
    }
}

// Also built for Linux's tests, which hold the two listings to the same answers.
#[cfg(any(not(target_os = "linux"), test))]
mod portable {
    use std::fs;
    use std::io;
    use std::path::{Path, PathBuf};

    use super::{Kind, Listed};
    use crate::index::walk::mtime_nanos;

    /// A folder, by path.
    pub(in crate::index) struct Folder(PathBuf);

    impl Folder {
        /// The folder `rel` of `project`; a link there is not followed.
        pub fn open(project: &Path, rel: &str) -> io::Result<Folder> {
            let path = project.join(rel);
            if fs::symlink_metadata(&path)?.is_symlink() {
                return Err(io::Error::other("a link; not followed"));
            }
            Ok(Folder(path))
        }

        /// The sub-folder `name` (listed as a folder, so not a link).
        pub fn sub(&self, name: &str) -> io::Result<Folder> {
            Ok(Folder(self.0.join(name)))
        }

        /// Every name in the folder; an error reading the listing is the
        /// folder's.
        pub fn list(&self) -> io::Result<Vec<Listed>> {
            let mut listed = Vec::new();
            for entry in fs::read_dir(&self.0)? {
                let entry = entry?;
                let name = entry
                    .file_name()
                    .into_string()
                    .map_err(|n| n.to_string_lossy().into_owned());
                let kind = match entry.file_type() {
                    Ok(t) if t.is_dir() => Kind::Folder,
                    Ok(t) if t.is_file() => Kind::File,
                    Ok(t) if t.is_symlink() => Kind::Link,
                    _ => Kind::Other,
                };
                let stat = match kind {
                    Kind::Folder => None,
                    Kind::Link => fs::metadata(entry.path()).ok(),
                    Kind::File | Kind::Other => entry.metadata().ok(),
                };
                let hard_linked = kind != Kind::Link && stat.as_ref().is_some_and(links_more_than_once);
                let stat = stat.map(|m| (mtime_nanos(&m), m.len()));
                listed.push(Listed {
                    name,
                    kind,
                    stat,
                    hard_linked,
                });
            }
            Ok(listed)
        }
    }

    /// A file with another name (only Linux vouches for a tree, so
    /// elsewhere none is looked for).
    fn links_more_than_once(meta: &fs::Metadata) -> bool {
        #[cfg(unix)]
        return std::os::unix::fs::MetadataExt::nlink(meta) > 1;
        #[cfg(not(unix))]
        return false;
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::fs;
    use std::os::unix::ffi::OsStrExt as _;

    use super::*;

    /// Names that are not UTF-8 first, then by name.
    fn listed(mut list: Vec<Listed>) -> Vec<Listed> {
        list.sort_by(|a, b| (a.name.is_ok(), &a.name).cmp(&(b.name.is_ok(), &b.name)));
        list
    }

    /// The fast listing is an accelerator: it reads every kind of name as
    /// the portable one does, links and names that are not UTF-8 included.
    #[test]
    fn the_linux_listing_reads_a_folder_as_the_portable_one_does() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("Assets/Sub")).unwrap();
        fs::write(root.join("Assets/a.png"), "12345").unwrap();
        fs::write(root.join("Assets/.hidden"), "").unwrap();
        fs::write(
            root.join("Assets").join(std::ffi::OsStr::from_bytes(b"bad\xff.mat")),
            "x",
        )
        .unwrap();
        std::os::unix::fs::symlink("a.png", root.join("Assets/link.png")).unwrap();
        std::os::unix::fs::symlink("Sub", root.join("Assets/LinkedSub")).unwrap();
        std::os::unix::fs::symlink("missing", root.join("Assets/dangling")).unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        fs::write(elsewhere.path().join("shared.meta"), "guid").unwrap();
        fs::hard_link(elsewhere.path().join("shared.meta"), root.join("Assets/shared.meta")).unwrap();

        let fast = listed(linux::Folder::open(root, "Assets").unwrap().list().unwrap());
        let portable = listed(portable::Folder::open(root, "Assets").unwrap().list().unwrap());
        assert_eq!(fast, portable);
        let kinds: Vec<(String, Kind, bool)> = fast
            .iter()
            .map(|l| (l.name.clone().unwrap_or_else(|lossy| lossy), l.kind, l.stat.is_some()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("bad\u{fffd}.mat".to_owned(), Kind::File, true),
                (".hidden".to_owned(), Kind::File, true),
                ("LinkedSub".to_owned(), Kind::Link, true),
                ("Sub".to_owned(), Kind::Folder, false),
                ("a.png".to_owned(), Kind::File, true),
                ("dangling".to_owned(), Kind::Link, false),
                ("link.png".to_owned(), Kind::Link, true),
                ("shared.meta".to_owned(), Kind::File, true),
            ]
        );
        let shared: Vec<&str> = fast
            .iter()
            .filter(|l| l.hard_linked)
            .filter_map(|l| l.name.as_deref().ok())
            .collect();
        assert_eq!(shared, ["shared.meta"], "only the file with two names");
        let png = fast.iter().find(|l| l.name.as_deref() == Ok("a.png")).unwrap();
        assert_eq!(png.stat.unwrap().1, 5);
        // A link is never opened as a folder; a sub-folder lists alike.
        let assets = linux::Folder::open(root, "Assets").unwrap();
        assert!(assets.sub("LinkedSub").is_err());
        assert!(linux::Folder::open(root, "Assets/LinkedSub").is_err());
        assert!(portable::Folder::open(root, "Assets/LinkedSub").is_err());
        let sub = |folder: std::io::Result<Vec<Listed>>| listed(folder.unwrap());
        assert_eq!(
            sub(assets.sub("Sub").unwrap().list()),
            sub(portable::Folder::open(root, "Assets")
                .unwrap()
                .sub("Sub")
                .unwrap()
                .list())
        );
    }
}
