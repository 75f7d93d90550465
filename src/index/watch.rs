//! `index --watch`: the project's changes as the operating system reports
//! them, so a no-op `index` beside a watcher costs no walk.
//!
//! A no-op `index` stats every file (a million system calls at 5×10^5
//! assets); only a process that was listening when a file changed knows
//! that nothing did. The watcher listens to `Assets/` and `Packages/`
//! (inotify, FSEvents, ReadDirectoryChangesW through `notify`) and keeps a
//! small record beside the index, `watch.json`: an *epoch* — its own id and
//! a generation number — and whether the tree has been quiet since the
//! epoch began. Any change ends the epoch at once.
//!
//! A run that walks the tree notes the live quiet epoch it saw *before* its
//! walk ([`live_epoch`]) next to the walk's hash in `state.json`. It asks
//! for the epoch through the watch itself: it creates a file in a watched
//! folder of the index (a *barrier*) and waits for the watcher to answer
//! it. One inotify queue delivers events in the order they happened, so by
//! the time the barrier is answered every change made before it has ended
//! the epoch: a file saved just before `index` runs is never missed. A later
//! run that finds the same epoch still quiet knows no file changed since
//! that walk and reuses its hash instead of walking again. The record is
//! believed only while its watcher is alive: `watch.lock` stays locked
//! (`flock`) for the watcher's lifetime, and a lock dies with its process,
//! so a crashed watcher or a copied project vouches for nothing. A tree
//! holding a link is never vouched for: a link's target may lie outside
//! what is watched, and so may a hard-linked file's other name, through
//! which it is rewritten without an event here. Only Linux vouches (elsewhere events of different
//! folders may arrive out of order); `--watch` re-indexes everywhere.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use engine::io::Limits;
use notify::event::{AccessKind, AccessMode, EventKind};
use notify::{RecursiveMode, Watcher as _};
use serde::{Deserialize, Serialize};

use super::store;

/// Held locked by a live watcher; never replaced, so the lock stays on it.
const LOCK_FILE: &str = "watch.lock";
/// The watcher's epoch and whether the tree is quiet in it.
const EPOCH_FILE: &str = "watch.json";
/// The folder of barriers: a run asking for the epoch creates a file here.
const BARRIERS: &str = "watch.barriers";
/// What a watcher keeps in the index folder (`doctor` knows them).
pub const FILES: [&str; 3] = [LOCK_FILE, EPOCH_FILE, BARRIERS];

/// How long a run waits for a quiet watcher's answer before walking anyway
/// (an idle watcher answers in a millisecond; this is for a loaded machine).
const ANSWER_WAIT: Duration = Duration::from_secs(2);
/// Barriers answered, newest last, kept in the record for the runs polling it.
const ANSWERS_KEPT: usize = 32;

/// How long the tree must stay quiet before the watcher indexes: an editor
/// saving a file, or Unity importing a folder, writes in bursts.
const QUIET: Duration = Duration::from_millis(300);

/// A span of a watcher's life in which no change was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Epoch {
    /// One watcher process (pid and start time): a new watcher's epochs
    /// never match an old one's.
    pub watcher: String,
    pub generation: u64,
}

/// `watch.json`.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    #[serde(flatten)]
    epoch: Epoch,
    /// Nothing changed since the epoch began.
    quiet: bool,
    /// The barriers answered lately: each was seen after every change made
    /// before it.
    answered: Vec<String>,
}

/// The quiet epoch of a live watcher of `project`, if one is watching and
/// has seen nothing change in it up to this call. Read it before a walk: a
/// change after this call ends the epoch, so a run that records it with its
/// walk's hash records the hash of a tree the epoch vouches for.
pub fn live_epoch(project: &Path, limits: &Limits) -> Option<Epoch> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let dir = store::index_dir(project);
    if !alive(&dir) {
        return None;
    }
    let name = barrier_name();
    let barrier = dir.join(BARRIERS).join(&name);
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&barrier)
        .ok()?;
    let answer = await_answer(&dir.join(EPOCH_FILE), &name, limits);
    let _ = fs::remove_file(&barrier);
    answer
}

