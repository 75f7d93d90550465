//! Engine throughput and overhead (`cargo bench -p engine --bench engine`):
//! - compile time of a synthetic 30-stage pipeline and of a 1,000-stage
//!   chain (and `unity-assets validate` over the product's pipelines, when a
//!   release binary exists);
//! - a 1,000-chunk `map_reduce` through an async builtin that sleeps 20 ms,
//!   at concurrency 16, against the ideal ⌈1000/16⌉ × 20 ms (in its name);
//! - per-stage scheduling overhead along a chain of 1,000 trivial `fn` stages
//!   (divide the time by 1,000);
//! - start-up time of the release binary (`--version`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use engine::resources::Resources;
use engine::Reach;
use engine::{CallContext, Output, Registry};
use engine::{Compiler, ParamLayers, Pipeline};
use engine::{Ending, Runtime};
use serde_json::{json, Value};

const CHUNKS: usize = 1_000;
const CONCURRENCY: usize = 16;
const TASK_SLEEP: Duration = Duration::from_millis(20);
const CHAIN: usize = 1_000;

fn engine(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    write_fixtures(dir.path());
    let resources = Resources::from_dir(dir.path().to_path_buf());
    let registry = registry();
    let tokio = tokio::runtime::Runtime::new().expect("tokio runtime");

    let mut group = c.benchmark_group("compile");
    group.bench_function("synthetic 30-stage pipeline", |b| {
        b.iter(|| compile(&resources, &registry, "wide"))
    });
    // Much slower per run: a fixed count per sample, not a ramp.
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    group.bench_function("chain of 1,000 fn stages", |b| {
        b.iter(|| compile(&resources, &registry, "chain"))
    });
    group.finish();

    match release_binary() {
        Some(bin) => {
            let mut group = c.benchmark_group("process");
            // Milliseconds per run: 20 samples keep the ramp within seconds.
            group.sample_size(20);
            group.bench_function("unity-assets validate", |b| {
                // Timed whatever it finds: a validation failure is the product's news, not the bench's.
                b.iter(|| run_binary(&bin, "validate"))
            });
            group.bench_function("unity-assets --version", |b| {
                b.iter(|| assert!(run_binary(&bin, "--version"), "--version succeeds"))
            });
            group.finish();
        }
        None => eprintln!("process benches skipped: no target/release/unity-assets (cargo build --release)"),
    }

    let map_reduce = compile(&resources, &registry, "fan");
    // A bench of a run that fails would time the failure.
    assert_eq!(
        run_to_value(&tokio, &map_reduce, &resources)["chunks"],
        json!(CHUNKS),
        "every chunk ran"
    );
    let ideal = TASK_SLEEP * CHUNKS.div_ceil(CONCURRENCY) as u32;
    let mut group = c.benchmark_group("run");
    // About a second per run: a fixed count per sample, not a ramp.
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    group.bench_function(
        format!(
            "map_reduce {CHUNKS} chunks x {} ms, concurrency {CONCURRENCY} (ideal {} ms)",
            TASK_SLEEP.as_millis(),
            ideal.as_millis()
        ),
        |b| b.iter(|| run_to_value(&tokio, &map_reduce, &resources)),
    );
    for (name, label) in [("chain", "async fn"), ("chain-blocking", "blocking fn")] {
        let chain = compile(&resources, &registry, name);
        group.bench_function(format!("chain of {CHAIN} {label} stages"), |b| {
            b.iter(|| run_to_value(&tokio, &chain, &resources))
        });
    }
    group.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);

/// Runs the binary with one argument, output discarded; true on success.
fn run_binary(bin: &Path, arg: &str) -> bool {
    Command::new(bin)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run the release binary")
        .success()
}

fn compile(resources: &Resources, registry: &Registry, name: &str) -> Arc<Pipeline> {
    Compiler::new(resources, registry, &ParamLayers::default(), true)
        .compile(name)
        .unwrap_or_else(|d| panic!("{name}:\n{d}"))
}

fn run_to_value(tokio: &tokio::runtime::Runtime, pipeline: &Arc<Pipeline>, resources: &Resources) -> Value {
    let rt = Runtime::new(std::env::temp_dir(), Output::buffer(), resources.clone());
    match tokio.block_on(engine::run(pipeline, json!({}), &rt)).result {
        Ok(Ending::Finished(v)) => v,
        other => panic!("{} did not finish: {other:?}", pipeline.name()),
    }
}

/// `b.sleep` (async builtin: waits, returns its chunk), `b.noop` (async fn)
/// and `b.noop_blocking` (a fn on the blocking pool).
fn registry() -> Registry {
    let mut r = Registry::new();
    r.async_builtin("b.sleep", "waits 20 ms", |a: Value, _: CallContext| async move {
        tokio::time::sleep(TASK_SLEEP).await;
        Ok::<_, engine::registry::BoxError>(a["chunk"].clone())
    });
    r.async_function(
        "b.noop",
        Reach::NONE,
        "returns its input",
        |a: Value, _: CallContext| async move { Ok::<_, engine::registry::BoxError>(a) },
    );
    r.function(
        "b.noop_blocking",
        Reach::NONE,
        "returns its input",
        |a: Value, _: &CallContext| Ok(a),
    );
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
