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

/// Run one stage: modifier around action, then the schema gate.
pub async fn execute(cx: &StageCx<'_>, scope: &Scope) -> Result<Flow, String> {
    let flow = match &cx.stage.modifier {
        None => action(cx, scope).await?,
        Some(StageModifier::ForEach { .. }) => for_each::run(cx, scope).await?,
        Some(StageModifier::MapReduce { .. }) => map_reduce::run(cx, scope).await?,
        Some(StageModifier::Repeat { .. }) => repeat::run(cx, scope).await?,
    };
    // `llm` stages gate every answer (with repair) and `append` every row
    // before writing it; the others gate their final output here.
    match (flow, &cx.stage.gate, &cx.stage.action) {
        (Flow::Value(v), Some(gate), action) if !matches!(action, StageAction::Llm(_) | StageAction::Append { .. }) => {
            match gate.check(&v) {
                Ok(()) => Ok(Flow::Value(v)),
                Err(errors) => recover(
                    cx,
                    scope,
                    &cx.stage.on_invalid,
                    format!("output fails {}: {}", gate.file, errors.join("; ")),
                ),
            }
        }
        (flow, ..) => Ok(flow),
    }
}

/// Apply `on_invalid` / `on_locked`: fail with `why`, or go on with a fixed output.
pub fn recover(cx: &StageCx<'_>, scope: &Scope, recovery: &Option<Recovery>, why: String) -> Result<Flow, String> {
    match recovery {
        Some(Recovery::Output(t)) => {
            tracing::warn!(stage = %cx.stage.name, "{why}; using its fallback output");
            cx.eval(t, scope).map(Flow::Value)
        }
        Some(Recovery::Fail) | None => Err(why),
    }
}

/// Run the stage's action once, in `scope` (which holds loop variables).
pub async fn action(cx: &StageCx<'_>, scope: &Scope) -> Result<Flow, String> {
    match &cx.stage.action {
        StageAction::Fn { native, .. } => native::run(cx, scope, native).await,
        StageAction::Llm(l) => llm::run(cx, scope, l).await,
        StageAction::Run(sub) => sub_pipeline::run(cx, scope, sub).await,
        StageAction::Read {
            source,
            format,
            rows,
            bad_rows,
            missing,
        } => read::run(cx, scope, source, *format, rows.as_ref(), *bad_rows, *missing),
        StageAction::Write { path, value, format } => write::run(cx, scope, path, value, *format),
        StageAction::Append { path, value } => append::run(cx, scope, path, value),
        StageAction::Emit(t) => emit::run(cx, scope, t),
        StageAction::Exit { code, status } => exit::run(cx, scope, code, status.as_ref()),
        StageAction::Ask {
            prompt,
            choices,
            answer,
            default,
        } => ask::run(cx, scope, prompt, choices, answer.as_ref(), default.as_ref()).await,
        StageAction::Http {
            method,
            url,
            headers,
            query,
            body,
            timeout_s,
        } => {
            http::run(
                cx,
                scope,
                method,
                url,
                headers.as_ref(),
                query.as_ref(),
                body.as_ref(),
                *timeout_s,
            )
            .await
        }
        StageAction::Exec {
            command,
            stdin,
            timeout_s,
        } => exec::run(cx, scope, command, stdin.as_ref(), *timeout_s).await,
        StageAction::Mcp {
            server,
            tool,
            args,
            guard,
            audit,
            sub_intent,
        } => {
            mcp::run(
                cx,
                scope,
                server,
                tool,
                args,
                guard.as_ref(),
                audit,
                sub_intent.as_ref(),
            )
            .await
        }
    }
}
