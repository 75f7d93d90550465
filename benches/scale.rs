//! The scale bench (`cargo bench --bench scale`): index and search through
//! the real binary on realistic generated projects
//! (`test_support::large_project`) at 5,000 and 100,000 assets, and on
//! FPSSample side by side when `../shared/corpora` holds it. Per project:
//! full index time and the child's peak memory (`wait4`'s max RSS), index
//! size on disk, no-op `index` time, and search latency p50/p95 over a fixed
//! query list (English, Korean, no-answer), as a markdown table.
//!
//! Environment:
//! - `SCALE_SIZES`: comma-separated asset counts (default `5000,100000`;
//!   add `1000000` for the million-asset row);
//! - `SCALE_DIR`: where projects are generated and kept between runs
//!   (default `target/scale-projects`; a project is regenerated only when its
//!   size, seed or word source changed);
//! - `SCALE_BIN`: the binary to measure (default: this build's
//!   `unity-assets`), to compare two builds on the same projects;
//! - `SCALE_ROUNDS`: search rounds over the query list (default 5) and no-op
//!   runs (the same);
//! - `SCALE_MODEL_CACHE`: an `XDG_CACHE_HOME` where `unity-assets model
//!   install` put the sentence encoder; with it a second table measures the
//!   same projects with search by meaning on: the full index (and its
//!   `embed` stage: rows embedded, distinct texts, texts a second), the no-op
//!   index, search, and search with a filter.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use test_support::large_project;

const SEED: u64 = 26;

/// The fixed query list: (kind, query). `no-answer` queries name nothing
/// the generated projects hold.
const QUERIES: &[(&str, &str)] = &[
    ("en", "mossy rock prefab"),
    ("en", "zombie attack sound"),
    ("en", "wooden door"),
    ("en", "fire explosion particle"),
    ("ko", "좀비 공격 소리"),
    ("ko", "나무 상자 프리팹"),
    ("ko", "폭발하는 드럼통 소리"),
    ("ko", "배경 음악"),
    ("no-answer", "quantum spreadsheet tax form"),
    ("no-answer", "아스테로이드 벨트 우주선 격납고"),
];

/// Queries with filters, for the table with the encoder: the words a
/// generated project and FPSSample both hold.
const FILTERED: &[&str] = &["t:Prefab 나무 상자", "ext:wav explosion", "t:Material rock"];

/// What one command run cost, and what it printed.
struct Measured {
    wall: Duration,
    max_rss_kib: i64,
    stdout: String,
}

/// Set on the bench's own child that generates one project (see [`generate_apart`]).
const GENERATE_ENV: &str = "SCALE_GENERATE_INTO";

