//! Engine throughput and overhead, printed as a table (`cargo bench -p
//! engine --bench engine`):
//! - compile time of a synthetic 30-stage pipeline (and `unity-assets
//!   validate` over the product's pipelines, when a release binary exists);
//! - a 1,000-chunk `map_reduce` through an async builtin that sleeps 20 ms,
//!   at concurrency 16, against the ideal ⌈1000/16⌉ × 20 ms;
//! - per-stage scheduling overhead along a chain of 1,000 trivial `fn` stages;
//! - start-up time of the release binary (`--version`, median of 50).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::compile::{Compiler, ParamLayers, Pipeline};
use engine::resources::Resources;
use engine::{CallContext, Output, Registry};
use engine::{Ending, Runtime};
use serde_json::{json, Value};

const CHUNKS: usize = 1_000;
const CONCURRENCY: usize = 16;
const TASK_SLEEP: Duration = Duration::from_millis(20);
const CHAIN: usize = 1_000;
const STARTS: usize = 50;

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_fixtures(dir.path());
    let resources = Resources::from_dir(dir.path().to_path_buf());
    let registry = registry();
    let tokio = tokio::runtime::Runtime::new().expect("tokio runtime");

    let mut rows: Vec<(String, String)> = Vec::new();
    rows.push((
        "compile: synthetic 30-stage pipeline".into(),
        per_iteration(200, || {
            compile(&resources, &registry, "wide");
        }),
    ));
    rows.push((
        "compile: chain of 1,000 fn stages".into(),
        per_iteration(3, || {
            compile(&resources, &registry, "chain");
        }),
    ));
    rows.push((
        "unity-assets validate (release binary)".into(),
        match release_binary() {
            Some(bin) => per_iteration(10, || {
                // Timed whatever it finds: a validation failure is the product's news, not the bench's.
                let _ = Command::new(&bin)
                    .arg("validate")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .expect("run validate");
            }),
            None => "skipped: no target/release/unity-assets".into(),
        },
    ));

    let map_reduce = compile(&resources, &registry, "fan");
    let (elapsed, out) = timed_run(&tokio, &map_reduce, &resources);
    assert_eq!(out["chunks"], json!(CHUNKS), "every chunk ran");
    let ideal = TASK_SLEEP * CHUNKS.div_ceil(CONCURRENCY) as u32;
    rows.push((
        format!(
            "map_reduce: {CHUNKS} chunks × {} ms, concurrency {CONCURRENCY}",
            TASK_SLEEP.as_millis()
        ),
        format!(
            "{:.0} ms (ideal {} ms, +{:.1}%)",
            ms(elapsed),
            ideal.as_millis(),
            (elapsed.as_secs_f64() / ideal.as_secs_f64() - 1.0) * 100.0
        ),
    ));

    for (name, label) in [("chain", "async fn"), ("chain-blocking", "blocking fn")] {
        let chain = compile(&resources, &registry, name);
        let (elapsed, _) = timed_run(&tokio, &chain, &resources);
        rows.push((
            format!("scheduling: chain of {CHAIN} {label} stages"),
            format!(
                "{:.0} ms total, {:.1} µs/stage",
                ms(elapsed),
                elapsed.as_secs_f64() * 1e6 / CHAIN as f64
            ),
        ));
    }

    rows.push((
        format!("start-up: unity-assets --version (median of {STARTS})"),
        match release_binary() {
            Some(bin) => {
                let mut times: Vec<Duration> = (0..STARTS)
                    .map(|_| {
                        let started = Instant::now();
                        let status = Command::new(&bin)
                            .arg("--version")
                            .stdout(Stdio::null())
                            .status()
                            .expect("run --version");
                        assert!(status.success());
                        started.elapsed()
                    })
                    .collect();
                times.sort();
                format!("{:.2} ms", ms(times[STARTS / 2]))
            }
            None => "skipped: no target/release/unity-assets".into(),
        },
    ));

    let width = rows.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
    let mut table = String::new();
    for (k, v) in &rows {
        let _ = writeln!(table, "{k:<width$}  {v}");
    }
    print!("{table}");
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Mean time of `n` runs of `f`, formatted.
fn per_iteration(n: u32, mut f: impl FnMut()) -> String {
    let started = Instant::now();
    for _ in 0..n {
        f();
    }
    format!("{:.2} ms each (n={n})", ms(started.elapsed() / n))
}

