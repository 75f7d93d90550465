//! One JSONL line appended under an exclusive lock file.
//!
//! The lock is `<file>.lock`, created with `create_new` (atomic on every
//! platform). A writer that finds it retries up to 3 times, 50 ms apart (the
//! seed's contract), then gives up with [`AppendError::Locked`] so the caller
//! can print its own message. The lock is held for an open and one `write` call on an
//! `O_APPEND` handle: short enough that many writers rarely collide.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The first try and 3 retries.
const TRIES: u32 = 4;
const PAUSE: Duration = Duration::from_millis(50);

#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    #[error("{} is locked by another writer (lock file {})", .path.display(), .lock.display())]
    Locked { path: PathBuf, lock: PathBuf },
    #[error("cannot append to {}: {source}", .path.display())]
    Io { path: PathBuf, source: io::Error },
}

/// Append `line` (a newline is added) to `path` while holding `path.lock`.
pub fn append_line_locked(path: &Path, line: &str) -> Result<(), AppendError> {
    let io_err = |source| AppendError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(io_err)?;
    }
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    let lock = lock_path(path);
    let _guard = acquire(&lock).map_err(|e| match e {
        Some(source) => io_err(source),
        None => AppendError::Locked {
            path: path.to_path_buf(),
            lock: lock.clone(),
        },
    })?;
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io_err)?;
    // One write on an O_APPEND handle: the line lands whole. No fsync, so the
    // lock is held for microseconds.
    file.write_all(&bytes).map_err(io_err)
}

fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// Removes the lock file when the append is done, also on error paths.
struct LockGuard(PathBuf);

impl Drop for LockGuard {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// `Err(None)` means still locked after every try.
fn acquire(lock: &Path) -> Result<LockGuard, Option<io::Error>> {
    for attempt in 0..TRIES {
        match OpenOptions::new().write(true).create_new(true).open(lock) {
            Ok(_) => return Ok(LockGuard(lock.to_path_buf())),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                if attempt + 1 < TRIES {
                    std::thread::sleep(PAUSE);
                }
            }
            Err(e) => return Err(Some(e)),
        }
    }
    Err(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_locked_after_three_tries() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.jsonl");
        fs::write(dir.path().join("f.jsonl.lock"), "").unwrap();
        let started = std::time::Instant::now();
        let err = append_line_locked(&p, "{}").unwrap_err();
        assert!(matches!(err, AppendError::Locked { .. }), "{err}");
        assert!(started.elapsed() >= PAUSE * 3);
        assert!(!p.exists());
    }

    #[test]
    fn appends_and_releases() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.jsonl");
        append_line_locked(&p, "{\"a\":1}").unwrap();
        append_line_locked(&p, "{\"a\":2}").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"a\":2}\n");
        assert!(!dir.path().join("f.jsonl.lock").exists());
    }
}
