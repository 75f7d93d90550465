//! What a native keeps for the rest of its run (`CallContext::holdings`)
//! lasts while that run's stages run and goes when the run ends, whether it
//! finished or failed.

mod engine_util;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use engine::Reach;
use engine::{CallContext, Registry};
use engine_util::{failure, value_of, Project};
use serde_json::{json, Value};

/// Sets its flag when dropped.
struct Kept(Arc<AtomicBool>);

impl Drop for Kept {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// `t.keep` keeps a [`Kept`] for the run; `t.released` says whether it went.
fn registry(released: &Arc<AtomicBool>) -> Registry {
    let mut r = Registry::new();
    let flag = Arc::clone(released);
    r.function(
        "t.keep",
        Reach::NONE,
        "keeps a value for the run",
        move |_: Value, ctx: &CallContext| {
            ctx.holdings.keep(Kept(Arc::clone(&flag)));
            Ok(Value::Null)
        },
    );
    let flag = Arc::clone(released);
    r.function(
        "t.released",
        Reach::NONE,
        "whether the kept value went",
        move |_: Value, _: &CallContext| Ok(flag.load(Ordering::SeqCst)),
    );
    r.function(
        "t.fail",
        Reach::NONE,
        "fails",
        |_: Value, _: &CallContext| -> Result<Value, _> { Err("failed on purpose".into()) },
    );
    r
}

#[tokio::test]
async fn a_kept_value_lasts_until_its_run_ends() {
    let released = Arc::new(AtomicBool::new(false));
    let p = Project::new();
    p.pipeline(
        "inner",
        "pipeline: inner\noutput: \"{{ during }}\"\nstages:\n  keep:\n    fn: t.keep\n  during:\n    needs: [keep]\n    fn: t.released\n",
    );
    p.pipeline(
        "outer",
        "pipeline: outer\noutput: {during: \"{{ sub }}\", after: \"{{ after }}\"}\nstages:\n  sub:\n    run: inner\n  after:\n    needs: [sub]\n    fn: t.released\n",
    );
    let (outcome, _) = p.run("outer", &registry(&released), json!({}), None).await;
    assert_eq!(value_of(&outcome), json!({"during": false, "after": true}));
}

#[tokio::test]
async fn a_kept_value_goes_when_its_run_fails() {
    let released = Arc::new(AtomicBool::new(false));
    let p = Project::new();
    p.pipeline(
        "failing",
        "pipeline: failing\nstages:\n  keep:\n    fn: t.keep\n  fail:\n    needs: [keep]\n    fn: t.fail\n",
    );
    let (outcome, _) = p.run("failing", &registry(&released), json!({}), None).await;
    assert!(failure(&outcome).contains("failed on purpose"), "{}", failure(&outcome));
    assert!(released.load(Ordering::SeqCst));
}
