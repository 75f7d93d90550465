//! One module per stage kind, each its whole unit: its compiled form, its
//! `compile` (from the YAML as written, through an [`ActionSite`]), its
//! `run`, and what the graph shows of it. [`StageAction`] lists the kinds
//! once, dispatching to them. A kind's YAML fields are parsed in `spec`
//! (`spec/model.rs`), which sits above `compile` and `stages` in the layers.
//!
//! [`execute`] applies the stage's modifier (for_each, map_reduce, repeat),
//! runs its action, and gates the output. Stages see the run through
//! [`StageCx`] and answer with a [`Flow`]; the one way back into the
//! executor is [`sub_pipeline`], a `run:` stage running another pipeline
//! (the recursion of pipelines itself).

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

use std::sync::Arc;

use crate::compile::{ActionSite, Pipeline, Recovery, StageModifier};
use crate::spec::{Action, ActionKind};
use crate::template::{Scope, Tmpl};

use append::AppendStage;
use ask::AskStage;
use exec::ExecStage;
use exit::ExitStage;
use http::HttpStage;
use llm::LlmStage;
use mcp::McpStage;
use native::FnStage;
use read::ReadStage;
use write::WriteStage;

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

/// A stage's action, compiled: one variant per kind, each its module's.
pub enum StageAction {
    Fn(FnStage),
    Llm(LlmStage),
    Run(Arc<Pipeline>),
    Read(ReadStage),
    Write(WriteStage),
    Append(AppendStage),
    Emit(Tmpl),
    Exit(ExitStage),
    Ask(AskStage),
    Http(HttpStage),
    Exec(ExecStage),
    Mcp(McpStage),
}

impl StageAction {
    /// Compile the action as written by its kind's module; `None` when it
    /// cannot be used (its errors are in `site`).
    pub(crate) fn compile(action: &Action, site: &mut ActionSite) -> Option<Self> {
        Some(match action {
            Action::Fn(name) => Self::Fn(native::compile(name, site)?),
            Action::Llm(l) => Self::Llm(llm::compile(l, site)),
            Action::Run(name) => Self::Run(site.sub_pipeline(name)?),
            Action::Read(r) => Self::Read(read::compile(r, site)?),
            Action::Write(w) => Self::Write(write::compile(w, site)),
            Action::Append(a) => Self::Append(append::compile(a, site)),
            Action::Emit(e) => Self::Emit(site.value(e, "emit")),
            Action::Exit(e) => Self::Exit(exit::compile(e, site)),
            Action::Ask(a) => Self::Ask(ask::compile(a, site)),
            Action::Http(h) => Self::Http(http::compile(h, site)),
            Action::Exec(e) => Self::Exec(exec::compile(e, site)),
            Action::Mcp(m) => Self::Mcp(mcp::compile(m, site)),
        })
    }

    /// Its kind, for the stage's name in reports and graphs.
    pub fn kind(&self) -> ActionKind {
        match self {
            StageAction::Fn(_) => ActionKind::Fn,
            StageAction::Llm(_) => ActionKind::Llm,
            StageAction::Run(_) => ActionKind::Run,
            StageAction::Read(_) => ActionKind::Read,
            StageAction::Write(_) => ActionKind::Write,
            StageAction::Append(_) => ActionKind::Append,
            StageAction::Emit(_) => ActionKind::Emit,
            StageAction::Exit(_) => ActionKind::Exit,
            StageAction::Ask(_) => ActionKind::Ask,
            StageAction::Http(_) => ActionKind::Http,
            StageAction::Exec(_) => ActionKind::Exec,
            StageAction::Mcp(_) => ActionKind::Mcp,
        }
    }

    /// What the graph shows the stage calls: a native, a prompt, a pipeline.
    pub fn target(&self) -> Option<String> {
        match self {
            StageAction::Fn(f) => Some(f.name.clone()),
            StageAction::Llm(l) => Some(l.target()),
            StageAction::Run(sub) => Some(sub.name().to_owned()),
            _ => None,
        }
    }
}
