//! `run:` — a sub-pipeline, with `with:` as its inputs.

use std::sync::Arc;

use crate::compile::Pipeline;
use crate::run::{bind_inputs, Flow};
use crate::template::Scope;

use super::StageCx;

pub async fn run(cx: &StageCx<'_>, scope: &Scope, sub: &Arc<Pipeline>) -> Result<Flow, String> {
    let given = match cx.with(scope)? {
        serde_json::Value::Object(m) => m,
        other => return Err(format!("`with:` of a `run` stage must be a map of inputs, got {other}")),
    };
    let inputs = bind_inputs(sub, given).map_err(|e| e.to_string())?;
    let outcome = crate::run::run(sub, inputs, cx.rt).await;
    cx.stats.sub_run(outcome.report);
    outcome.result.map_err(|e| e.to_string())
}
