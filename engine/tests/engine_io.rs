//! The file guarantees under real failure: a writer killed with SIGKILL
//! mid-write leaves the previous file intact, a reader racing the writer
//! only ever sees a whole file, and concurrent appenders —
//! threads and whole processes — never tear or lose a line.
//!
//! The child processes are this test binary itself, re-run on one helper
//! test with an environment variable saying what to do. The helpers are
//! `#[ignore]`d so a plain run does not count them as passing tests, and they
//! fail without their variable; so `cargo test -- --ignored` fails on them by
//! design (they are only meant to be run by their parent test).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use engine::io::{append_line_locked, write_atomic, AppendError, AtomicFile};

const SLOW_WRITER_ENV: &str = "ENGINE_IO_TEST_SLOW_WRITER";
const APPENDER_ENV: &str = "ENGINE_IO_TEST_APPENDER";
const APPENDS_PER_WRITER: usize = 150;
/// Four tries 50 ms apart: a `Locked` error has waited three pauses (150 ms);
/// the budget leaves slack for coarse timers.
const LOCK_BUDGET: Duration = Duration::from_millis(100);

/// Re-run this test binary on one (ignored) helper test with `env` set.
fn helper(test: &str, env: (&str, &str)) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary path"));
    cmd.args(["--ignored", "--exact", test, "--nocapture", "--test-threads=1"])
        .env(env.0, env.1);
    cmd
}

/// Child side of the crash test: write a large file slowly, never committing.
#[test]
#[ignore = "a child of sigkill_mid_write_leaves_the_previous_file_intact; fails when run alone"]
fn helper_slow_atomic_writer() {
    let target = std::env::var(SLOW_WRITER_ENV).expect("run by its parent test, with ENGINE_IO_TEST_SLOW_WRITER set");
    let mut file = AtomicFile::create(Path::new(&target)).expect("temp file");
    // Bounded, so an orphaned child ends by itself (~10 s).
    for _ in 0..2_000 {
        file.write_all(&[b'n'; 64 * 1024]).expect("write");
        file.flush().expect("flush");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Temp files AtomicFile made next to `dest`, with their sizes.
fn temp_files(dest: &Path) -> Vec<(PathBuf, u64)> {
    let name = dest.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::read_dir(dest.parent().unwrap())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&format!(".{name}.")))
        .map(|e| (e.path(), e.metadata().map(|m| m.len()).unwrap_or(0)))
        .collect()
}

#[test]
fn sigkill_mid_write_leaves_the_previous_file_intact() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("index.json");
    let previous: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    write_atomic(&dest, &previous).unwrap();

    let mut child = helper("helper_slow_atomic_writer", (SLOW_WRITER_ENV, dest.to_str().unwrap()))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    // Kill only once the new content is well under way (more than 1 MiB on disk).
    while !temp_files(&dest).iter().any(|(_, len)| *len > 1 << 20) {
        assert!(Instant::now() < deadline, "the writer never got going");
        assert!(child.try_wait().unwrap().is_none(), "the writer exited early");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL on Unix: no destructor runs
    child.wait().unwrap();

    assert!(
        std::fs::read(&dest).unwrap() == previous,
        "the previous file survives byte-identical"
    );
    // The killed writer's temp file is left behind (nothing can remove it),
    // but it never took the destination's name.
    assert_eq!(temp_files(&dest).len(), 1);
}

/// Appends [`APPENDS_PER_WRITER`] padded lines as `writer`; returns
/// (successes, locked errors), checking each `Locked` spent the budget.
fn append_many(path: &Path, writer: &str) -> (usize, usize) {
    let (mut ok, mut locked) = (0, 0);
    for seq in 0..APPENDS_PER_WRITER {
        // Long lines make a torn or interleaved write visible.
        let line = serde_json::json!({"writer": writer, "seq": seq, "pad": "p".repeat(4000)}).to_string();
        let started = Instant::now();
        match append_line_locked(path, &line) {
            Ok(()) => ok += 1,
            Err(AppendError::Locked { .. }) => {
                assert!(
                    started.elapsed() >= LOCK_BUDGET,
                    "`Locked` after only {:?}",
                    started.elapsed()
                );
                locked += 1;
            }
            Err(e) => panic!("append failed: {e}"),
        }
    }
    (ok, locked)
}

