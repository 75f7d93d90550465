//! `repeat:` — the action per value of `over` (or `times` times) until
//! `until` holds; always bounded. `until` sees the iteration's `result`.

use std::sync::Arc;

use serde_json::Value;

use super::{Flow, StageFailure};
use crate::compile::StageModifier;
use crate::template::Scope;

use super::for_each::list;
use super::{action, StageCx};

pub async fn run(cx: &StageCx<'_>, scope: &Scope) -> Result<Flow, StageFailure> {
    let Some(StageModifier::Repeat {
        over,
        times,
        as_name,
        until,
    }) = &cx.stage.modifier
    else {
        unreachable!("dispatched on repeat")
    };
    let values: Vec<Value> = match (over, times) {
        (Some(o), _) => list(cx.eval(o, scope)?, "repeat.over")?,
        (None, Some(n)) => (0..*n).map(Value::from).collect(),
        (None, None) => unreachable!("the compiler requires a bound"),
    };
    let mut last = Value::Null;
    for (i, v) in values.into_iter().enumerate() {
        let s = scope
            .with(as_name, Arc::new(v))
            .with("iteration", Arc::new(Value::from(i)));
        match action(cx, &s).await.map_err(|e| StageFailure::Iteration {
            at: format!("iteration {i}"),
            source: Box::new(e),
        })? {
            exit @ Flow::Exit { .. } => return Ok(exit),
            Flow::Value(result) => {
                last = result;
                if let Some(u) = until {
                    let s = s.with("result", Arc::new(last.clone()));
                    if u.eval_bool(&cx.pipeline.env, &s)
                        .map_err(|e| StageFailure::Template(format!("`until:` {e}")))?
                    {
                        break;
                    }
                }
            }
        }
    }
    Ok(Flow::Value(last))
}
