//! Confinement: a path a project file names stays inside the project.
//!
//! A cloned project is untrusted input, so every path it can name (a `read`,
//! `write` or `append` stage, a config value, a resource override, an index
//! file) goes through one check here: relative, no `..`, and no symlink
//! whose canonical target leaves the root. Reads also refuse FIFOs and
//! devices (a FIFO would hang the reader, `/dev/zero` would never end) and
//! files over a size limit; writes refuse any symlink on the way, so a
//! symlinked settings folder or log file cannot redirect them.

use std::fs;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use crate::Product;

/// Why a path a project names was refused or could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// The path was an empty string.
    #[error("expected a file path, got an empty string")]
    Empty,
    /// An absolute path (the path, the root).
    #[error("`{0}` is absolute; paths must be relative to {1}")]
    Absolute(String, String),
    /// A path with a `..` component (the path, the root).
    #[error("`{0}` climbs out with `..`; paths must stay inside {1}")]
    Parent(String, String),
    /// A symlink whose canonical target lies outside the root.
    #[error("`{path}` leads outside {root} (it resolves to {target})")]
    Escapes {
        /// The path as the project named it.
        path: String,
        /// The root it must stay in.
        root: String,
        /// Where it resolves.
        target: String,
    },
    /// A symlink where a write goes only through real folders and files.
    #[error("`{0}` is a symbolic link; this file is written only through real folders and files")]
    Symlink(String),
    /// A path inside a part of the root no pipeline writes (the path, that part).
    #[error("`{0}` is inside `{1}`, which no pipeline writes (version control, editor and agent settings, Unity's Library); write under the index folder instead")]
    Protected(String, String),
    /// A FIFO, device or folder where a regular file was expected (the path, what it is).
    #[error("`{0}` is {1}, not a regular file")]
    NotRegular(String, &'static str),
    /// A file over the size limit.
    #[error("{path} is larger than {limit} bytes (the limit `{key}`; raise it in {settings} if the file is genuine)")]
    TooLarge {
        /// The file.
        path: String,
        /// The limit, in bytes.
        limit: u64,
        /// The config key that sets the limit.
        key: String,
        /// Where that key is set: the product's settings file.
        settings: &'static str,
    },
    /// An I/O error on the path.
    #[error("{0}: {1}")]
    Io(String, io::Error),
}

impl ConfineError {
    /// The file does not exist (a `missing: null` read treats this as no file).
    pub fn is_not_found(&self) -> bool {
        matches!(self, ConfineError::Io(_, e) if e.kind() == io::ErrorKind::NotFound)
    }
}

/// `root/rel` after the lexical check (relative, no `..`) and, for the part
/// that exists, the canonical check: it must resolve inside `root`. Symlinks
/// that stay inside are allowed; a dangling symlink is refused (writing
/// through it would create its target wherever it points).
pub fn confine(root: &Path, rel: &str) -> Result<PathBuf, ConfineError> {
    let path = lexical(root, rel)?;
    let root_canon = match root.canonicalize() {
        Ok(c) => c,
        // Nothing under a missing root exists either: nothing to resolve.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(path),
        Err(e) => return Err(ConfineError::Io(root.display().to_string(), e)),
    };
    let mut probe = path.as_path();
    loop {
        match probe.symlink_metadata() {
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::NotFound => match probe.parent() {
                Some(p) => probe = p,
                None => return Ok(path),
            },
            Err(e) => return Err(ConfineError::Io(probe.display().to_string(), e)),
        }
    }
    let escapes = |target: String| ConfineError::Escapes {
        path: rel.to_owned(),
        root: root.display().to_string(),
        target,
    };
    match probe.canonicalize() {
        Ok(c) if c.starts_with(&root_canon) => Ok(path),
        Ok(c) => Err(escapes(c.display().to_string())),
        Err(_) => Err(escapes("a link whose target does not exist".into())),
    }
}

/// `root/rel` for writing: [`confine`], and no component below `root` may be
/// a symlink at all (the target itself included), so an append or an index
/// write cannot be redirected, even to another file of the project.
pub fn confine_for_write(root: &Path, rel: &str) -> Result<PathBuf, ConfineError> {
    let path = confine(root, rel)?;
    let mut at = root.to_path_buf();
    for c in Path::new(rel).components() {
        if let Component::Normal(name) = c {
            at.push(name);
            match at.symlink_metadata() {
                Ok(m) if m.file_type().is_symlink() => return Err(ConfineError::Symlink(at.display().to_string())),
                Ok(_) => {}
                Err(_) => break,
            }
        }
    }
    Ok(path)
}

/// Refuse `rel` when it lies in one of `protected` (paths relative to the
/// root). Names are compared without case: on a case-insensitive disk
/// `.GIT/config` is `.git/config`.
pub fn refuse_protected<P: AsRef<str>>(rel: &str, protected: &[P]) -> Result<(), ConfineError> {
    let words = |p: &str| -> Vec<String> {
        Path::new(p)
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_string_lossy().to_lowercase()),
                _ => None,
            })
            .collect()
    };
    let target = words(rel);
    match protected.iter().find(|p| target.starts_with(&words(p.as_ref()))) {
        Some(p) => Err(ConfineError::Protected(rel.to_owned(), p.as_ref().to_owned())),
        None => Ok(()),
    }
}