/// Child side of the lock test: append, then report the counts on stdout.
#[test]
#[ignore = "a child of concurrent_appends_from_threads_and_processes_stay_whole; fails when run alone"]
fn helper_appender() {
    let spec = std::env::var(APPENDER_ENV).expect("run by its parent test, with ENGINE_IO_TEST_APPENDER set");
    let (path, writer) = spec.split_once('|').expect("path|writer");
    let (ok, locked) = append_many(Path::new(path), writer);
    println!("appended ok={ok} locked={locked}");
}

#[test]
fn concurrent_appends_from_threads_and_processes_stay_whole() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let children: Vec<_> = (0..3)
        .map(|p| {
            let spec = format!("{}|process-{p}", log.display());
            helper("helper_appender", (APPENDER_ENV, &spec))
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let log = log.clone();
            std::thread::spawn(move || append_many(&log, &format!("thread-{t}")))
        })
        .collect();

    let (mut ok, mut locked) = (0, 0);
    for t in threads {
        let (o, l) = t.join().unwrap();
        ok += o;
        locked += l;
    }
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "appender process failed: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let counts = stdout
            .lines()
            .find_map(|l| l.split_once("appended ").map(|(_, counts)| counts))
            .unwrap_or_else(|| panic!("no counts in: {stdout}"));
        let parse = |key: &str| {
            counts
                .split(' ')
                .find_map(|kv| kv.strip_prefix(key))
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap()
        };
        ok += parse("ok=");
        locked += parse("locked=");
    }

    assert_eq!(ok + locked, 7 * APPENDS_PER_WRITER);
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines = 0;
    for (i, line) in text.lines().enumerate() {
        let row: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {} is torn: {e}", i + 1));
        assert_eq!(row["pad"].as_str().map(str::len), Some(4000), "line {} is whole", i + 1);
        lines += 1;
    }
    assert_eq!(lines, ok, "every successful append is one line; no other line exists");
    assert!(!dir.path().join("audit.jsonl.lock").exists(), "the lock is released");
    eprintln!("appends: {ok} ok, {locked} locked");
}

/// Why the rename matters: a reader opening the destination while it is being
/// replaced must get one whole file. Copy-then-delete (or writing in place)
/// would let it read a truncated or half-written file.
#[test]
fn a_concurrent_reader_sees_only_whole_files() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    const SIZE: usize = 4 << 20;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("index.json");
    // Distinct in every byte, so any mix of the two is recognisable.
    let old: Arc<Vec<u8>> = Arc::new((0..SIZE).map(|i| (i % 251) as u8).collect());
    let new: Arc<Vec<u8>> = Arc::new((0..SIZE).map(|i| (i % 241) as u8 ^ 0x80).collect());
    write_atomic(&dest, &old).unwrap();

    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (dest, old, new, done) = (dest.clone(), old.clone(), new.clone(), done.clone());
        std::thread::spawn(move || {
            let mut reads = 0usize;
            while !done.load(Ordering::Acquire) {
                let seen = std::fs::read(&dest).expect("the destination always exists");
                assert!(
                    seen == *old || seen == *new,
                    "a reader saw {} bytes, neither file whole",
                    seen.len()
                );
                reads += 1;
            }
            reads
        })
    };
    for round in 0..40 {
        write_atomic(&dest, if round % 2 == 0 { &new } else { &old }).unwrap();
    }
    done.store(true, Ordering::Release);
    let reads = reader.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
    assert!(reads > 0, "the reader never ran while the writer did");
}