fn compile(resources: &Resources, registry: &Registry, name: &str) -> Arc<Pipeline> {
    Compiler::new(resources, registry, &ParamLayers::default(), true)
        .compile(name)
        .unwrap_or_else(|d| panic!("{name}:\n{d}"))
}

fn timed_run(tokio: &tokio::runtime::Runtime, pipeline: &Arc<Pipeline>, resources: &Resources) -> (Duration, Value) {
    let rt = Runtime::new(std::env::temp_dir(), Output::buffer(), resources.clone());
    let started = Instant::now();
    let outcome = tokio.block_on(engine::run(pipeline, json!({}), &rt));
    let elapsed = started.elapsed();
    match outcome.result {
        Ok(Ending::Finished(v)) => (elapsed, v),
        other => panic!("{} did not finish: {other:?}", pipeline.name),
    }
}

/// `b.sleep` (async builtin: waits, returns its chunk), `b.noop` (async fn)
/// and `b.noop_blocking` (a fn on the blocking pool).
fn registry() -> Registry {
    let mut r = Registry::new();
    r.async_builtin("b.sleep", "waits 20 ms", |a: Value, _: CallContext| async move {
        tokio::time::sleep(TASK_SLEEP).await;
        anyhow::Ok(a["chunk"].clone())
    });
    r.async_function("b.noop", "returns its input", |a: Value, _: CallContext| async move {
        anyhow::Ok(a)
    });
    r.function("b.noop_blocking", "returns its input", |a: Value, _: &CallContext| {
        Ok(a)
    });
    r
}

fn write_fixtures(root: &Path) {
    let write = |rel: &str, text: String| {
        let p: PathBuf = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("folder")).expect("mkdir");
        std::fs::write(p, text).expect("write fixture");
    };
    write("prompts/chunk.j2", "Rank these: {{ chunk }}".into());
    write("schemas/list.json", r#"{"type": "array"}"#.into());
    write("schemas/obj.json", r#"{"type": "object", "required": ["n"]}"#.into());
    write(
        "pipelines/fan.yaml",
        format!(
            "pipeline: fan\noutput: \"{{{{ ranked }}}}\"\nstages:\n  ranked:\n    map_reduce: {{items: \"{{{{ range({CHUNKS}) | list }}}}\", chunk_size: 1, concurrency: {CONCURRENCY}, reduce: {{top_k: 10}}}}\n    llm: {{prompt: chunk.j2, builtin: b.sleep}}\n    with: {{chunk: \"{{{{ chunk }}}}\"}}\n    output: list.json\n"
        ),
    );
    // 30 stages in layers of three, each reading its needs, params and inputs.
    let mut wide = String::from(
        "pipeline: wide\ninputs:\n  q: {type: string, default: x}\nparams:\n  k: 5\n  nested: {a: 1}\nstages:\n",
    );
    for i in 0..30 {
        let _ = write!(wide, "  s{i}:\n    fn: b.noop\n    output: obj.json\n");
        let needs: Vec<String> = (i.max(3) - 3..i)
            .filter(|j| j / 3 + 1 == i / 3)
            .map(|j| format!("s{j}"))
            .collect();
        let reads: Vec<String> = needs.iter().map(|n| format!("{{{{ {n}.n }}}}")).collect();
        if !needs.is_empty() {
            let _ = writeln!(wide, "    needs: [{}]", needs.join(", "));
        }
        let _ = writeln!(
            wide,
            "    with: {{n: {i}, q: \"{{{{ inputs.q }}}}-{{{{ params.k }}}}-{{{{ params.nested.a }}}}\", up: \"{}\"}}",
            reads.join(",")
        );
    }
    write("pipelines/wide.yaml", wide);
    for (name, function) in [("chain", "b.noop"), ("chain-blocking", "b.noop_blocking")] {
        let mut chain = format!(
            "pipeline: {name}\noutput: \"{{{{ s{} }}}}\"\nstages:\n  s0:\n    fn: {function}\n    with: {{n: 0}}\n",
            CHAIN - 1
        );
        for i in 1..CHAIN {
            let _ = write!(
                chain,
                "  s{i}:\n    needs: [s{}]\n    fn: {function}\n    with: {{n: {i}}}\n",
                i - 1
            );
        }
        write(&format!("pipelines/{name}.yaml"), chain);
    }
}

/// The product's release binary, if it has been built.
fn release_binary() -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/unity-assets");
    bin.is_file().then_some(bin)
}
