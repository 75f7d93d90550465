//! `run:` — a sub-pipeline, with `with:` as its inputs. The one place a
//! stage calls back into the executor: pipelines nest.

use std::sync::Arc;

use crate::compile::Pipeline;
use crate::run::Ending;
use crate::template::Scope;

use super::{Flow, StageCx, StageFailure};

pub async fn run(cx: &StageCx<'_>, scope: &Scope, sub: &Arc<Pipeline>) -> Result<Flow, StageFailure> {
    let given = match cx.with(scope)? {
        serde_json::Value::Object(m) => m,
        other => return Err(format!("`with:` of a `run` stage must be a map of inputs, got {other}").into()),
    };
    let inputs = sub.bind_inputs(given).map_err(StageFailure::Inputs)?;
    let outcome = crate::run::run(sub, inputs, cx.rt).await;
    cx.stats.sub_run(outcome.report);
    match outcome.result.map_err(|e| StageFailure::SubPipeline(Box::new(e)))? {
        Ending::Finished(value) => Ok(Flow::Value(value)),
        // The sub-pipeline's exit ends this run too; its output is this run's to make.
        Ending::Exited { code, status, .. } => Ok(Flow::Exit { code, status }),
    }
}