fn main() {
    // `cargo bench` passes `--bench`; nothing else is read from the arguments.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if let Some(dir) = std::env::var_os(GENERATE_ENV) {
        let size = std::env::var("SCALE_SIZES")
            .ok()
            .and_then(|s| s.parse().ok())
            .expect("one size");
        let (words, _) = large_project::vocabulary(&root.join("../shared/corpora"));
        let started = Instant::now();
        let generated = large_project::generate(Path::new(&dir), size, &words, SEED).expect("generate the project");
        println!(
            "generated {size} assets in {:.1} s: {} files, {} packages, {} Korean names, {} YAML files",
            started.elapsed().as_secs_f64(),
            generated.files,
            generated.packages,
            generated.korean_names,
            generated.yaml_files
        );
        return;
    }
    let bin = std::env::var_os("SCALE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_unity-assets")));
    let sizes: Vec<usize> = std::env::var("SCALE_SIZES")
        .unwrap_or_else(|_| "5000,100000".to_owned())
        .split(',')
        .filter_map(|s| s.trim().replace('_', "").parse().ok())
        .collect();
    let rounds: usize = std::env::var("SCALE_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5)
        .max(1);
    let work = std::env::var_os("SCALE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/scale-projects"));
    fs::create_dir_all(&work).expect("create SCALE_DIR");
    // No sentence-encoder model: words-only search, the same for every build.
    let cache = tempfile::tempdir().expect("temp dir");

    let corpora = root.join("../shared/corpora");
    let (_, source) = large_project::vocabulary(&corpora);
    println!("binary: {}", bin.display());
    println!("words: {source}; {}", load_average());

    let mut projects: Vec<(String, PathBuf)> = Vec::new();
    if let Some(fps) = unpack_once(&corpora.join("fpssample.tar.gz"), &work.join("fpssample")) {
        projects.push(("FPSSample".to_owned(), fps));
    }
    for &size in &sizes {
        let dir = work.join(format!("assets-{size}"));
        let stamp = format!("{size} seed {SEED} {source}\n");
        let stamp_file = dir.join("generated.txt");
        if fs::read_to_string(&stamp_file).ok().as_deref() != Some(stamp.as_str()) {
            let _ = fs::remove_dir_all(&dir);
            generate_apart(&dir, size);
            fs::write(&stamp_file, &stamp).expect("stamp");
        }
        projects.push((format!("{size} assets"), dir));
    }

    println!();
    println!("| project | full index | peak memory | index on disk | no-op index (median) | no-op beside `index --watch` | search p50 / p95: all | English | Korean | no answer |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (label, project) in &projects {
        fs::create_dir_all(project.join(".claude")).expect("create .claude");
        fs::write(project.join(".claude/unity-assets.yml"), "index_depth: normal\n").expect("write config");
        let _ = fs::remove_dir_all(project.join(".claude/unity-asset-index"));
        let full = run(&bin, project, cache.path(), &["-q", "index"]);
        let disk = index_bytes(&project.join(".claude/unity-asset-index"));
        let mut no_op: Vec<Duration> = (0..rounds)
            .map(|_| run(&bin, project, cache.path(), &["-q", "index"]).wall)
            .collect();
        no_op.sort();
        let watched = no_op_beside_a_watcher(&bin, project, cache.path(), rounds);
        let mut by_kind: Vec<(&str, Vec<Duration>)> = Vec::new();
        for _ in 0..rounds {
            for &(kind, query) in QUERIES {
                let took = run(&bin, project, cache.path(), &["-q", "search", "--json", query]).wall;
                match by_kind.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, times)) => times.push(took),
                    None => by_kind.push((kind, vec![took])),
                }
            }
        }
        let all: Vec<Duration> = by_kind.iter().flat_map(|(_, t)| t.iter().copied()).collect();
        println!(
            "| {label} | {:.2} s | {} MiB | {:.1} MB | {} | {} | {} | {} | {} | {} |",
            full.wall.as_secs_f64(),
            full.max_rss_kib / 1024,
            disk as f64 / 1e6,
            ms(no_op[no_op.len() / 2]),
            ms(watched),
            p50_p95(&all),
            p50_p95(&by_kind[0].1),
            p50_p95(&by_kind[1].1),
            p50_p95(&by_kind[2].1),
        );
    }
    if let Some(model_cache) = std::env::var_os("SCALE_MODEL_CACHE") {
        with_encoder(&bin, &projects, Path::new(&model_cache), rounds);
    }
    println!();
    println!("after: {}", load_average());
}

/// The table with the sentence encoder on (`model_cache` holds it): the
/// cost of search by meaning at each size.
fn with_encoder(bin: &Path, projects: &[(String, PathBuf)], model_cache: &Path, rounds: usize) {
    println!();
    println!("With the sentence encoder ({}):", model_cache.display());
    println!();
    println!("| project | full index | peak memory | `embed` stage | rows embedded (distinct texts) | texts / s | no-op index | search p50 / p95 | filtered search p50 / p95 |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (label, project) in projects {
        let _ = fs::remove_dir_all(project.join(".claude/unity-asset-index"));
        let report = project.join(".claude/scale-report.json");
        let report_arg = report.to_string_lossy().into_owned();
        let full = run(bin, project, model_cache, &["index", "--report", &report_arg]);
        let stages: serde_json::Value =
            serde_json::from_slice(&fs::read(&report).expect("the index report")).expect("a JSON report");
        let embed_ms = stages["stages"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["name"] == "embed"))
            .and_then(|s| s["wall_ms"].as_f64())
            .unwrap_or(f64::NAN);
        let vectors = full
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("[unity-assets:index] vectors: "))
            .unwrap_or("none")
            .to_owned();
        let texts: f64 = vectors
            .split(['(', ' '])
            .filter_map(|w| w.parse().ok())
            .nth(usize::from(vectors.contains("distinct")))
            .unwrap_or(f64::NAN);
        let mut no_op: Vec<Duration> = (0..rounds)
            .map(|_| run(bin, project, model_cache, &["-q", "index"]).wall)
            .collect();
        no_op.sort();
        let searches = |queries: &mut dyn Iterator<Item = &str>| -> Vec<Duration> {
            let queries: Vec<&str> = queries.collect();
            (0..rounds)
                .flat_map(|_| queries.iter().copied())
                .map(|q| run(bin, project, model_cache, &["-q", "search", "--json", q]).wall)
                .collect()
        };
        let plain = searches(&mut QUERIES.iter().map(|(_, q)| *q));
        let filtered = searches(&mut FILTERED.iter().copied());
        println!(
            "| {label} | {:.2} s | {} MiB | {:.2} s | {} | {:.0} | {} | {} | {} |",
            full.wall.as_secs_f64(),
            full.max_rss_kib / 1024,
            embed_ms / 1000.0,
            vectors.split(", ").next().unwrap_or_default(),
            texts / (embed_ms / 1000.0),
            ms(no_op[no_op.len() / 2]),
            p50_p95(&plain),
            p50_p95(&filtered),
        );
    }
}

