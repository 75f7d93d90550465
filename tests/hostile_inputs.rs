//! Inputs that wedge or spin a run, and the messages around `pick`: a
//! corrupt index, a FIFO or device given to `eval`, a template loop that
//! never ends, a hand-edited search result, an index that is not a number.
//! Each case runs the binary with a bound, so a hang fails instead of
//! blocking the suite.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use test_support::cli::{self, Run};

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");
const ZOMBIE_GUID: &str = "0123456789abcdef0123456789abcdef";

/// A Unity project in a temp folder, with its own user config folder.
struct Project {
    root: tempfile::TempDir,
}

impl Project {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        for d in ["project/Assets", "config"] {
            std::fs::create_dir_all(root.path().join(d)).unwrap();
        }
        Self { root }
    }

    /// A project holding `Assets/Zombie.prefab`.
    fn with_zombie() -> Self {
        let p = Self::new();
        p.asset("Assets/Zombie.prefab", ZOMBIE_GUID);
        p
    }

    fn dir(&self) -> PathBuf {
        self.root.path().join("project")
    }

    fn index_file(&self, name: &str) -> PathBuf {
        self.dir().join(".claude/unity-asset-index").join(name)
    }

    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.dir().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    fn asset(&self, rel: &str, guid: &str) {
        self.write(rel, "");
        self.write(&format!("{rel}.meta"), format!("fileFormatVersion: 2\nguid: {guid}\n"));
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = cli::command(Path::new(BIN), &self.dir());
        c.args(args)
            .env("XDG_CONFIG_HOME", self.root.path().join("config"))
            .env_remove("UNITY_ASSETS_TRUST")
            .stdin(Stdio::null());
        c
    }

    /// Run with a bound: a hang fails the test instead of blocking it.
    fn run(&self, args: &[&str]) -> Run {
        Run::within(&mut self.command(args), Duration::from_secs(60))
            .unwrap_or_else(|| panic!("`{}` hung", args.join(" ")))
    }

    fn ok(&self, args: &[&str]) -> Run {
        let run = self.run(args);
        assert_eq!(run.code, 0, "`{}`: {run:?}", args.join(" "));
        run
    }

    fn result(&self) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(self.index_file("search-result.json")).unwrap()).unwrap()
    }

    fn write_result(&self, result: &serde_json::Value) {
        std::fs::write(
            self.index_file("search-result.json"),
            serde_json::to_string_pretty(result).unwrap(),
        )
        .unwrap();
    }
}

// ---- A corrupt assets.jsonl ----------------------------------------------------

/// The two corruptions of the issue: one 2 MiB row (over `limits.line_kb`),
/// and one byte that is not UTF-8.
fn corruptions() -> Vec<(&'static str, Vec<u8>)> {
    let long_row = format!("{{\"guid\": \"{}\"}}\n", "x".repeat(2 * 1024 * 1024)).into_bytes();
    vec![
        ("a 2 MiB row", long_row),
        ("a non-UTF-8 byte", b"{\"guid\": \"\xff\"}\n".to_vec()),
    ]
}

fn corrupt(p: &Project, row: &[u8]) {
    let path = p.index_file("assets.jsonl");
    let mut bytes = row.to_vec();
    bytes.extend(std::fs::read(&path).unwrap());
    std::fs::write(&path, bytes).unwrap();
}

#[test]
fn a_corrupt_assets_jsonl_is_rebuilt_by_index_reindex_and_search_reindex() {
    for (what, row) in corruptions() {
        for command in [&["index"][..], &["reindex"], &["search", "zombie", "--reindex"]] {
            let p = Project::with_zombie();
            p.ok(&["index"]);
            corrupt(&p, &row);
            let run = p.run(command);
            assert_eq!(run.code, 0, "{what}, `{}`: {run:?}", command.join(" "));
            let text = std::fs::read_to_string(p.index_file("assets.jsonl")).expect("assets.jsonl is UTF-8 again");
            assert_eq!(text.lines().count(), 1, "{what}: {text:.200}");
            assert!(text.contains(ZOMBIE_GUID) && text.len() < 4096, "{what}: {text:.200}");
            // The next run finds a fresh index.
            p.ok(&["index"]);
            assert!(p.ok(&["doctor", "--offline"]).stdout.contains("✓ index:"));
        }
    }
}

/// The asset whose own row cannot be read is tagged again by the tag stage
/// (counted as changed), not carried over from a row nobody can read.
#[test]
fn index_tags_again_an_asset_whose_row_cannot_be_read() {
    let p = Project::with_zombie();
    p.ok(&["index"]);
    let path = p.index_file("assets.jsonl");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.windows(6).position(|w| w == b"Zombie").unwrap();
    bytes[at] = 0xff;
    std::fs::write(&path, bytes).unwrap();
    let run = p.ok(&["index"]);
    assert!(run.stdout.contains("changed 1,"), "{run:?}");
    assert!(
        run.stderr.contains("assets.jsonl:1: the line is not UTF-8 text"),
        "{run:?}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"path\":\"Assets/Zombie.prefab\""), "{text}");
}

