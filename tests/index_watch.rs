//! `index --watch` on a generated realistic project: the watcher indexes
//! each change by itself; a no-op `index` beside it skips the walk (Linux)
//! yet never misses a file saved just before it; one watcher per project;
//! and once the watcher is gone, `index` walks again.

use std::fs;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use test_support::cli::{self, Run};
use test_support::large_project;

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");
const INDEX: &str = ".claude/unity-asset-index";
/// The debug line of a run that took the watcher's word instead of walking.
const NOT_WALKING: &str = "not walking";
/// Generous: a loaded CI machine, a debug build.
const PATIENCE: Duration = Duration::from_secs(120);

struct Watcher {
    child: Child,
    lines: Receiver<String>,
}

impl Watcher {
    fn start(project: &Path) -> Watcher {
        let mut child = cli::command(Path::new(BIN), project)
            .args(["index", "--watch"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the watcher starts");
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Watcher { child, lines }
    }

    /// The watcher's next summary line.
    fn next_run(&self) -> String {
        let line = self
            .lines
            .recv_timeout(PATIENCE)
            .expect("the watcher indexed within the patience");
        assert!(line.starts_with("[unity-assets:index] "), "{line}");
        line
    }

    /// Ctrl+C ends the watch, with exit 130 (as any interrupted command),
    /// whether it was waiting or running.
    fn stop(mut self) {
        #[cfg(unix)]
        {
            let pid = i32::try_from(self.child.id()).unwrap();
            // SAFETY: a plain signal to our own child.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
            let started = Instant::now();
            loop {
                if let Some(status) = self.child.try_wait().unwrap() {
                    assert_eq!(status.code(), Some(130), "Ctrl+C ends the watch with 130");
                    return;
                }
                assert!(started.elapsed() < PATIENCE, "the watcher did not stop on Ctrl+C");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        #[cfg(not(unix))]
        {
            self.child.kill().unwrap();
            self.child.wait().unwrap();
        }
    }
}

fn index(project: &Path) -> Run {
    let run = Run::of(
        cli::command(Path::new(BIN), project)
            .env("RUST_LOG", "unity_assets=debug")
            .arg("index"),
    );
    assert_eq!(run.code, 0, "{}", run.output());
    run
}

fn indexed(project: &Path) -> String {
    fs::read_to_string(project.join(INDEX).join("assets.jsonl")).unwrap()
}

/// A new prefab with its `.meta` (a fresh guid from `n`).
fn add_prefab(project: &Path, name: &str, n: u32) {
    let path = project.join("Assets/Watched").join(format!("{name}.prefab"));
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, "%YAML 1.1\n--- !u!1 &1\nGameObject:\n  m_Name: x\n").unwrap();
    fs::write(
        path.with_extension("prefab.meta"),
        format!("fileFormatVersion: 2\nguid: {n:032x}\nPrefabImporter:\n  externalObjects: {{}}\n"),
    )
    .unwrap();
}

#[test]
fn a_watcher_indexes_each_change_and_a_no_op_beside_it_skips_the_walk_yet_misses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let (words, _) = large_project::vocabulary(Path::new("no-corpora-here"));
    large_project::generate(project, 400, &words, 11).unwrap();

    let watcher = Watcher::start(project);
    let first = watcher.next_run();
    assert!(
        first.contains(" assets, ") && first.contains("changed "),
        "the first run indexes the project: {first}"
    );

    // A second watcher of the same project is refused, and says why.
    let second = Run::within(
        cli::command(Path::new(BIN), project).args(["index", "--watch"]),
        PATIENCE,
    )
    .expect("a refused watcher ends");
    assert_eq!(second.code, 1, "{}", second.output());
    assert!(
        second.stderr.contains("another watcher (`index --watch`) is watching"),
        "{}",
        second.output()
    );

    // Nothing changed: the run beside the watcher takes its word (Linux).
    let quiet = index(project);
    assert!(quiet.stdout.contains("changed 0,"), "{}", quiet.output());
    assert_eq!(
        quiet.stderr.contains(NOT_WALKING),
        cfg!(target_os = "linux"),
        "{}",
        quiet.output()
    );

    // A file saved just before a run is in the index when the run returns,
    // whether the run or the watcher indexed it first.
    for n in 1..=3 {
        add_prefab(project, &format!("saved_then_indexed_{n}"), n);
        index(project);
        assert!(
            indexed(project).contains(&format!("saved_then_indexed_{n}.prefab")),
            "edit {n} missed"
        );
    }

    // The watcher indexes a change by itself.
    // (Its summary line ends the run; earlier edits may have runs of their own.)
    add_prefab(project, "seen_by_the_watcher", 99);
    while !indexed(project).contains("seen_by_the_watcher.prefab") {
        watcher.next_run();
    }

    watcher.stop();
    // Without a watcher, a no-op walks again.
    let walked = index(project);
    assert!(walked.stdout.contains("changed 0,"), "{}", walked.output());
    assert!(!walked.stderr.contains(NOT_WALKING), "{}", walked.output());
    assert!(
        !project.join(INDEX).join("watch.json").exists(),
        "the record goes with its watcher"
    );
}

/// `mcp --watch`: the server keeps the index fresh beside it, its index
/// lines on stderr (stdout is the protocol's); the configured model provider
/// is not used unasked (its server is never called); doctor reports the
/// live watcher; closing the session ends both.
#[test]
fn mcp_watch_keeps_the_index_fresh_without_spending_tokens_and_stdout_stays_the_protocols() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let (words, _) = large_project::vocabulary(Path::new("no-corpora-here"));
    large_project::generate(project, 60, &words, 12).unwrap();
    // The model's server: a listener that counts who called.
    let model_server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let model_url = format!("http://{}/v1", model_server.local_addr().unwrap());
    model_server.set_nonblocking(true).unwrap();
    fs::create_dir_all(project.join(".claude")).unwrap();
    fs::write(
        project.join(".claude/unity-assets.yml"),
        format!("llm:\n  provider: openai\n  base_url: {model_url}\n  models: {{fast: tagger, default: tagger}}\n"),
    )
    .unwrap();
    let mut server = cli::command(Path::new(BIN), project)
        .args(["mcp", "--watch"])
        .env("UNITY_ASSETS_TRUST", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let wait_until = |what: &str, done: &dyn Fn() -> bool| {
        let started = Instant::now();
        while !done() {
            assert!(started.elapsed() < PATIENCE, "{what} within the patience");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let assets = project.join(INDEX).join("assets.jsonl");
    wait_until("the first index", &|| assets.is_file());
    add_prefab(project, "Lantern_Watched", 0xabc);
    wait_until("the new prefab indexed", &|| {
        indexed(project).contains("Lantern_Watched")
    });

    let doctor = Run::of(cli::command(Path::new(BIN), project).args(["doctor", "--offline"]));
    assert!(
        doctor.stdout.contains(&format!(
            "watcher (`index --watch` or `mcp --watch`) is running (pid {})",
            server.id()
        )),
        "{}",
        doctor.output()
    );

    // The protocol answers on stdout, and nothing else is written there.
    let mut stdin = server.stdin.take().unwrap();
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#;
    writeln!(stdin, "{initialize}").unwrap();
    drop(stdin);
    let output = server.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.lines().count() >= 1, "{stdout}\n{stderr}");
    for line in stdout.lines() {
        let message: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
    }
    let runs: Vec<&str> = stderr.lines().filter(|l| l.contains(" tagged by llm ")).collect();
    assert!(runs.len() >= 2, "{stderr}");
    assert!(
        runs.iter().all(|l| l.contains(" tagged by llm 0 / builtin ")),
        "{stderr}"
    );
    assert!(model_server.accept().is_err(), "the watcher called the model's server");
}
