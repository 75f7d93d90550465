//! `map_reduce:` — chunk a list, one action per chunk concurrently, then
//! reduce: flatten the per-chunk lists, stable-sort by a field, keep top-k.

use std::cmp::Ordering;

use serde_json::{json, Value};

use super::{Flow, StageFailure};
use crate::compile::StageModifier;
use crate::spec::{Flatten, Order};
use crate::template::Scope;

use super::for_each::{fan_out, limit, list};
use super::StageCx;

pub async fn run(cx: &StageCx<'_>, scope: &Scope) -> Result<Flow, StageFailure> {
    let Some(StageModifier::MapReduce {
        items,
        chunk_size,
        as_name,
        concurrency,
        reduce,
        top_k,
    }) = &cx.stage.modifier
    else {
        unreachable!("dispatched on map_reduce")
    };
    let items = list(cx.eval(items, scope)?, "map_reduce.items")?;
    let size = cx
        .eval(chunk_size, scope)?
        .as_u64()
        .filter(|&n| n > 0)
        .ok_or("`map_reduce.chunk_size` must be a positive integer")? as usize;
    // Move the items into their chunks: large lists are not copied again.
    let mut rest = items.into_iter().peekable();
    let mut chunks = Vec::new();
    while rest.peek().is_some() {
        chunks.push(Value::Array(rest.by_ref().take(size).collect()));
    }
    let n_chunks = chunks.len();
    let limit = limit(cx, concurrency, scope)?;
    let mapped = match fan_out(cx, scope, chunks, as_name, limit, "chunk").await? {
        Ok(mapped) => mapped,
        Err(exit) => return Ok(exit),
    };
    let items = |v: Value| match v {
        Value::Array(a) => a,
        Value::Null => vec![],
        other => vec![other],
    };
    let mut out: Vec<Value> = match &reduce.flatten {
        None | Some(Flatten::All(true)) => mapped.into_iter().flat_map(items).collect(),
        Some(Flatten::All(false)) => mapped,
        Some(Flatten::Field(field)) => mapped
            .into_iter()
            .flat_map(|mut v| items(v.get_mut(field.as_str()).map(Value::take).unwrap_or(Value::Null)))
            .collect(),
    };
    if let Some(field) = &reduce.sort_by {
        let key = |v: &Value| v.get(field).and_then(Value::as_f64).unwrap_or(f64::NEG_INFINITY);
        out.sort_by(|a, b| {
            let o = key(a).partial_cmp(&key(b)).unwrap_or(Ordering::Equal);
            if reduce.order == Order::Desc {
                o.reverse()
            } else {
                o
            }
        });
    }
    if let Some(k) = top_k {
        let k = cx.eval(k, scope)?.as_u64().ok_or("`reduce.top_k` must be an integer")? as usize;
        out.truncate(k);
    }
    Ok(Flow::Value(json!({"items": out, "chunks": n_chunks})))
}
