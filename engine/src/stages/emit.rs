//! `emit:` — print one rendered line to stdout.

use serde_json::Value;

use super::{Flow, StageFailure};
use crate::template::{Scope, Tmpl};

use super::StageCx;

pub fn run(cx: &StageCx<'_>, scope: &Scope, text: &Tmpl) -> Result<Flow, StageFailure> {
    let line = match cx.eval(text, scope)? {
        Value::String(s) => s,
        other => other.to_string(),
    };
    // A rendered block may hold several lines; each is printed once, in order.
    for l in line.trim_end_matches('\n').split('\n') {
        cx.rt.output.line(l);
    }
    Ok(Flow::Value(Value::String(line)))
}
