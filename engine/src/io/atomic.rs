//! Atomic replacement: write a temp file in the same folder, fsync, rename.
//!
//! Readers see either the old file or the new one, never a mix; a crash or
//! Ctrl+C before the rename leaves the old file untouched, and the temp file
//! is removed when the writer is dropped without committing.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Replace `path` with `bytes` atomically, creating parent folders.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes)?;
    file.commit()
}

/// A file being written next to its destination; [`AtomicFile::commit`]
/// publishes it, dropping it discards it.
pub struct AtomicFile {
    temp: Option<PathBuf>,
    file: Option<io::BufWriter<File>>,
    dest: PathBuf,
}

impl AtomicFile {
    /// Start writing a temporary file in `dest`'s folder (created if missing).
    pub fn create(dest: &Path) -> io::Result<Self> {
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&dir)?;
        let name = dest
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "destination has no file name"))?
            .to_string_lossy();
        // Unique per process and call, so concurrent writers never share a temp file.
        let unique = format!(
            ".{name}.{}.{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let temp = dir.join(unique);
        let file = fs::OpenOptions::new().write(true).create_new(true).open(&temp)?;
        Ok(Self {
            temp: Some(temp),
            file: Some(io::BufWriter::new(file)),
            dest: dest.to_path_buf(),
        })
    }

    /// Flush, fsync and rename over the destination.
    pub fn commit(self) -> io::Result<()> {
        self.publish(true)
    }

    /// Flush and rename over the destination without waiting for the disk:
    /// readers still see the old file or the new one, but a power loss may
    /// lose either. For a file rewritten often that means nothing once its
    /// writer is gone (a live process's state); an fsync cost it 0.6–2.5 ms.
    pub fn commit_volatile(self) -> io::Result<()> {
        self.publish(false)
    }

    fn publish(mut self, durable: bool) -> io::Result<()> {
        let file = self.file.take().expect("commit is called once");
        let file = file.into_inner().map_err(|e| e.into_error())?;
        if durable {
            file.sync_all()?;
        }
        drop(file);
        let temp = self.temp.take().expect("commit is called once");
        fs::rename(&temp, &self.dest).inspect_err(|_| {
            let _ = fs::remove_file(&temp);
        })?;
        if !durable {
            return Ok(());
        }
        // Make the rename itself durable where the platform allows it.
        if let Some(dir) = self.dest.parent() {
            if let Ok(d) = File::open(if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            }) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }

    /// [`commit`](Self::commit) when the bytes written differ from the
    /// destination's, else discard them (the destination, untouched, keeps
    /// its time); says whether it committed. The two are compared on disk,
    /// a chunk at a time: a file of any size is never held in memory.
    pub fn commit_if_changed(mut self) -> io::Result<bool> {
        let writer = self.file.as_mut().expect("commit is called once");
        writer.flush()?;
        let written = writer.get_ref().metadata()?.len();
        let temp = self.temp.as_deref().expect("commit is called once");
        let same = match fs::metadata(&self.dest) {
            Ok(old) if old.is_file() && old.len() == written => same_bytes(temp, &self.dest)?,
            _ => false,
        };
        if same {
            return Ok(false);
        }
        self.commit()?;
        Ok(true)
    }
}

/// Whether two files of the same length hold the same bytes.
fn same_bytes(a: &Path, b: &Path) -> io::Result<bool> {
    use std::io::Read as _;
    let (mut a, mut b) = (File::open(a)?, File::open(b)?);
    let (mut left, mut right) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let n = a.read(&mut left)?;
        if n == 0 {
            return Ok(b.read(&mut right[..1])? == 0);
        }
        match b.read_exact(&mut right[..n]) {
            // Shorter than its length said: it changed while compared.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(false),
            result => result?,
        }
        if left[..n] != right[..n] {
            return Ok(false);
        }
    }
}

static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.as_mut().expect("not committed").write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().expect("not committed").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            drop(self.file.take());
            let _ = fs::remove_file(temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_volatile_commit_replaces_too_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        write_atomic(&p, b"one").unwrap();
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"two").unwrap();
        f.commit_volatile().unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn dropped_writer_keeps_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        write_atomic(&p, b"old").unwrap();
        {
            let mut f = AtomicFile::create(&p).unwrap();
            f.write_all(b"half").unwrap();
        }
        assert_eq!(fs::read(&p).unwrap(), b"old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
