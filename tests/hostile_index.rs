//! Hostile or damaged index files, and the watcher beside them: what one
//! asset, one edited row or one bad byte can do to every later run. Each
//! case runs the real binary on a project of its own, with its own user
//! config folder.

use std::fs;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;
use test_support::cli::{self, Run};

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");
const INDEX: &str = ".claude/unity-asset-index";
const ZOMBIE: &str = "0123456789abcdef0123456789abcdef";
/// Generous: a loaded machine, a debug build.
const PATIENCE: Duration = Duration::from_secs(120);

/// A project in a temp folder, its user config folder, and an "outside"
/// folder standing for the rest of the machine.
struct Fixture {
    root: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        for d in ["project/Assets", "outside", "config"] {
            fs::create_dir_all(root.path().join(d)).unwrap();
        }
        Self { root }
    }

    fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    fn outside(&self) -> PathBuf {
        self.root.path().join("outside")
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.project().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    /// An asset file and its `.meta` with `guid`.
    fn asset(&self, rel: &str, guid: &str) {
        self.write(rel, "");
        self.write(&format!("{rel}.meta"), &meta(guid));
    }

    /// A few assets, a zombie prefab among them.
    fn small_project(&self) {
        self.asset("Assets/Enemies/Zombie.prefab", ZOMBIE);
        self.asset("Assets/Props/Crate.prefab", &format!("{:032x}", 2));
        self.asset("Assets/Audio/Groan.wav", &format!("{:032x}", 3));
    }

    fn index_file(&self, name: &str) -> PathBuf {
        self.project().join(INDEX).join(name)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = cli::command(Path::new(BIN), &self.project());
        c.args(args)
            .env("XDG_CONFIG_HOME", self.root.path().join("config"))
            .env_remove("UNITY_ASSETS_TRUST")
            .stdin(Stdio::null());
        c
    }

    /// Run with a bound: a hang fails the test instead of blocking it.
    fn run(&self, args: &[&str]) -> Run {
        Run::within(&mut self.command(args), PATIENCE).unwrap_or_else(|| panic!("`{}` hung", args.join(" ")))
    }

    fn ok(&self, args: &[&str]) -> Run {
        let run = self.run(args);
        assert_eq!(run.code, 0, "`{}`: {run:?}", args.join(" "));
        run
    }

    /// Replace an index file's bytes and keep its modification time, as a
    /// project that ships its index would: the index stays fresh.
    fn ship(&self, name: &str, bytes: &[u8]) {
        let path = self.index_file(name);
        let modified = fs::metadata(&path).unwrap().modified().unwrap();
        fs::write(&path, bytes).unwrap();
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(modified)
            .unwrap();
    }

    fn rows(&self) -> Vec<Value> {
        fs::read_to_string(self.index_file("assets.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn meta(guid: &str) -> String {
    format!("fileFormatVersion: 2\nguid: {guid}\n")
}

/// Every candidate path of a `search --json` answer.
fn candidate_paths(run: &Run) -> Vec<String> {
    let result = run.json();
    let groups = result["groups"].as_array().cloned().unwrap_or_default();
    groups
        .iter()
        .flat_map(|g| g["candidates"].as_array().cloned().unwrap_or_default())
        .map(|c| c["path"].as_str().unwrap_or_default().to_owned())
        .collect()
}

// ---- Hole 5: one asset with ~30,000 references ------------------------------

/// The indexer never writes a row its own readers refuse: the row keeps a
/// bounded list of references and their count, the graph keeps them all.
#[test]
fn one_prefab_referencing_30000_assets_indexes_and_searches() {
    const MANY: usize = 30_000;
    let f = Fixture::new();
    let mut prefab = String::from(
        "%YAML 1.1\n%TAG !u! tag:unity3d.com,2011:\n--- !u!1 &1\nGameObject:\n  m_Name: Hub\n--- !u!114 &2\nMonoBehaviour:\n  m_Items:\n",
    );
    let many = f.project().join("Assets/Many");
    fs::create_dir_all(&many).unwrap();
    for i in 0..MANY {
        let guid = format!("{:032x}", i + 1);
        fs::write(many.join(format!("Item{i}.asset")), "").unwrap();
        fs::write(many.join(format!("Item{i}.asset.meta")), meta(&guid)).unwrap();
        prefab.push_str(&format!("  - {{fileID: 11400000, guid: {guid}, type: 2}}\n"));
    }
    f.write("Assets/Hub.prefab", &prefab);
    f.write("Assets/Hub.prefab.meta", &meta(&"f".repeat(32)));

    f.ok(&["index"]);
    let rows = f.rows();
    assert_eq!(rows.len(), MANY + 1);
    let hub = rows.iter().find(|r| r["path"] == "Assets/Hub.prefab").unwrap();
    assert_eq!(hub["dependency_count"], MANY, "the row counts every reference");
    let listed = hub["dependencies"].as_array().unwrap().len();
    assert!(listed < MANY, "the row lists a bounded number of them: {listed}");
    let longest = fs::read_to_string(f.index_file("assets.jsonl"))
        .unwrap()
        .lines()
        .map(str::len)
        .max()
        .unwrap();
    assert!(longest < 512 * 1024, "a row of {longest} bytes");

    let search = f.ok(&["search", "hub", "--json"]);
    assert!(
        candidate_paths(&search).iter().any(|p| p == "Assets/Hub.prefab"),
        "{search:?}"
    );
    // The graph has every reference, the last one included.
    let refs = f.ok(&["refs", &format!("Assets/Many/Item{}.asset", MANY - 1)]);
    assert!(refs.stdout.contains("Assets/Hub.prefab"), "{refs:?}");
    f.ok(&["reindex"]);
    f.ok(&["search", "hub"]);
}

// ---- Hole 6: rows naming paths outside the project --------------------------

/// A shipped or edited `assets.jsonl` row `/etc/…` is skipped by every
/// reader (search, pick, build), doctor names it, and `index` writes the
/// file again.
#[test]
fn an_index_row_outside_the_project_is_skipped_and_never_picked_or_built() {
    let f = Fixture::new();
    f.small_project();
    f.ok(&["index"]);
    let text = fs::read_to_string(f.index_file("assets.jsonl")).unwrap();
    assert!(text.contains("\"Assets/Enemies/Zombie.prefab\""));
    for outside in ["/etc/zombie.prefab", "Assets/../../etc/zombie.prefab"] {
        let shipped = text.replace("\"Assets/Enemies/Zombie.prefab\"", &format!("{outside:?}"));
        f.ship("assets.jsonl", shipped.as_bytes());

        let search = f.ok(&["search", "zombie", "--json"]);
        let paths = candidate_paths(&search);
        assert!(!paths.iter().any(|p| p.contains("etc")), "{outside}: {paths:?}");

        let doctor = f.run(&["doctor", "--offline"]);
        assert_eq!(doctor.code, 1, "{doctor:?}");
        assert!(
            doctor.stdout.contains("✗ index:") && doctor.stdout.contains("assets.jsonl line"),
            "{doctor:?}"
        );

        // A search result naming the row, as an older search would have.
        let result_path = f.index_file("search-result.json");
        let mut result: Value = serde_json::from_str(&fs::read_to_string(&result_path).unwrap()).unwrap();
        result["status"] = "ok".into();
        result["groups"] = serde_json::json!([{
            "sub_intent": "zombie",
            "candidates": [{"guid": ZOMBIE, "path": outside, "confidence": 0.95, "reasoning": "shipped"}],
        }]);
        fs::write(&result_path, result.to_string()).unwrap();
        let pick = f.run(&["pick", "0"]);
        assert_eq!(pick.code, 1, "{outside}: {pick:?}");
        assert!(pick.stdout.contains("is not in the index"), "{pick:?}");
        assert!(!f.index_file("feedback.jsonl").exists(), "{outside} was recorded");

        let build = f.run(&["build", "zombie", "--yes"]);
        assert!(
            build.stdout.contains("scope_violation") && !build.stdout.contains("mcp_unavailable"),
            "{outside}: nothing goes to the editor: {build:?}"
        );
        assert!(build.stderr.contains("is refused"), "the skip names why: {build:?}");
        let audit = fs::read_to_string(f.index_file("orchestrator-audit.jsonl")).unwrap();
        assert!(audit.lines().all(|l| l.contains("\"denied\"")), "{audit}");

        // The next `index` finds the row it cannot read and writes the file again.
        let index = f.ok(&["index"]);
        assert!(index.stdout.contains("[unity-assets:index] 3 assets"), "{index:?}");
        let again = fs::read_to_string(f.index_file("assets.jsonl")).unwrap();
        assert!(again.contains("\"Assets/Enemies/Zombie.prefab\"") && !again.contains("etc/zombie"));
        assert!(f.ok(&["doctor", "--offline"]).stdout.contains("✓ index:"));
        fs::remove_file(f.index_file("orchestrator-audit.jsonl")).unwrap();
    }
}

// ---- Hole 7: one bad byte ----------------------------------------------------

/// A line that is not UTF-8 in `feedback.jsonl`, `packages.jsonl` or
/// `assets.jsonl` costs that line: search answers, doctor names it, and a
/// no-op `index` writes the index's own files again.
#[test]
fn one_bad_byte_in_an_index_file_costs_that_line_only() {
    let f = Fixture::new();
    f.small_project();
    f.ok(&["index"]);
    f.ok(&["search", "zombie"]);
    f.ok(&["pick", "0"]);

    let feedback = f.index_file("feedback.jsonl");
    let mut bytes = fs::read(&feedback).unwrap();
    bytes.extend(b"\xff\xfe{\"broken\n");
    fs::write(&feedback, &bytes).unwrap();
    let search = f.ok(&["search", "zombie"]);
    assert!(
        search.has_line("[unity-assets:search] feedback row skipped: line 2"),
        "{search:?}"
    );
    let doctor = f.run(&["doctor", "--offline"]);
    assert!(
        doctor.stdout.contains("✗ feedback: 1 ok / 1 corrupted (lines 2)"),
        "{doctor:?}"
    );
    fs::remove_file(&feedback).unwrap();

    let packages = fs::read(f.index_file("packages.jsonl")).unwrap();
    let mut bad = packages.clone();
    bad.extend(b"\xff{\"package_id\": \n");
    f.ship("packages.jsonl", &bad);
    f.ok(&["search", "zombie"]);
    let doctor = f.run(&["doctor", "--offline"]);
    assert_eq!(doctor.code, 1, "{doctor:?}");
    let line = doctor
        .stdout
        .lines()
        .find(|l| l.starts_with("✗ index:"))
        .unwrap_or_default();
    assert!(
        line.contains("packages.jsonl line")
            && line.ends_with(&format!(
                "— fix: run {}",
                test_support::cli::suggested(&f.project(), "index")
            )),
        "{doctor:?}"
    );
    let index = f.ok(&["index"]);
    assert!(
        index.stderr.contains("packages.jsonl:"),
        "the no-op says what it rewrites: {index:?}"
    );
    assert_eq!(
        fs::read(f.index_file("packages.jsonl")).unwrap(),
        packages,
        "written again"
    );
    assert_eq!(f.ok(&["doctor", "--offline"]).code, 0);

    let assets = fs::read(f.index_file("assets.jsonl")).unwrap();
    let mut bad = assets.clone();
    bad.extend(b"{\"guid\": \"\xff\"}\n");
    f.ship("assets.jsonl", &bad);
    let search = f.ok(&["search", "zombie", "--json"]);
    assert!(
        candidate_paths(&search).contains(&"Assets/Enemies/Zombie.prefab".to_owned()),
        "{search:?}"
    );
    f.ok(&["index"]);
    assert_eq!(fs::read(f.index_file("assets.jsonl")).unwrap(), assets, "written again");
}

// ---- Holes 11 and 12: the watcher ---------------------------------------------

/// `index --watch` in the background, its summary lines read as they come.
struct Watcher {
    child: Child,
    lines: Receiver<String>,
}

impl Watcher {
    fn start(f: &Fixture) -> Watcher {
        let mut child = f
            .command(&["index", "--watch"])
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
        let watcher = Watcher { child, lines };
        let first = watcher.lines.recv_timeout(PATIENCE).expect("the watcher's first run");
        assert!(first.starts_with("[unity-assets:index] "), "{first}");
        watcher
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Ctrl+C, as a user ends it.
    fn stop(mut self) {
        let pid = i32::try_from(self.child.id()).unwrap();
        // SAFETY: a plain signal to our own child.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
        let started = Instant::now();
        while self.child.try_wait().unwrap().is_none() {
            assert!(started.elapsed() < PATIENCE, "the watcher did not stop on Ctrl+C");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A `.meta` with a second name outside the project can be rewritten
/// where no watch sees it: a tree holding one is never vouched for, so a
/// no-op `index` beside the watcher walks and finds the change.
#[cfg(target_os = "linux")]
#[test]
fn a_watcher_never_vouches_for_a_tree_holding_a_hard_linked_file() {
    let f = Fixture::new();
    f.small_project();
    let other_name = f.outside().join("Shared.prefab.meta");
    fs::write(&other_name, meta(&"a".repeat(32))).unwrap();
    f.write("Assets/Shared.prefab", "");
    fs::hard_link(&other_name, f.project().join("Assets/Shared.prefab.meta")).unwrap();

    let watcher = Watcher::start(&f);
    let debug = |f: &Fixture| {
        let run = Run::within(f.command(&["index"]).env("RUST_LOG", "unity_assets=debug"), PATIENCE).unwrap();
        assert_eq!(run.code, 0, "{run:?}");
        run
    };
    let quiet = debug(&f);
    assert!(
        !quiet.stderr.contains("not walking"),
        "vouched for a hard link: {quiet:?}"
    );

    // Rewritten through its other name: the same file, no event in the project.
    fs::write(&other_name, meta(&"b".repeat(32))).unwrap();
    debug(&f);
    let rows = f.rows();
    assert!(
        rows.iter().any(|r| r["guid"] == "b".repeat(32).as_str()),
        "the rewrite was missed: {rows:?}"
    );
    watcher.stop();
}

/// The watcher's own files are the index folder's, and doctor says a
/// watcher is running, with its process id.
#[cfg(unix)]
#[test]
fn doctor_knows_the_watchers_files_and_says_it_runs() {
    let f = Fixture::new();
    f.small_project();
    let watcher = Watcher::start(&f);
    let doctor = f.run(&["doctor", "--offline"]);
    assert_eq!(doctor.code, 0, "{doctor:?}");
    let running = format!(
        "✓ index folder: no stray files; a watcher (`index --watch` or `mcp --watch`) is running (pid {})",
        watcher.pid()
    );
    assert!(doctor.has_line(&running), "{doctor:?}");
    watcher.stop();

    let doctor = f.run(&["doctor", "--offline"]);
    assert_eq!(doctor.code, 0, "{doctor:?}");
    assert!(doctor.has_line("✓ index folder: no stray files"), "{doctor:?}");
}
