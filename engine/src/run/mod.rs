//! The executor: runs a compiled pipeline's DAG on tokio.
//!
//! Every stage starts as soon as all of its `needs` have settled, so
//! independent stages run concurrently. A stage whose `when:` is false, or
//! all of whose needs were skipped, is skipped with output `null`. An `exit`
//! stage ends the run at once; a failing stage ends it with an error that
//! names the stage, the pipeline file and the cause.

pub mod progress;
pub mod report;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::{Map, Value};
use tracing::Instrument;

use crate::compile::{Pipeline, Stage, StageAction};
use crate::llm::Provider;
use crate::output::Output;
use crate::resources::Resources;
use crate::template::Scope;

pub use report::{RunReport, StageReport, StageStats};

/// What a run may use: the model provider, where lines go, the folder it
/// works in, and whether a person can be asked.
#[derive(Clone)]
pub struct Runtime {
    /// `None` runs every `llm` stage through its `builtin:` task.
    pub provider: Option<Arc<dyn Provider>>,
    pub output: Output,
    pub workdir: PathBuf,
    /// True when stdin is a terminal, so `ask` may prompt.
    pub interactive: bool,
    /// MCP connections, opened on first use and shared by the run's stages.
    pub mcp: Arc<crate::stages::mcp::McpConnections>,
    /// Data files native functions read (`data/...`), with overrides.
    pub resources: Resources,
    /// Where fan-out progress goes (none: not shown).
    pub progress: Option<Arc<dyn progress::Progress>>,
    /// Size limits on files and HTTP answers the run reads.
    pub limits: crate::io::Limits,
    /// Answers received in this run, so no request is sent twice.
    pub replies: Arc<crate::llm::ReplyCache>,
}

impl Runtime {
    pub fn new(workdir: PathBuf, output: Output, resources: Resources) -> Self {
        Self {
            provider: None,
            output,
            workdir,
            interactive: false,
            mcp: Arc::default(),
            resources,
            progress: None,
            limits: crate::io::Limits::default(),
            replies: Arc::default(),
        }
    }
}

/// How a stage (or a whole run) ended.
#[derive(Debug, Clone)]
pub enum Flow {
    Value(Value),
    /// An `exit` stage ended the run. `output` is the pipeline's output
    /// evaluated over the stages that ran (`None` when it cannot be), so a
    /// caller printing the output has a document on every ending.
    Exit {
        code: i32,
        status: Option<String>,
        output: Option<Value>,
    },
}

