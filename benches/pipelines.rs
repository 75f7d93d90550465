//! Compiling every embedded pipeline (with its prompts, schemas and
//! sub-pipelines) in-process, as `unity-assets validate` does.
//!
//! `cargo bench --bench pipelines`

use std::path::Path;
use std::time::Instant;

use unity_assets::project::Project;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/zombie-survival");
    let project = Project::open(&root, None, None).expect("the example project opens");
    let (count, errors) = project.validate(&[]);
    assert!(errors.is_empty(), "{errors}");
    let runs = 200;
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let _ = project.validate(&[]);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!(
        "compile all {count} embedded pipelines: median {:.2} ms, p90 {:.2} ms ({runs} runs)",
        times[runs / 2],
        times[runs * 9 / 10]
    );
}
