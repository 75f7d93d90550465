//! Opening a project's files for reading: never through a link that leads
//! out of the project, never a FIFO (it would block the scan) or a device
//! (`/dev/zero` never ends).
//!
//! A file the walk listed as regular ([`Listed::Regular`]) was found
//! without following a link, so it is inside the project: it is opened as
//! it is — no link followed, never blocking — and its open handle checked
//! to be a regular file (`open` + `fstat`, no path resolved twice). That is
//! the scan's path for a million files. Anything else the walk listed (a
//! link, a FIFO) is confined and checked by its path first, as before.

use std::fs;
use std::io::Read as _;
use std::path::Path;

/// A `.meta` is a few hundred bytes; anything above this is not one.
const META_LIMIT: u64 = 1024 * 1024;
/// Unity YAML read for dependencies and rich facts (scenes can be large).
pub(super) const ASSET_TEXT_LIMIT: u64 = 256 * 1024 * 1024;

/// How the walk listed a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Listed {
    /// A regular file in its folder's listing, reached through no link.
    Regular,
    /// A link, a FIFO, a device, or not known.
    Other,
}

impl Listed {
    pub(super) fn of(regular: bool) -> Self {
        if regular {
            Self::Regular
        } else {
            Self::Other
        }
    }
}

/// `path` of `project` opened for reading, with its length, when it may be
/// read: a regular file inside the project (a link may point elsewhere in it).
pub(super) fn open_in_project(project: &Path, path: &str, listed: Listed) -> Option<(fs::File, u64)> {
    match listed {
        Listed::Regular => open_listed(&project.join(path))
            .ok()
            .map(|(file, metadata)| (file, metadata.len())),
        Listed::Other => {
            let full = engine::io::confine(project, path).ok()?;
            let metadata = fs::metadata(&full).ok().filter(fs::Metadata::is_file)?;
            Some((fs::File::open(full).ok()?, metadata.len()))
        }
    }
}

/// At most `limit` bytes of `file` (`None` past it, or on a read error).
pub(super) fn read_to_limit(file: fs::File, len_hint: u64, limit: u64) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(usize::try_from(len_hint.min(limit)).unwrap_or(0));
    // The file may grow between the stat and the read.
    file.take(limit + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= limit).then_some(bytes)
}

/// A `.meta` file's bytes and metadata. It must be a regular file of the
/// project, not a link (Unity never writes one): a link to `/dev/zero` or a
/// FIFO is refused before it is opened, and its size is bounded.
pub(super) fn read_meta(path: &Path, listed: Listed) -> std::io::Result<(Vec<u8>, fs::Metadata)> {
    let refuse = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
    let (file, metadata) = match listed {
        Listed::Regular => open_listed(path)?,
        Listed::Other => {
            let metadata = fs::symlink_metadata(path)?;
            if metadata.file_type().is_symlink() {
                return Err(refuse("a symbolic link; a .meta file must be a regular file".into()));
            }
            engine::io::confine::check_regular(path, &metadata).map_err(|e| refuse(e.to_string()))?;
            (fs::File::open(path)?, metadata)
        }
    };
    if metadata.len() > META_LIMIT {
        return Err(refuse(format!("larger than {META_LIMIT} bytes; not a .meta file")));
    }
    let bytes = read_to_limit(file, metadata.len(), META_LIMIT)
        .ok_or_else(|| refuse(format!("larger than {META_LIMIT} bytes; not a .meta file")))?;
    Ok((bytes, metadata))
}

/// Open a file the walk listed as regular: no link followed, no blocking
/// open, and the handle's own metadata says it is still a regular file (it
/// may have been replaced since the walk).
pub(super) fn open_listed(path: &Path) -> std::io::Result<(fs::File, fs::Metadata)> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let metadata = file.metadata()?;
    engine::io::confine::check_regular(path, &metadata)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    Ok((file, metadata))
}
