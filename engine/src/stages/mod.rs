//! One module per stage kind. [`execute`] applies the stage's modifier
//! (for_each, map_reduce, repeat), runs its action, and gates the output.
//!
//! Stages see the run through [`StageCx`] and answer with a [`Flow`]; the
//! one way back into the executor is [`sub_pipeline`], a `run:` stage
//! running another pipeline (the recursion of pipelines itself).

mod append;
mod ask;
mod cx;
mod emit;
mod exec;
mod exit;
mod failure;
mod for_each;
mod http;
mod llm;
mod map_reduce;
mod mcp;
mod native;
mod read;
mod repeat;
mod sub_pipeline;
mod write;

use crate::compile::{Recovery, StageAction, StageModifier};
use crate::template::Scope;

pub use cx::{Flow, StageCx};
pub use failure::{StageError, StageFailure};

/// Run one stage: modifier around action, then the schema gate.
pub async fn execute(cx: &StageCx<'_>, scope: &Scope) -> Result<Flow, StageFailure> {
    let flow = match &cx.stage.modifier {
        None => action(cx, scope).await?,
        Some(StageModifier::ForEach { .. }) => for_each::run(cx, scope).await?,
        Some(StageModifier::MapReduce { .. }) => map_reduce::run(cx, scope).await?,
        Some(StageModifier::Repeat { .. }) => repeat::run(cx, scope).await?,
    };
    // `llm` stages gate every answer (with repair) and `append` every row
    // before writing it; the others gate their final output here.
    match (flow, &cx.stage.gate, &cx.stage.action) {
        (Flow::Value(v), Some(gate), action) if !matches!(action, StageAction::Llm(_) | StageAction::Append(_)) => {
            match gate.check(&v) {
                Ok(()) => Ok(Flow::Value(v)),
                Err(errors) => recover(
                    cx,
                    scope,
                    &cx.stage.on_invalid,
                    StageFailure::Gate {
                        what: "output".into(),
                        file: gate.file.clone(),
                        errors,
                    },
                ),
            }
        }
        (flow, ..) => Ok(flow),
    }
}

/// Apply `on_invalid` / `on_locked`: fail with `why`, or go on with a fixed output.
pub fn recover(
    cx: &StageCx<'_>,
    scope: &Scope,
    recovery: &Option<Recovery>,
    why: StageFailure,
) -> Result<Flow, StageFailure> {
    match recovery {
        Some(Recovery::Output(t)) => {
            tracing::warn!(stage = %cx.stage.name, "{why}; using its fallback output");
            cx.eval(t, scope).map(Flow::Value)
        }
        Some(Recovery::Fail) | None => Err(why),
    }
}

/// Run the stage's action once, in `scope` (which holds loop variables).
pub async fn action(cx: &StageCx<'_>, scope: &Scope) -> Result<Flow, StageFailure> {
    match &cx.stage.action {
        StageAction::Fn(f) => native::run(cx, scope, &f.native).await,
        StageAction::Llm(l) => llm::run(cx, scope, l).await,
        StageAction::Run(sub) => sub_pipeline::run(cx, scope, sub).await,
        StageAction::Read(r) => read::run(cx, scope, r),
        StageAction::Write(w) => write::run(cx, scope, w),
        StageAction::Append(a) => append::run(cx, scope, a),
        StageAction::Emit(t) => emit::run(cx, scope, t),
        StageAction::Exit(e) => exit::run(cx, scope, e),
        StageAction::Ask(a) => ask::run(cx, scope, a).await,
        StageAction::Http(h) => http::run(cx, scope, h).await,
        StageAction::Exec(e) => exec::run(cx, scope, e).await,
        StageAction::Mcp(m) => mcp::run(cx, scope, m).await,
    }
}