/// Generate a project in a child process (this bench again, with
/// [`GENERATE_ENV`]). On Linux a child inherits its parent's high-water
/// resident memory as its own `ru_maxrss` (the parent's address space is
/// its own until `exec`), so generating 10^6 assets in this process made
/// every later peak read at least ~200 MiB (FPSSample's 77 MiB read 199).
fn generate_apart(dir: &Path, size: usize) {
    let me = std::env::current_exe().expect("the bench's own path");
    let status = Command::new(me)
        .env(GENERATE_ENV, dir)
        .env("SCALE_SIZES", size.to_string())
        .status()
        .expect("start the generator");
    assert!(status.success(), "generating {size} assets failed");
}

/// The median no-op `index` while `index --watch` watches the project (its
/// first run done): the watcher vouches that nothing changed, so no walk.
fn no_op_beside_a_watcher(bin: &Path, project: &Path, cache: &Path, rounds: usize) -> Duration {
    use std::io::BufRead as _;
    let mut watcher = command(bin, project, cache)
        .args(["index", "--watch"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the watcher");
    let mut first = String::new();
    let stdout = watcher.stdout.take().expect("the watcher's stdout");
    std::io::BufReader::new(stdout)
        .read_line(&mut first)
        .expect("the watcher's first run");
    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| run(bin, project, cache, &["-q", "index"]).wall)
        .collect();
    times.sort();
    // SAFETY: a plain signal to our own child; Ctrl+C ends a waiting watcher.
    unsafe { libc::kill(watcher.id() as libc::pid_t, libc::SIGINT) };
    let _ = watcher.wait();
    times[times.len() / 2]
}

/// The binary on `project`, with the bench's model cache and no log filter.
fn command(bin: &Path, project: &Path, cache: &Path) -> Command {
    let mut command = Command::new(bin);
    command
        .arg("--project")
        .arg(project)
        .env("XDG_CACHE_HOME", cache)
        .env_remove("RUST_LOG");
    command
}

/// Run the binary on `project` and wait for it with `wait4`, which gives
/// the child's own peak resident memory; its stdout is read meanwhile.
// The child is reaped by `wait4` below, which clippy cannot see.
#[allow(clippy::zombie_processes)]
fn run(bin: &Path, project: &Path, cache: &Path, args: &[&str]) -> Measured {
    let started = Instant::now();
    let mut child = command(bin, project, cache)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the binary");
    let mut pipe = child.stdout.take().expect("the child's stdout");
    let reader = std::thread::spawn(move || {
        let mut stdout = String::new();
        let _ = std::io::Read::read_to_string(&mut pipe, &mut stdout);
        stdout
    });
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data, zeroed is a valid value; the pid is our own child, reaped once here.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    assert_eq!(reaped, pid, "wait4 failed");
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    // Search exits 0 with or without an answer; anything else is a failed run.
    if !ok {
        let mut stderr = String::new();
        if let Some(mut pipe) = child.stderr {
            use std::io::Read as _;
            let _ = pipe.read_to_string(&mut stderr);
        }
        panic!("{} {args:?} failed ({status}): {stderr}", project.display());
    }
    Measured {
        wall,
        max_rss_kib: usage.ru_maxrss,
        stdout: reader.join().expect("the stdout reader"),
    }
}

/// A table cell: `p50 / p95`.
fn p50_p95(times: &[Duration]) -> String {
    let (p50, p95) = percentiles(times);
    format!("{} / {}", ms(p50), ms(p95))
}

/// p50 and p95 by the nearest-rank rule.
fn percentiles(times: &[Duration]) -> (Duration, Duration) {
    let mut sorted = times.to_vec();
    sorted.sort();
    let rank = |p: f64| sorted[((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1];
    (rank(0.50), rank(0.95))
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

/// Bytes of the index folder's files.
fn index_bytes(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => index_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// `/proc/loadavg`'s three averages: the machine is shared, so every report says how loaded it was.
fn load_average() -> String {
    let text = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let averages: Vec<&str> = text.split_whitespace().take(3).collect();
    format!("load average {}", averages.join(" "))
}

/// The corpus project unpacked into `into` once (kept between runs).
fn unpack_once(archive: &Path, into: &Path) -> Option<PathBuf> {
    let find = |dir: &Path| {
        fs::read_dir(dir)
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.join("Assets").is_dir())
    };
    if let Some(project) = find(into) {
        return Some(project);
    }
    if !archive.is_file() {
        eprintln!("FPSSample: skipped, no {}", archive.display());
        return None;
    }
    fs::create_dir_all(into).ok()?;
    let ok = Command::new("tar")
        .arg("-xzf")
        .arg(archive)
        .arg("-C")
        .arg(into)
        .status()
        .ok()?
        .success();
    ok.then(|| find(into)).flatten()
}
