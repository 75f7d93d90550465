//! One JSONL line appended under an exclusive lock file.
//!
//! The lock is `<file>.lock`, created with `create_new` (atomic on every
//! platform). A writer that finds it retries up to 3 times, 50 ms apart (the
//! product's append contract, `docs/contracts.md#index-files`), then gives up
//! with [`AppendError::Locked`] so the caller can print its own message. The
//! lock is held for an open and one `write` call on an `O_APPEND` handle:
//! short enough that many writers rarely collide.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The first try and 3 retries.
const TRIES: u32 = 4;
const PAUSE: Duration = Duration::from_millis(50);

/// Why a locked append failed.
#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    /// Another writer held the lock through every retry.
    #[error("{} is locked by another writer (lock file {}: {holder})", .path.display(), .lock.display())]
    Locked {
        /// The file appended to.
        path: PathBuf,
        /// The lock file that was held.
        lock: PathBuf,
        /// Whose lock it is and when it stops blocking.
        holder: String,
    },
    /// Creating the folder, the lock or the file, or writing, failed.
    #[error("cannot append to {}: {source}", .path.display())]
    Io {
        /// The file appended to.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
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
    // A symlinked log would carry the line to wherever it points.
    super::confine::refuse_symlink(path).map_err(|e| io_err(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
    let mut bytes = Vec::with_capacity(line.len() + 2);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    let lock = lock_path(path);
    let _guard = acquire(&lock, std::thread::sleep).map_err(|e| match e {
        Some(source) => io_err(source),
        None => AppendError::Locked {
            path: path.to_path_buf(),
            holder: describe_holder(&lock),
            lock: lock.clone(),
        },
    })?;
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(path)
        .map_err(io_err)?;
    super::confine::check_regular(path, &file.metadata().map_err(io_err)?)
        .map_err(|e| io_err(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
    if !ends_with_newline(&mut file).map_err(io_err)? {
        // A last line without its newline would merge with this one.
        bytes.insert(0, b'\n');
    }
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

/// True for an empty file or one whose last byte is a newline.
fn ends_with_newline(file: &mut fs::File) -> io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    if file.metadata()?.len() == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// What a writer puts in its lock: its pid and, where the process table is
/// visible, its start time, so a later process given the same pid is not
/// taken for the writer.
/// Read from `/proc` once per process: neither changes while it runs.
fn lock_text() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let pid = std::process::id();
        match started(pid) {
            Some(start) => format!("{pid} {start}"),
            None => pid.to_string(),
        }
    })
}

/// The lock holds its writer's pid; a lock whose writer is gone (it crashed
/// holding it) is removed, with a line saying so.
fn remove_if_stale(lock: &Path) -> bool {
    let Ok(text) = fs::read_to_string(lock) else {
        return false;
    };
    let mut fields = text.split_whitespace();
    let pid = fields.next().and_then(|p| p.parse::<u32>().ok());
    let start = fields.next().and_then(|s| s.parse::<u64>().ok());
    let why = match pid {
        Some(pid) if writer_is_gone(pid, start) => format!("its writer, pid {pid}, is no longer running"),
        // A writer fills in its pid right after creating the lock; empty long
        // after that, the writer died in between.
        None if text.is_empty() && age(lock).is_some_and(|a| a > EMPTY_LOCK_STALE_AFTER) => {
            format!("it has been empty for over {}s", EMPTY_LOCK_STALE_AFTER.as_secs())
        }
        _ => return false,
    };
    let removed = fs::remove_file(lock).is_ok();
    if removed {
        tracing::warn!("removed the stale lock {} ({why})", lock.display());
    }
    removed
}

/// Whose a held lock is and when it stops blocking, for the message of a
/// writer that gave up: a running writer's pid, or an empty lock's age and
/// when it counts as stale (a writer killed before writing its pid).
fn describe_holder(lock: &Path) -> String {
    let Ok(text) = fs::read_to_string(lock) else {
        return "was held, and is gone now".to_owned();
    };
    match text.split_whitespace().next().map(str::parse::<u32>) {
        Some(Ok(pid)) => format!("is held by process {pid}, still running; it is released when that process ends"),
        _ if text.is_empty() => {
            let age = age(lock).unwrap_or_default();
            let left = EMPTY_LOCK_STALE_AFTER.saturating_sub(age).as_secs_f64().ceil();
            format!(
                "is empty, {:.0}s old: a writer that has not written its pid yet, or one killed before it did; \
                 it counts as stale {}s after it was made, in {left:.0}s",
                age.as_secs_f64().floor(),
                EMPTY_LOCK_STALE_AFTER.as_secs()
            )
        }
        _ => format!(
            "holds `{}`, not a writer's pid: delete it if nothing is writing to the file",
            text.trim().escape_debug()
        ),
    }
}

/// How long an empty lock may be a writer between creating it and writing its pid.
const EMPTY_LOCK_STALE_AFTER: Duration = Duration::from_secs(10);

/// Only where the process table is visible; elsewhere a writer is never
/// presumed gone. A process with the writer's pid but another start time
/// (this one included) took the pid over after the writer died.
fn writer_is_gone(pid: u32, start: Option<u64>) -> bool {
    if !Path::new("/proc/self").exists() {
        return false;
    }
    match (started(pid), start) {
        (None, _) => true,
        (Some(now), Some(then)) => now != then,
        (Some(_), None) => false,
    }
}

/// When process `pid` started (field 22 of `/proc/PID/stat`, in clock ticks
/// since boot); `None` when there is no such process or no `/proc`.
fn started(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count after its last `)`.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

fn age(path: &Path) -> Option<Duration> {
    fs::metadata(path).ok()?.modified().ok()?.elapsed().ok()
}

/// `Err(None)` means still locked after every try. `pause` waits between
/// tries; it is a parameter so tests can count the tries without sleeping.
fn acquire(lock: &Path, mut pause: impl FnMut(Duration)) -> Result<LockGuard, Option<io::Error>> {
    for attempt in 0..TRIES {
        match OpenOptions::new().write(true).create_new(true).open(lock) {
            Ok(mut f) => {
                let _ = f.write_all(lock_text().as_bytes());
                return Ok(LockGuard(lock.to_path_buf()));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                if remove_if_stale(lock) {
                    continue;
                }
                if attempt + 1 < TRIES {
                    pause(PAUSE);
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
        // Whose lock it is and when it stops blocking, not only "locked".
        assert!(
            err.to_string().contains("is empty, 0s old")
                && err
                    .to_string()
                    .contains("counts as stale 10s after it was made, in 10s"),
            "{err}"
        );
        assert!(started.elapsed() >= PAUSE * 3);
        assert!(!p.exists());
    }

    /// The contract is the first try and exactly 3 retries, 50 ms apart: the
    /// wall-clock test above cannot tell 4 tries from 8.
    #[test]
    fn a_held_lock_is_tried_four_times_with_three_pauses() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("f.jsonl.lock");
        // Our own pid: a live writer, never removed as stale.
        fs::write(&lock, std::process::id().to_string()).unwrap();
        let mut pauses = Vec::new();
        let result = acquire(&lock, |d| pauses.push(d));
        assert!(matches!(result, Err(None)), "still locked after every try");
        let holder = describe_holder(&lock);
        assert!(
            holder.contains(&format!("held by process {}", std::process::id())),
            "{holder}"
        );
        assert_eq!(pauses, [Duration::from_millis(50); 3], "pauses between the 4 tries");
        assert!(lock.exists(), "another writer's lock is left alone");
    }

    /// A writer killed between creating the lock and writing its pid leaves
    /// it empty: once that is old, it no longer blocks every later append.
    #[test]
    fn an_old_empty_lock_is_stale_and_a_fresh_one_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.jsonl");
        let lock = dir.path().join("f.jsonl.lock");
        fs::write(&lock, "").unwrap();
        assert!(
            !remove_if_stale(&lock),
            "a fresh empty lock may be a writer about to write its pid"
        );
        let old = std::time::SystemTime::now() - Duration::from_secs(60);
        fs::File::options()
            .write(true)
            .open(&lock)
            .unwrap()
            .set_modified(old)
            .unwrap();
        append_line_locked(&p, "{}").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "{}\n");
        assert!(!lock.exists());
    }

    /// A crashed writer's pid given to a new process (here: this one, with
    /// another start time) does not keep its lock alive.
    #[test]
    fn a_lock_whose_pid_was_reused_is_stale_and_a_live_writers_is_held() {
        let Some(start) = started(std::process::id()) else {
            return; // no process table to tell them apart
        };
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("f.jsonl.lock");
        fs::write(&lock, lock_text()).unwrap();
        assert!(!remove_if_stale(&lock), "this process holds it");
        fs::write(&lock, format!("{} {}", std::process::id(), start + 1)).unwrap();
        assert!(remove_if_stale(&lock), "the pid now belongs to another process");
        assert!(!lock.exists());
    }

    #[test]
    fn adds_the_missing_final_newline_first() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.jsonl");
        fs::write(&p, "{\"a\":1}").unwrap();
        append_line_locked(&p, "{\"a\":2}").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"a\":2}\n");
    }

    #[test]
    fn recovers_a_lock_whose_writer_is_gone() {
        if !Path::new("/proc/self").exists() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.jsonl");
        // A pid above the kernel's maximum (4194304) is never running.
        fs::write(dir.path().join("f.jsonl.lock"), "999999999").unwrap();
        append_line_locked(&p, "{}").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "{}\n");
        assert!(!dir.path().join("f.jsonl.lock").exists());
    }

    #[cfg(unix)]
    #[test]
    fn refuses_a_symlinked_log() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("rc");
        fs::write(&target, "").unwrap();
        let p = dir.path().join("f.jsonl");
        std::os::unix::fs::symlink(&target, &p).unwrap();
        assert!(append_line_locked(&p, "{}").is_err());
        assert_eq!(fs::read_to_string(&target).unwrap(), "");
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