/// A stage failure, with everything a user needs to find it.
#[derive(Debug, thiserror::Error)]
#[error("stage `{stage}` of pipeline `{pipeline}` ({file}) failed: {message}")]
pub struct StageError {
    pub pipeline: String,
    pub file: String,
    pub stage: String,
    pub message: String,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Stage(#[from] StageError),
    #[error("pipeline `{pipeline}`: {message}")]
    Input { pipeline: String, message: String },
}

/// The end of a run: how it ended, and the report either way.
#[derive(Debug)]
pub struct RunOutcome {
    pub result: Result<Flow, RunError>,
    pub report: RunReport,
    /// Each stage's output by name (skipped ones as null), shared, not copied.
    pub outputs: HashMap<String, Arc<Value>>,
}

impl RunOutcome {
    /// 0 for a finished run, an `exit` stage's code, or 1 for a failure.
    pub fn exit_code(&self) -> i32 {
        match &self.result {
            Ok(Flow::Exit { code, .. }) => *code,
            Ok(Flow::Value(_)) => 0,
            Err(_) => 1,
        }
    }
}

/// Check and coerce caller inputs against the pipeline's declarations.
/// Strings from the command line become the declared type.
pub fn bind_inputs(p: &Pipeline, mut given: Map<String, Value>) -> Result<Value, RunError> {
    let err = |message: String| RunError::Input {
        pipeline: p.name.clone(),
        message,
    };
    if let Some(unknown) = given.keys().find(|k| !p.inputs.contains_key(*k)) {
        let names: Vec<&str> = p.inputs.keys().map(String::as_str).collect();
        let hint = crate::diagnostic::did_you_mean(unknown, names.iter().copied())
            .map(|b| format!("; did you mean `{b}`?"))
            .unwrap_or_else(|| format!("; inputs are: {}", names.join(", ")));
        return Err(err(format!("unknown input `{unknown}`{hint}")));
    }
    let mut out = Map::new();
    for (name, spec) in &p.inputs {
        let value = match given.remove(name) {
            Some(v) => coerce(v, &spec.kind).map_err(|m| err(format!("input `{name}`: {m}")))?,
            None => match &spec.default {
                Some(d) => d.clone(),
                None => return Err(err(format!("missing input `{name}` (pass --input {name}=...)"))),
            },
        };
        out.insert(name.clone(), value);
    }
    Ok(Value::Object(out))
}

fn coerce(v: Value, kind: &str) -> Result<Value, String> {
    let parsed = |s: &str| serde_json::from_str::<Value>(s).map_err(|_| format!("`{s}` is not a valid {kind}"));
    match (kind, v) {
        ("string", Value::String(s)) => Ok(Value::String(s)),
        ("string", other) => Ok(Value::String(match other {
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            o => o.to_string(),
        })),
        ("integer", Value::String(s)) => parsed(&s).and_then(|v| {
            if v.is_i64() || v.is_u64() {
                Ok(v)
            } else {
                Err(format!("`{s}` is not an integer"))
            }
        }),
        ("number", Value::String(s)) => parsed(&s).and_then(|v| {
            if v.is_number() {
                Ok(v)
            } else {
                Err(format!("`{s}` is not a number"))
            }
        }),
        ("boolean", Value::String(s)) => match s.as_str() {
            "true" | "yes" | "1" => Ok(Value::Bool(true)),
            "false" | "no" | "0" | "" => Ok(Value::Bool(false)),
            _ => Err(format!("`{s}` is not a boolean (true/false)")),
        },
        ("array" | "object", Value::String(s)) => parsed(&s),
        (_, v) => Ok(v),
    }
}

/// Run a compiled pipeline to its end. (Boxed: a pipeline's future holds
/// its sub-pipelines' futures, and a named type ends that recursion.)
pub fn run<'a>(p: &'a Arc<Pipeline>, inputs: Value, rt: &'a Runtime) -> futures::future::BoxFuture<'a, RunOutcome> {
    Box::pin(run_to_end(p, inputs, rt))
}

async fn run_to_end(p: &Arc<Pipeline>, inputs: Value, rt: &Runtime) -> RunOutcome {
    let started = Instant::now();
    let span = tracing::info_span!("pipeline", name = %p.name);
    let (result, stages, outputs) = execute(p, inputs, rt).instrument(span).await;
    let (status, exit_code) = match &result {
        Ok(Flow::Exit { code, .. }) => ("exited", *code),
        Ok(Flow::Value(_)) => ("ok", 0),
        Err(_) => ("failed", 1),
    };
    let wall_ms = started.elapsed().as_secs_f64() * 1e3;
    let report = RunReport {
        pipeline: p.name.clone(),
        file: p.file.clone(),
        status: status.into(),
        exit_code,
        wall_ms,
        stages,
    };
    RunOutcome {
        result,
        report,
        outputs,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Pending,
    Running,
    Done,
    Skipped,
    Failed,
}

type Finished = (usize, Result<Option<Flow>, String>, StageReport);

async fn execute(
    p: &Arc<Pipeline>,
    inputs: Value,
    rt: &Runtime,
) -> (Result<Flow, RunError>, Vec<StageReport>, HashMap<String, Arc<Value>>) {
    let n = p.stages.len();
    let mut state = vec![State::Pending; n];
    let mut outputs: Vec<Option<Arc<Value>>> = vec![None; n];
    let mut reports: Vec<Option<StageReport>> = vec![None; n];
    let mut base = Scope::new();
    base.set("inputs", Arc::new(inputs));
    base.set("params", Arc::clone(&p.params));
    let mut running: FuturesUnordered<futures::future::BoxFuture<'_, Finished>> = FuturesUnordered::new();
    let mut result: Option<Result<Flow, RunError>> = None;

    loop {
        if result.is_none() {
            // Stages are in topological order, so one pass also settles
            // skips that cascade down a chain.
            for i in 0..n {
                if state[i] != State::Pending {
                    continue;
                }
                let st = &p.stages[i];
                if !st
                    .needs
                    .iter()
                    .all(|&d| matches!(state[d], State::Done | State::Skipped))
                {
                    continue;
                }
                // Skips propagate: nothing upstream ran for this stage.
                if !st.needs.is_empty() && st.needs.iter().all(|&d| state[d] == State::Skipped) {
                    state[i] = State::Skipped;
                    reports[i] = Some(skipped(st));
                    continue;
                }
                let mut scope = base.clone();
                for (j, other) in p.stages.iter().enumerate() {
                    if st.upstream.contains(&other.ident) {
                        scope.set(
                            other.ident.clone(),
                            outputs[j].clone().unwrap_or_else(|| Arc::new(Value::Null)),
                        );
                    }
                }
                state[i] = State::Running;
                running.push(Box::pin(run_stage(p, i, scope, rt)));
            }
        }
        let Some((i, res, report)) = running.next().await else {
            break;
        };
        reports[i] = Some(report);
        match res {
            Ok(None) => state[i] = State::Skipped,
            Ok(Some(Flow::Value(v))) => {
                state[i] = State::Done;
                outputs[i] = Some(Arc::new(v));
            }
            Ok(Some(exit @ Flow::Exit { .. })) => {
                state[i] = State::Done;
                if result.is_none() {
                    result = Some(Ok(exit));
                }
            }
            Err(message) => {
                state[i] = State::Failed;
                if result.is_none() {
                    result = Some(Err(RunError::Stage(StageError {
                        pipeline: p.name.clone(),
                        file: p.file.clone(),
                        stage: p.stages[i].name.clone(),
                        message,
                    })));
                }
            }
        }
        if result.is_some() {
            // Stop now: in-flight stages are cancelled by dropping them.
            break;
        }
    }
    drop(running);

    let by_name: HashMap<String, Arc<Value>> = p
        .stages
        .iter()
        .enumerate()
        .map(|(i, s)| {
            (
                s.name.clone(),
                outputs[i].clone().unwrap_or_else(|| Arc::new(Value::Null)),
            )
        })
        .collect();
    let reports: Vec<StageReport> = p
        .stages
        .iter()
        .zip(reports)
        .zip(&state)
        .map(|((st, r), s)| {
            r.unwrap_or_else(|| {
                let stats = StageStats::default();
                stats.report(
                    &st.name,
                    kind(st),
                    if *s == State::Running { "cancelled" } else { "not_run" },
                    0.0,
                    None,
                )
            })
        })
        .collect();
    let output = || -> Result<Value, RunError> {
        let mut scope = base.clone();
        for (i, s) in p.stages.iter().enumerate() {
            scope.set(
                s.ident.clone(),
                outputs[i].clone().unwrap_or_else(|| Arc::new(Value::Null)),
            );
        }
        match &p.output {
            Some(t) => t.eval(&p.env, &scope).map_err(|message| {
                RunError::Stage(StageError {
                    pipeline: p.name.clone(),
                    file: p.file.clone(),
                    stage: "output".into(),
                    message,
                })
            }),
            None => Ok(Value::Object(
                by_name.iter().map(|(k, v)| (k.clone(), Value::clone(v))).collect(),
            )),
        }
    };
    let result = match result {
        // An inner pipeline's exit carries its own output; this pipeline's replaces it.
        Some(Ok(Flow::Exit { code, status, .. })) => Ok(Flow::Exit {
            code,
            status,
            output: output().ok(),
        }),
        Some(r) => r,
        None => output().map(Flow::Value),
    };
    (result, reports, by_name)
}

/// `llm`, `for_each(run)`, ...
pub fn kind(st: &Stage) -> String {
    match &st.modifier {
        Some(m) => format!("{}({})", m.key(), st.action.key()),
        None => st.action.key().to_owned(),
    }
}

fn skipped(st: &Stage) -> StageReport {
    StageStats::default().report(&st.name, kind(st), "skipped", 0.0, None)
}

async fn run_stage<'a>(p: &'a Arc<Pipeline>, i: usize, scope: Scope, rt: &'a Runtime) -> Finished {
    let st = &p.stages[i];
    let started = Instant::now();
    let stats = StageStats::default();
    let span = tracing::info_span!("stage", name = %st.name, kind = %kind(st));
    let res = async {
        if let Some((_, cond)) = &st.when {
            if !cond.eval_bool(&p.env, &scope).map_err(|e| format!("`when:` {e}"))? {
                tracing::debug!("condition false, skipped");
                return Ok(None);
            }
        }
        // Fan-outs report their own progress; `ask` waits for a person.
        let _step = match (&st.modifier, &st.action) {
            (None, StageAction::Fn { .. } | StageAction::Llm(_)) => rt
                .progress
                .as_ref()
                .and_then(|pr| pr.step(&format!("{}: {}", p.name, st.name))),
            _ => None,
        };
        let cx = crate::stages::StageCx {
            pipeline: p,
            stage: st,
            rt,
            stats: &stats,
        };
        crate::stages::execute(&cx, &scope).await.map(Some)
    }
    .instrument(span)
    .await;
    let wall_ms = started.elapsed().as_secs_f64() * 1e3;
    let (status, error) = match &res {
        Ok(None) => ("skipped", None),
        Ok(Some(Flow::Exit { .. })) => ("exited", None),
        Ok(Some(Flow::Value(_))) => ("ok", None),
        Err(e) => ("failed", Some(e.clone())),
    };
    tracing::debug!(stage = %st.name, status, wall_ms, "stage finished");
    let report = stats.report(&st.name, kind(st), status, wall_ms, error);
    (i, res, report)
}
