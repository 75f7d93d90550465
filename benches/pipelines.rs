//! Compiling every embedded pipeline (with its prompts, schemas and
//! sub-pipelines) in-process, as `unity-assets validate` does.
//!
//! `cargo bench --bench pipelines`

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use unity_assets::project::Project;

fn pipelines(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/zombie-survival");
    let project = Project::open(&root, None, None).expect("the example project opens");
    let (count, errors) = project.validate(&[]);
    // Timing a failing validation would time the error path.
    assert!(errors.is_empty(), "{errors}");
    c.bench_function(&format!("compile all {count} embedded pipelines"), |b| {
        b.iter(|| project.validate(&[]))
    });
}

criterion_group! {
    name = benches;
    // Milliseconds per run: 30 samples keep the ramp within seconds.
    config = Criterion::default().sample_size(30);
    targets = pipelines
}
criterion_main!(benches);