/// Refuse a write target that is a symlink (for files whose folder the
/// caller already confined, such as the index folder's files).
pub(crate) fn refuse_symlink(path: &Path) -> Result<(), ConfineError> {
    match path.symlink_metadata() {
        Ok(m) if m.file_type().is_symlink() => Err(ConfineError::Symlink(path.display().to_string())),
        _ => Ok(()),
    }
}

/// The relative path's lexical check, joined to `root`.
fn lexical(root: &Path, rel: &str) -> Result<PathBuf, ConfineError> {
    if rel.is_empty() {
        return Err(ConfineError::Empty);
    }
    let shown = || root.display().to_string();
    // A Windows drive or UNC path is absolute everywhere, not just on Windows.
    let drive = rel.len() >= 2 && rel.as_bytes()[1] == b':' && rel.as_bytes()[0].is_ascii_alphabetic();
    if rel.starts_with('\\') || drive || rel.contains('\0') {
        return Err(ConfineError::Absolute(rel.to_owned(), shown()));
    }
    for c in Path::new(rel).components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return Err(ConfineError::Parent(rel.to_owned(), shown())),
            Component::RootDir | Component::Prefix(_) => return Err(ConfineError::Absolute(rel.to_owned(), shown())),
        }
    }
    if rel.split(['/', '\\']).any(|part| part == "..") {
        return Err(ConfineError::Parent(rel.to_owned(), shown()));
    }
    Ok(root.join(rel))
}

/// A regular file's bytes, at most `limit` of them (`key` names the setting
/// that raises it, in `product`'s settings). FIFOs, devices and folders are
/// refused before opening, so a FIFO never blocks and `/dev/zero` is never read.
pub fn read_limited(path: &Path, limit: u64, key: &str, product: &Product) -> Result<Vec<u8>, ConfineError> {
    let (file, len) = open_limited(path, limit, key, product)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    // The file may grow between the stat and the read.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ConfineError::Io(path.display().to_string(), e))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(path, limit, key, product));
    }
    Ok(bytes)
}

/// A regular file of at most `limit` bytes opened for reading, with its
/// length: what [`read_limited`] reads whole, for a reader that needs
/// only parts of it. FIFOs, devices and folders are refused before opening.
pub fn open_limited(path: &Path, limit: u64, key: &str, product: &Product) -> Result<(fs::File, u64), ConfineError> {
    let shown = || path.display().to_string();
    let meta = fs::metadata(path).map_err(|e| ConfineError::Io(shown(), e))?;
    check_regular(path, &meta)?;
    if meta.len() > limit {
        return Err(too_large(path, limit, key, product));
    }
    let file = fs::File::open(path).map_err(|e| ConfineError::Io(shown(), e))?;
    Ok((file, meta.len()))
}

fn too_large(path: &Path, limit: u64, key: &str, product: &Product) -> ConfineError {
    ConfineError::TooLarge {
        path: path.display().to_string(),
        limit,
        key: key.to_owned(),
        settings: product.settings,
    }
}

/// [`read_limited`] decoded as UTF-8 (the error names the file).
pub fn read_text_limited(path: &Path, limit: u64, key: &str, product: &Product) -> Result<String, ConfineError> {
    let bytes = read_limited(path, limit, key, product)?;
    String::from_utf8(bytes).map_err(|e| {
        ConfineError::Io(
            path.display().to_string(),
            io::Error::new(io::ErrorKind::InvalidData, format!("not UTF-8 text ({e})")),
        )
    })
}