/// Whether a live watcher holds the lock in the index folder `dir` (nobody
/// holds it once its watcher is gone, however it ended).
fn alive(dir: &Path) -> bool {
    let Ok((lock, _)) = super::open::open_listed(&dir.join(LOCK_FILE)) else {
        return false;
    };
    matches!(lock.try_lock_shared(), Err(fs::TryLockError::WouldBlock))
}

/// A live `index --watch` watcher of `project`: `Some` with its process id
/// as its record names it (`None` when the record is not there to say).
pub fn live_watcher(project: &Path, limits: &Limits) -> Option<Option<u32>> {
    let dir = store::index_dir(project);
    if !alive(&dir) {
        return None;
    }
    let text = engine::io::read_text_if_present(
        &dir.join(EPOCH_FILE),
        limits.data_bytes,
        engine::io::DATA_KEY,
        &crate::PRODUCT,
    );
    let record = text
        .ok()
        .flatten()
        .and_then(|t| serde_json::from_str::<Record>(&t).ok());
    Some(record.and_then(|r| r.epoch.watcher.split_once('-')?.0.parse().ok()))
}

/// A barrier's name no other run on this machine uses at once.
fn barrier_name() -> String {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let count = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{nanos}-{count}", std::process::id())
}

/// The epoch of the record once it answers the barrier `name`, if quiet;
/// `None` at once when the tree is changing (the run walks either way), and
/// when no answer comes in [`ANSWER_WAIT`].
fn await_answer(record: &Path, name: &str, limits: &Limits) -> Option<Epoch> {
    let deadline = Instant::now() + ANSWER_WAIT;
    loop {
        let text =
            engine::io::read_text_if_present(record, limits.data_bytes, engine::io::DATA_KEY, &crate::PRODUCT).ok()?;
        let record: Record = serde_json::from_str(&text?).ok()?;
        if !record.quiet {
            return None;
        }
        if record.answered.iter().any(|a| a == name) {
            return Some(record.epoch);
        }
        if Instant::now() >= deadline {
            tracing::debug!("index: the watcher did not answer in {ANSWER_WAIT:?}; walking");
            return None;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// A running watch of a project's asset folders. Dropping it stops the
/// watch and releases the lock (the record then vouches for nothing).
pub struct Watch {
    shared: Arc<Shared>,
    watcher: Mutex<notify::RecommendedWatcher>,
    project: PathBuf,
    _lock: fs::File,
}

struct Shared {
    status: Mutex<Status>,
    /// Woken on every change.
    changed: tokio::sync::Notify,
    record: PathBuf,
}

struct Status {
    epoch: Epoch,
    quiet: bool,
    last_change: Option<Instant>,
    /// `Assets/` or `Packages/` itself was created, removed or moved: its
    /// watch is set again before the next quiet epoch.
    rewatch: bool,
    /// The watch can no longer see every change (a watch limit, a lost
    /// event queue it could not recover from): the watcher stops.
    failure: Option<String>,
    answered: std::collections::VecDeque<String>,
}

impl Shared {
    fn status(&self) -> MutexGuard<'_, Status> {
        // A panic while holding it left plain data; reading it on is safe.
        self.status.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A change: the quiet epoch (if any) ends, on disk first.
    fn change(&self, rewatch: bool, failure: Option<String>) {
        let mut status = self.status();
        status.last_change = Some(Instant::now());
        status.rewatch |= rewatch;
        if failure.is_some() && status.failure.is_none() {
            status.failure = failure;
        }
        if status.quiet {
            status.quiet = false;
            status.epoch.generation += 1;
            if let Err(e) = self.write(&status) {
                // A record left saying "quiet" would vouch for a changed tree.
                if fs::remove_file(&self.record).is_err() {
                    status.failure = Some(format!(
                        "cannot end the quiet epoch in {}: {e:#}",
                        self.record.display()
                    ));
                }
            }
        }
        drop(status);
        self.changed.notify_one();
    }

    /// A run's barrier seen: every change before it has been counted.
    fn answer(&self, barrier: String) {
        let mut status = self.status();
        if status.answered.len() == ANSWERS_KEPT {
            status.answered.pop_front();
        }
        status.answered.push_back(barrier);
        // Unanswered, the run walks: slower, never wrong.
        if let Err(e) = self.write(&status) {
            tracing::warn!("{e:#}");
        }
    }

    fn write(&self, status: &Status) -> anyhow::Result<()> {
        let record = Record {
            epoch: status.epoch.clone(),
            quiet: status.quiet,
            answered: status.answered.iter().cloned().collect(),
        };
        let mut bytes = serde_json::to_vec(&record)?;
        bytes.push(b'\n');
        // Replaced whole, not synced: it means nothing once its watcher is
        // gone, and every run's barrier rewrites it.
        let mut file = engine::io::AtomicFile::create(&self.record)?;
        std::io::Write::write_all(&mut file, &bytes)
            .and_then(|()| file.commit_volatile())
            .with_context(|| format!("cannot write {}", self.record.display()))
    }
}

impl Watch {
    /// Start watching `project`'s `Assets/` and `Packages/`. Fails when
    /// another watcher holds the project, or the operating system refuses
    /// the watch (with how to raise its limit).
    pub fn start(project: &Path) -> anyhow::Result<Watch> {
        super::scan::require_unity_project(project)?;
        // Events name absolute paths; `Assets/` itself is recognised among them.
        let project = &fs::canonicalize(project).with_context(|| format!("cannot resolve {}", project.display()))?;
        let dir = store::index_dir(project);
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let lock_path = dir.join(LOCK_FILE);
        let mut options = fs::OpenOptions::new();
        options.create(true).truncate(false).write(true);
        // A link the project ships there is not followed, a FIFO never blocks.
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW | libc::O_NONBLOCK);
        let lock = options
            .open(&lock_path)
            .with_context(|| format!("cannot open {}", lock_path.display()))?;
        engine::io::confine::check_regular(&lock_path, &lock.metadata()?)?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => anyhow::bail!(
                "another watcher (`index --watch`) is watching {}; one watcher per project is enough",
                project.display()
            ),
            Err(fs::TryLockError::Error(e)) => {
                anyhow::bail!(
                    "cannot lock {}: {e}; this file system cannot hold a watcher's lock",
                    lock_path.display()
                )
            }
        }
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let shared = Arc::new(Shared {
            status: Mutex::new(Status {
                epoch: Epoch {
                    watcher: format!("{}-{started}", std::process::id()),
                    generation: 0,
                },
                quiet: false,
                last_change: None,
                rewatch: false,
                failure: None,
                answered: std::collections::VecDeque::new(),
            }),
            changed: tokio::sync::Notify::new(),
            record: dir.join(EPOCH_FILE),
        });
        shared.write(&shared.status())?;
        let barriers = dir.join(BARRIERS);
        // Barriers left by runs that died waiting are nobody's.
        let _ = fs::remove_dir_all(&barriers);
        fs::create_dir_all(&barriers).with_context(|| format!("cannot create {}", barriers.display()))?;
        let handler = Arc::clone(&shared);
        let seen = Seen {
            barriers: barriers.clone(),
            roots: [project.join("Assets"), project.join("Packages")],
        };
        let watcher = notify::RecommendedWatcher::new(
            move |event| seen.event(&handler, event),
            notify::Config::default().with_follow_symlinks(false),
        )
        .context("cannot start watching the project")?;
        let watch = Watch {
            shared,
            watcher: Mutex::new(watcher),
            project: project.to_owned(),
            _lock: lock,
        };
        watch.add_watches()?;
        watch
            .watcher
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .watch(&barriers, RecursiveMode::NonRecursive)
            .map_err(|e| anyhow::anyhow!("{}", watch_error(&e)))?;
        Ok(watch)
    }

    /// The project root (for `Assets/` or `Packages/` appearing), then each
    /// asset folder and everything below it.
    fn add_watches(&self) -> anyhow::Result<()> {
        let mut watcher = self.watcher.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        watcher
            .watch(&self.project, RecursiveMode::NonRecursive)
            .map_err(|e| anyhow::anyhow!("{}", watch_error(&e)))?;
        for root in ["Assets", "Packages"] {
            let folder = self.project.join(root);
            if fs::symlink_metadata(&folder).is_ok_and(|m| m.is_dir()) {
                watcher
                    .watch(&folder, RecursiveMode::Recursive)
                    .map_err(|e| anyhow::anyhow!("{}", watch_error(&e)))?;
            }
        }
        Ok(())
    }

    /// Wait until nothing has changed for `QUIET` (300 ms), then begin a quiet
    /// epoch (a run started after this may record it). Fails when the
    /// watch can no longer see every change.
    pub async fn quiet(&self) -> anyhow::Result<()> {
        while let Some(left) = self.begin_quiet_epoch()? {
            tokio::time::sleep(left).await;
        }
        Ok(())
    }

    /// Begin a quiet epoch if nothing changed for [`QUIET`]; else how long
    /// to wait before trying again.
    fn begin_quiet_epoch(&self) -> anyhow::Result<Option<Duration>> {
        let mut status = self.shared.status();
        if let Some(failure) = &status.failure {
            anyhow::bail!("{failure}");
        }
        if let Some(at) = status.last_change.filter(|at| at.elapsed() < QUIET) {
            return Ok(Some(QUIET - at.elapsed().min(QUIET)));
        }
        if std::mem::take(&mut status.rewatch) {
            drop(status);
            self.add_watches()?;
            // A change while the watches were set again waits its turn.
            return Ok(Some(Duration::ZERO));
        }
        status.quiet = true;
        status.epoch.generation += 1;
        self.shared.write(&status)?;
        Ok(None)
    }

    /// Wait for the next change after the quiet epoch began.
    pub async fn changed(&self) {
        loop {
            // Registered before the check, so a change between the two wakes it.
            let notified = self.shared.changed.notified();
            if !self.shared.status().quiet {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        // Tidiness only: without its lock held the record vouches for nothing.
        let _ = fs::remove_file(&self.shared.record);
        if let Some(index) = self.shared.record.parent() {
            let _ = fs::remove_dir_all(index.join(BARRIERS));
        }
    }
}

/// What the watcher's events are read against.
struct Seen {
    barriers: PathBuf,
    /// `Assets/` and `Packages/`, absolute.
    roots: [PathBuf; 2],
}

impl Seen {
    /// One event: a run's barrier, nothing a walk sees, or a change.
    fn event(&self, shared: &Shared, event: notify::Result<notify::Event>) {
        match event {
            Ok(event) if event.paths.iter().any(|p| p.starts_with(&self.barriers)) => {
                let barrier = event.paths[0].parent() == Some(&self.barriers);
                if let (EventKind::Create(_), true, Some(name)) = (event.kind, barrier, event.paths[0].file_name()) {
                    shared.answer(name.to_string_lossy().into_owned());
                }
            }
            Ok(event) if !changes_the_tree(&event.kind) || self.beside_the_roots(&event.paths) => {}
            Ok(event) => shared.change(event.paths.iter().any(|p| self.roots.contains(p)), None),
            Err(e) => shared.change(false, Some(watch_error(&e))),
        }
    }

    /// Whether an event names only entries of the project root other than
    /// `Assets/` and `Packages/` (Unity rewrites its .csproj and .sln files
    /// there); an event naming nothing, such as a lost queue, does not.
    fn beside_the_roots(&self, paths: &[PathBuf]) -> bool {
        let root = self.roots[0].parent();
        !paths.is_empty() && paths.iter().all(|p| p.parent() == root && !self.roots.contains(p))
    }
}

/// Whether an event may change what a walk sees. Opening or reading a file
/// (the scan reads every `.meta`) does not; closing a file written does.
fn changes_the_tree(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// A watch error, with how to raise the limit it usually is.
fn watch_error(error: &notify::Error) -> String {
    match error.kind {
        notify::ErrorKind::MaxFilesWatch => format!(
            "the operating system's limit on watched folders was reached ({error})\n  help: raise it, e.g. `sudo sysctl fs.inotify.max_user_watches=1048576`, or run `unity-assets index` without --watch"
        ),
        _ => format!("the watch of the project failed: {error}\n  help: run `unity-assets index --watch` again"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("Assets")).unwrap();
        fs::create_dir_all(store::index_dir(dir.path())).unwrap();
        dir
    }

    /// A record a project ships (or a watcher that died left) vouches for
    /// nothing: no live process holds the lock.
    #[test]
    fn a_record_without_a_live_watcher_vouches_for_nothing() {
        let dir = project();
        let index = store::index_dir(dir.path());
        fs::write(index.join(LOCK_FILE), "").unwrap();
        fs::write(
            index.join(EPOCH_FILE),
            r#"{"watcher":"1-1","generation":1,"quiet":true,"answered":[]}"#,
        )
        .unwrap();
        assert_eq!(live_epoch(dir.path(), &Limits::default()), None);
        assert!(!index.join(BARRIERS).exists(), "no barrier asked of nobody");
    }

    /// A lock that is a FIFO is refused before it could block the run.
    #[cfg(unix)]
    #[test]
    fn a_fifo_for_a_lock_is_refused_without_blocking() {
        let dir = project();
        let lock = store::index_dir(dir.path()).join(LOCK_FILE);
        let path = std::ffi::CString::new(lock.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path and a plain mode.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
        assert_eq!(live_epoch(dir.path(), &Limits::default()), None);
    }

    /// Links a project ships where the watcher writes are replaced, never
    /// followed out of the project.
    #[cfg(unix)]
    #[test]
    fn the_watcher_writes_through_no_link_the_project_ships() {
        let dir = project();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("kept.txt");
        fs::write(&target, "kept").unwrap();
        let index = store::index_dir(dir.path());
        std::os::unix::fs::symlink(&target, index.join(EPOCH_FILE)).unwrap();
        std::os::unix::fs::symlink(outside.path(), index.join(BARRIERS)).unwrap();
        let watch = Watch::start(dir.path()).unwrap();
        drop(watch);
        assert_eq!(fs::read_to_string(&target).unwrap(), "kept");
        assert_eq!(
            fs::read_dir(outside.path()).unwrap().count(),
            1,
            "nothing written outside"
        );
    }

    #[test]
    fn reading_a_file_is_no_change_but_writing_one_is() {
        use notify::event::{CreateKind, ModifyKind};
        assert!(!changes_the_tree(&EventKind::Access(AccessKind::Open(
            AccessMode::Read
        ))));
        assert!(!changes_the_tree(&EventKind::Access(AccessKind::Close(
            AccessMode::Read
        ))));
        assert!(!changes_the_tree(&EventKind::Access(AccessKind::Open(AccessMode::Any))));
        assert!(changes_the_tree(&EventKind::Access(AccessKind::Close(
            AccessMode::Write
        ))));
        assert!(changes_the_tree(&EventKind::Modify(ModifyKind::Any)));
        assert!(changes_the_tree(&EventKind::Create(CreateKind::File)));
        assert!(changes_the_tree(&EventKind::Other));
    }

    /// A live watcher answers a run's barrier with its quiet epoch; a
    /// change ends the epoch before the next barrier is answered.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_change_ends_the_epoch_before_the_next_answer() {
        let dir = project();
        let watch = Watch::start(dir.path()).unwrap();
        watch.quiet().await.unwrap();
        let limits = Limits::default();
        let quiet = live_epoch(dir.path(), &limits).expect("a quiet epoch");
        fs::write(dir.path().join("Project.sln"), "rewritten by Unity").unwrap();
        assert_eq!(live_epoch(dir.path(), &limits), Some(quiet.clone()), "still quiet");
        fs::write(dir.path().join("Assets/new.png"), "x").unwrap();
        assert_eq!(live_epoch(dir.path(), &limits), None, "the write ended the epoch");
        watch.quiet().await.unwrap();
        let next = live_epoch(dir.path(), &limits).expect("a new quiet epoch");
        assert!(next.generation > quiet.generation && next.watcher == quiet.watcher);
        drop(watch);
        assert_eq!(live_epoch(dir.path(), &limits), None, "gone with its watcher");
    }
}
