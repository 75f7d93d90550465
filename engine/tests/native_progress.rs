//! A native whose work is long and countable shows it on the run's progress
//! (`CallContext::count`), under its `pipeline: stage` label.

mod engine_util;

use std::sync::{Arc, Mutex};

use engine::{CallContext, Ending, Progress, Reach, Registry, Tick};
use engine_util::Project;
use serde_json::{json, Value};

/// Every bar begun, `(label, total)`, and the items counted on all of them.
#[derive(Default)]
struct Recorded {
    begun: Mutex<Vec<(String, usize)>>,
    counted: Arc<Mutex<usize>>,
}

impl Progress for Recorded {
    fn begin(&self, label: &str, total: usize) -> Box<dyn Tick> {
        self.begun.lock().unwrap().push((label.to_owned(), total));
        Box::new(Counter(Arc::clone(&self.counted)))
    }
}

struct Counter(Arc<Mutex<usize>>);

impl Tick for Counter {
    fn advance(&self) {
        *self.0.lock().unwrap() += 1;
    }
}

/// `t.work` counts five items in two slices; it answers whether it had a bar.
fn registry() -> Registry {
    let mut r = Registry::new();
    r.function(
        "t.work",
        Reach::NONE,
        "counts five items",
        |_: Value, ctx: &CallContext| {
            let bar = ctx.count(5);
            if let Some(bar) = &bar {
                bar.advance_by(2);
                bar.advance_by(3);
            }
            Ok(bar.is_some())
        },
    );
    r
}

async fn run(progress: Option<Arc<dyn Progress>>) -> Value {
    let p = Project::new();
    p.pipeline(
        "p",
        "pipeline: p\noutput: \"{{ work }}\"\nstages:\n  work:\n    fn: t.work\n",
    );
    let pipeline = p.compile("p", &registry()).expect("compiles");
    let rt = p.runtime(None).with_progress(progress);
    let inputs = pipeline.bind_inputs(Default::default()).expect("no inputs");
    match engine::run(&pipeline, inputs, &rt).await.result {
        Ok(Ending::Finished(v)) => v,
        other => panic!("expected a value, got {other:?}"),
    }
}

#[tokio::test]
async fn a_native_counts_its_items_on_the_runs_progress() {
    let recorded = Arc::new(Recorded::default());
    assert_eq!(run(Some(recorded.clone())).await, json!(true));
    assert_eq!(*recorded.begun.lock().unwrap(), [("p: work".to_owned(), 5)]);
    assert_eq!(*recorded.counted.lock().unwrap(), 5);
}

#[tokio::test]
async fn without_progress_a_native_has_no_bar() {
    assert_eq!(run(None).await, json!(false));
}