#[test]
fn doctor_reports_a_corrupt_assets_jsonl_with_its_fix() {
    for (what, row) in corruptions() {
        let p = Project::with_zombie();
        p.ok(&["index"]);
        corrupt(&p, &row);
        let run = p.run(&["doctor", "--offline"]);
        assert_eq!(run.code, 1, "{what}: {run:?}");
        let index_line = run
            .lines()
            .into_iter()
            .find(|l| l.starts_with("✗ index:"))
            .unwrap_or_else(|| panic!("{what}: no index check line: {run:?}"));
        assert!(
            index_line.contains("assets.jsonl line 1 cannot be used")
                && index_line.ends_with(&format!(
                    "fix: run {}",
                    test_support::cli::suggested(&p.dir(), "reindex")
                )),
            "{what}: {index_line}"
        );
        // Every other check still prints its line.
        for check in ["✓ project root:", "✓ config:", "✓ feedback:", "✓ provider:"] {
            assert!(run.stdout.contains(check), "{what}: {check} missing: {run:?}");
        }
    }
}

// ---- eval FILE reads like every other read ------------------------------------

#[cfg(unix)]
#[test]
fn eval_refuses_a_fifo_and_a_device_instead_of_hanging() {
    let p = Project::with_zombie();
    let fifo = p.dir().join("golden.yml");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for (file, kind) in [(fifo.to_str().unwrap(), "a FIFO"), ("/dev/zero", "a device")] {
        let run = p.run(&["eval", file]);
        assert_eq!(run.code, 2, "{run:?}");
        assert!(
            run.stderr.contains(&format!("`{file}` is {kind}, not a regular file")),
            "{run:?}"
        );
    }
}

