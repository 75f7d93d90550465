//! `for_each:` — the action once per item, at most `concurrency` at once;
//! results come back in input order whatever order they finish in.

use std::sync::Arc;

use futures::stream::{self, StreamExt};
use serde_json::Value;

use super::{Flow, StageFailure};
use crate::compile::StageModifier;
use crate::template::Scope;

use super::{action, StageCx};

pub async fn run(cx: &StageCx<'_>, scope: &Scope) -> Result<Flow, StageFailure> {
    let Some(StageModifier::ForEach {
        items,
        as_name,
        concurrency,
    }) = &cx.stage.modifier
    else {
        unreachable!("dispatched on for_each")
    };
    let items = list(cx.eval(items, scope)?, "for_each.items")?;
    let limit = limit(cx, concurrency, scope)?;
    Ok(match fan_out(cx, scope, items, as_name, limit, "item").await? {
        Ok(results) => Flow::Value(Value::Array(results)),
        Err(exit) => exit,
    })
}

/// Run the stage's action once per item (bound to `as_name`, with its
/// `position`), at most `limit` at once, results in input order. An `exit`
/// from any run comes back as `Err(flow)`; a failure names the item.
pub async fn fan_out(
    cx: &StageCx<'_>,
    scope: &Scope,
    items: Vec<Value>,
    as_name: &str,
    limit: usize,
    what: &str,
) -> Result<Result<Vec<Value>, Flow>, StageFailure> {
    let tick = cx
        .rt
        .progress
        .as_ref()
        .map(|p| p.begin(&format!("{}: {}", cx.pipeline.name, cx.stage.name), items.len()));
    let mut results = stream::iter(items.into_iter().enumerate())
        .map(|(i, item)| {
            let s = scope
                .with(as_name, Arc::new(item))
                .with("position", Arc::new(Value::from(i)));
            async move { (i, action(cx, &s).await) }
        })
        .buffered(limit);
    let mut out = Vec::new();
    while let Some((i, r)) = results.next().await {
        match r.map_err(|e| StageFailure::Iteration {
            at: format!("{what} {i}"),
            source: Box::new(e),
        })? {
            Flow::Value(v) => out.push(v),
            exit @ Flow::Exit { .. } => return Ok(Err(exit)),
        }
        if let Some(t) = &tick {
            t.advance();
        }
    }
    Ok(Ok(out))
}

/// A modifier's `concurrency`, evaluated: a positive integer.
pub fn limit(cx: &StageCx<'_>, t: &crate::template::Tmpl, scope: &Scope) -> Result<usize, StageFailure> {
    let v = cx.eval(t, scope)?;
    v.as_u64()
        .filter(|&n| n > 0)
        .map(|n| n as usize)
        .ok_or_else(|| format!("`concurrency` must be a positive integer, got {v}").into())
}

/// The list to iterate; `null` (a skipped upstream) is an empty list.
pub fn list(v: Value, what: &str) -> Result<Vec<Value>, StageFailure> {
    match v {
        Value::Array(a) => Ok(a),
        Value::Null => Ok(vec![]),
        other => Err(format!("`{what}` must be a list, got {}", short(&other)).into()),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 80 {
        format!("{}…", &s[..s.floor_char_boundary(80)])
    } else {
        s
    }
}