/// [`read_text_limited`] where a missing file is `None` (an optional file:
/// a config, an index file not written yet) and any other failure an error.
pub fn read_text_if_present(
    path: &Path,
    limit: u64,
    key: &str,
    product: &Product,
) -> Result<Option<String>, ConfineError> {
    match read_text_limited(path, limit, key, product) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// A line-per-record file read as bytes, whose lines are checked one by
/// one: a line over `limits.line_bytes` or not UTF-8 is a bad line of its
/// own instead of failing the whole file, so one corrupt row costs that row
/// (a reader skips it, `doctor` reports it) and never every later run.
pub struct RowLines {
    bytes: Vec<u8>,
    line_limit: u64,
}

impl RowLines {
    /// Each line with its 1-based number: its text, or why it is unreadable.
    pub fn iter(&self) -> impl Iterator<Item = (usize, Result<&str, String>)> {
        self.bytes.split(|b| *b == b'\n').enumerate().map(|(i, line)| {
            let text = if line.len() as u64 > self.line_limit {
                Err(format!(
                    "the line is longer than {} bytes (the limit `{}`)",
                    self.line_limit,
                    super::LINE_KEY
                ))
            } else {
                std::str::from_utf8(line).map_err(|e| format!("the line is not UTF-8 text ({e})"))
            };
            (i + 1, text)
        })
    }
}

/// The lines of a line-per-record file (JSONL), bounded as a whole by
/// `limits.data_bytes` (set in `product`'s settings); each line is checked
/// by [`RowLines::iter`].
pub fn read_row_lines(path: &Path, limits: &super::Limits, product: &Product) -> Result<RowLines, ConfineError> {
    Ok(RowLines {
        bytes: read_limited(path, limits.data_bytes, super::DATA_KEY, product)?,
        line_limit: limits.line_bytes,
    })
}

/// Refuse what is not a regular file (after following symlinks).
pub fn check_regular(path: &Path, meta: &fs::Metadata) -> Result<(), ConfineError> {
    if meta.is_file() {
        return Ok(());
    }
    Err(ConfineError::NotRegular(path.display().to_string(), kind(meta)))
}

fn kind(meta: &fs::Metadata) -> &'static str {
    if meta.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_parts_are_refused_whatever_the_spelling() {
        let protected = [".git", ".claude/settings.json", "Library"];
        for rel in [
            ".git/config",
            "./.git/hooks/pre-commit",
            ".GIT/config",
            "library/x",
            ".claude/settings.json",
        ] {
            assert!(
                matches!(refuse_protected(rel, &protected), Err(ConfineError::Protected(..))),
                "{rel}"
            );
        }
        for rel in [
            ".github/x",
            ".claude/settings.json.bak",
            ".claude/unity-asset-index/a.json",
            "Libraryx",
        ] {
            assert!(refuse_protected(rel, &protected).is_ok(), "{rel}");
        }
    }

    #[test]
    fn lexical_refusals() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert!(matches!(confine(root, ""), Err(ConfineError::Empty)));
        assert!(matches!(confine(root, "/etc/passwd"), Err(ConfineError::Absolute(..))));
        assert!(matches!(confine(root, "C:\\x"), Err(ConfineError::Absolute(..))));
        assert!(matches!(confine(root, "a/../../x"), Err(ConfineError::Parent(..))));
        assert!(matches!(confine(root, "a\\..\\x"), Err(ConfineError::Parent(..))));
        assert_eq!(confine(root, "a/b.json").unwrap(), root.join("a/b.json"));
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_are_refused_and_inside_allowed_for_reads_only() {
        let outside = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("in")).unwrap();
        std::os::unix::fs::symlink(root.join("gone"), root.join("dangling")).unwrap();
        assert!(matches!(confine(root, "out/x.json"), Err(ConfineError::Escapes { .. })));
        assert!(matches!(confine(root, "dangling"), Err(ConfineError::Escapes { .. })));
        assert!(confine(root, "in/x.json").is_ok());
        assert!(matches!(
            confine_for_write(root, "in/x.json"),
            Err(ConfineError::Symlink(_))
        ));
        assert!(confine_for_write(root, "real/new/x.json").is_ok());
    }

    #[test]
    fn a_long_or_non_utf8_line_is_one_bad_line_not_a_failed_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.jsonl");
        std::fs::write(&path, b"{}\nxxxxxxxxxxxx\n\xff\n{}\n").unwrap();
        let limits = crate::io::Limits {
            line_bytes: 8,
            ..crate::io::Limits::default()
        };
        let lines = read_row_lines(&path, &limits, &Product::NEUTRAL).unwrap();
        let read: Vec<(usize, Result<&str, String>)> = lines.iter().collect();
        assert_eq!(read[0], (1, Ok("{}")));
        assert!(read[1].1.as_ref().unwrap_err().contains("limits.line_kb"), "{read:?}");
        assert!(read[2].1.as_ref().unwrap_err().contains("not UTF-8"), "{read:?}");
        assert_eq!(read[3], (4, Ok("{}")));
    }

    #[cfg(unix)]
    #[test]
    fn devices_fifos_and_large_files_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let neutral = &Product::NEUTRAL;
        let err = read_limited(Path::new("/dev/zero"), 10, "limits.x", neutral).unwrap_err();
        assert!(err.to_string().contains("a device"), "{err}");
        let fifo = dir.path().join("f");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let err = read_limited(&fifo, 10, "limits.x", neutral).unwrap_err();
        assert!(err.to_string().contains("a FIFO"), "{err}");
        let big = dir.path().join("big");
        std::fs::write(&big, "12345678901").unwrap();
        let err = read_limited(&big, 10, "limits.x", neutral).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("(the limit `limits.x`; raise it in the settings file if the file is genuine)"),
            "{err}"
        );
        let acme = Product::new("acme", ".acme/settings.yml");
        let err = read_limited(&big, 10, "limits.x", &acme).unwrap_err();
        assert!(err.to_string().contains("raise it in .acme/settings.yml"), "{err}");
        assert_eq!(read_limited(&big, 11, "limits.x", neutral).unwrap().len(), 11);
    }
}