#[test]
fn eval_names_the_file_limit() {
    let p = Project::with_zombie();
    p.write(".claude/unity-assets.yml", "limits: {file_mb: 1}\n");
    p.write(
        "golden.yml",
        format!("# {}\nqueries: []\n", "x".repeat(2 * 1024 * 1024)),
    );
    let golden = p.dir().join("golden.yml");
    let run = p.run(&["eval", golden.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("limits.file_mb"), "{run:?}");
}

// ---- Template loops ------------------------------------------------------------

/// A pipeline override that prints a line, then spins in nested loops
/// (10⁸ iterations: minutes, unbounded as far as a user can tell).
fn spinning_project() -> Project {
    let p = Project::with_zombie();
    p.write(
        ".claude/unity-assets/pipelines/spin.yaml",
        "pipeline: spin\nstages:\n  started:\n    emit: started\n  loop:\n    needs: [started]\n    \
         emit: \"{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}done\"\n",
    );
    p
}

#[test]
fn a_template_loop_stops_at_its_fuel_with_a_message_naming_the_key() {
    let p = spinning_project();
    p.write(".claude/unity-assets.yml", "limits: {template_fuel: 100000}\n");
    let run = p.run(&["run", "spin"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("stage `loop` of pipeline `spin`") && run.stderr.contains("limits.template_fuel"),
        "{run:?}"
    );
    // The engine names no settings file: the product tells it which.
    assert!(
        run.stderr
            .contains("raise the limit in .claude/unity-assets.yml if the template is genuine"),
        "{run:?}"
    );
    assert!(!run.stdout.contains("done"), "{run:?}");
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_a_run_stuck_in_a_template() {
    let p = spinning_project();
    let mut child = p
        .command(&["run", "spin"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The run has started (and with it the Ctrl+C watcher) once it prints.
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "started\n");
    std::thread::sleep(Duration::from_millis(300));
    assert!(Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    let sent = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if sent.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("the run kept spinning 20 s after Ctrl+C");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"), "{out:?}");
}

// ---- pick ------------------------------------------------------------------------

#[test]
fn pick_refuses_a_candidate_path_outside_the_project() {
    for forged in ["../../../../etc/passwd", "/etc/passwd", "Assets/Other.prefab"] {
        let p = Project::with_zombie();
        p.ok(&["search", "zombie", "--reindex"]);
        let mut result = p.result();
        // The guid is the indexed one: only the path was edited.
        assert_eq!(result["groups"][0]["candidates"][0]["guid"], ZOMBIE_GUID);
        result["groups"][0]["candidates"][0]["path"] = forged.into();
        p.write_result(&result);
        let run = p.run(&["pick", "0"]);
        assert_eq!(run.code, 1, "{forged}: {run:?}");
        assert!(
            run.stdout.starts_with(&format!(
                "[unity-assets:pick] error: candidate {ZOMBIE_GUID} names path `{forged}`, not its indexed path `Assets/Zombie.prefab`"
            )),
            "{run:?}"
        );
        assert!(run.stdout.contains("help: search-result.json was edited"), "{run:?}");
        assert!(!p.index_file("feedback.jsonl").exists(), "{forged} was recorded");
    }
}

#[test]
fn pick_shows_the_path_under_the_fixed_line() {
    let p = Project::with_zombie();
    p.ok(&["search", "zombie", "--reindex"]);
    let run = p.ok(&["pick", "0"]);
    assert_eq!(
        run.lines(),
        [
            format!("[unity-assets:pick] recorded: {ZOMBIE_GUID}").as_str(),
            "  path: Assets/Zombie.prefab"
        ]
    );
}

#[test]
fn pick_on_an_empty_result_says_there_is_nothing_to_pick() {
    let p = Project::with_zombie();
    p.ok(&["search", "zombie", "--reindex"]);
    let mut result = p.result();
    result["status"] = "no_match".into();
    result["groups"] = serde_json::json!([]);
    p.write_result(&result);
    let run = p.run(&["pick", "0"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.lines()[0],
        "[unity-assets:pick] error: the last search (\"zombie\") has no candidate to pick"
    );
    assert!(!run.stdout.contains("max -1"), "{run:?}");
}

/// The CLI and the pipeline (what an MCP call runs) say the same about text.
#[test]
fn a_pick_index_given_as_text_gets_one_message_everywhere() {
    let p = Project::with_zombie();
    p.ok(&["search", "zombie", "--reindex"]);
    let expected =
        "[unity-assets:pick] error: `abc` is not a candidate number; pass 0, 1, 2 … as the last search listed them";
    let cli = p.run(&["pick", "abc"]);
    assert_eq!(cli.code, 2, "{cli:?}");
    assert!(cli.stderr.starts_with(expected), "{cli:?}");
    // `run pick` is the same invocation as `pick` (and as the MCP tool).
    let pipeline = p.run(&["run", "pick", "--input", "index=abc"]);
    assert_eq!(pipeline.code, 2, "{pipeline:?}");
    assert!(pipeline.stderr.starts_with(expected), "{pipeline:?}");
    for run in [&cli.stderr, &pipeline.stderr] {
        assert!(
            run.contains("pick counts from 0") && run.contains("counts from 1"),
            "{run}"
        );
    }
}

#[test]
fn a_search_says_it_has_more_candidates_than_it_shows() {
    let p = Project::new();
    for (i, name) in ["ZombieA", "ZombieB", "ZombieC", "ZombieD", "ZombieE"]
        .iter()
        .enumerate()
    {
        p.asset(&format!("Assets/{name}.prefab"), &format!("{i:0>32}"));
    }
    // Six candidates kept, three shown (as a map-reduce keeps ten).
    p.write(".claude/unity-assets.yml", "search: {asset_top_k: 6}\n");
    let run = p.ok(&["search", "zombie", "--reindex"]);
    let candidates = p.result()["groups"][0]["candidates"].as_array().unwrap().len();
    assert_eq!(candidates, 5, "{run:?}");
    let more = format!(
        "   … and {} more, [3]–[{}], in search-result.json",
        candidates - 3,
        candidates - 1
    );
    assert!(run.lines().contains(&more.as_str()), "{run:?}");
    let last = (candidates - 1).to_string();
    assert!(p
        .ok(&["pick", &last])
        .stdout
        .starts_with("[unity-assets:pick] recorded: "));
}

#[test]
fn an_empty_lock_says_whose_it_is_and_when_it_goes_stale() {
    let p = Project::with_zombie();
    p.ok(&["search", "zombie", "--reindex"]);
    std::fs::write(p.index_file("feedback.jsonl.lock"), "").unwrap();
    let run = p.run(&["pick", "0"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.lines()[0], "[unity-assets:pick] error: feedback.jsonl locked");
    assert!(
        run.stdout.contains("help: feedback.jsonl.lock is empty")
            && run
                .stdout
                .contains("killed before it did; it counts as stale 10s after it was made"),
        "{run:?}"
    );
}

// ---- Names that are not UTF-8 -----------------------------------------------------

#[cfg(target_os = "linux")]
#[test]
fn a_file_name_that_is_not_utf8_is_named_as_such() {
    use std::os::unix::ffi::OsStrExt;
    let p = Project::with_zombie();
    let name = std::ffi::OsStr::from_bytes(b"Z\xffombie.prefab");
    let meta = std::ffi::OsStr::from_bytes(b"Z\xffombie.prefab.meta");
    std::fs::write(p.dir().join("Assets").join(name), "").unwrap();
    std::fs::write(
        p.dir().join("Assets").join(meta),
        "fileFormatVersion: 2\nguid: 11111111111111111111111111111111\n",
    )
    .unwrap();
    let run = p.ok(&["index", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let details: Vec<&str> = report["warning_list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["detail"].as_str().unwrap())
        .collect();
    assert_eq!(details.len(), 2, "{report}");
    assert!(
        details
            .iter()
            .all(|d| d.contains("not UTF-8") && !d.contains("No such file")),
        "{details:?}"
    );
    assert_eq!(report["assets"], 1);
}
