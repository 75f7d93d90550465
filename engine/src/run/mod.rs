//! The executor: runs a compiled pipeline's DAG on tokio.
//!
//! Every stage starts as soon as all of its `needs` have settled, so
//! independent stages run concurrently. A stage whose `when:` is false, or
//! all of whose needs were skipped, is skipped with output `null`. An `exit`
//! stage ends the run at once; a failing stage ends it with an error that
//! names the stage, the pipeline file and the cause.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;
use tracing::Instrument;

use crate::compile::{Pipeline, Stage};
use crate::registry::RunHoldings;
use crate::report::{RunReport, RunStatus, StageReport, StageStats, StageStatus};
use crate::runtime::Runtime;
use crate::stages::{Flow, StageAction, StageCx, StageError, StageFailure};
use crate::template::Scope;

/// How a run ended when it did not fail.
#[derive(Debug, Clone)]
pub enum Ending {
    /// Every stage settled; this is the pipeline's output.
    Finished(Value),
    /// An `exit` stage ended the run. `output` is the pipeline's output
    /// evaluated over the stages that ran (`None` when it cannot be), so a
    /// caller printing the output has a document on every ending.
    Exited {
        /// The exit code it asked for.
        code: i32,
        /// Its `status:` message, if any.
        status: Option<String>,
        /// The pipeline's output, when it can be evaluated.
        output: Option<Value>,
    },
}

/// The end of a run: how it ended, and the report either way.
#[derive(Debug)]
pub struct RunOutcome {
    /// How it ended, or the stage failure that ended it.
    pub result: Result<Ending, StageError>,
    /// What each stage did, whichever way it ended.
    pub report: RunReport,
    /// Each stage's output by name (skipped ones as null), shared, not
    /// copied; with [`Runtime::releasing_outputs`] those released during
    /// the run are null too.
    pub outputs: HashMap<String, Arc<Value>>,
}

impl RunOutcome {
    /// 0 for a finished run, an `exit` stage's code, or 1 for a failure.
    pub fn exit_code(&self) -> i32 {
        match &self.result {
            Ok(Ending::Exited { code, .. }) => *code,
            Ok(Ending::Finished(_)) => 0,
            Err(_) => 1,
        }
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
        Ok(Ending::Exited { code, .. }) => (RunStatus::Exited, *code),
        Ok(Ending::Finished(_)) => (RunStatus::Ok, 0),
        Err(_) => (RunStatus::Failed, 1),
    };
    let wall_ms = started.elapsed().as_secs_f64() * 1e3;
    let report = RunReport {
        pipeline: p.name.clone(),
        file: p.file.clone(),
        status,
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

type Finished = (usize, Result<Option<Flow>, StageFailure>, StageReport);

async fn execute(
    p: &Arc<Pipeline>,
    inputs: Value,
    rt: &Runtime,
) -> (
    Result<Ending, StageError>,
    Vec<StageReport>,
    HashMap<String, Arc<Value>>,
) {
    let n = p.stages.len();
    let mut state = vec![State::Pending; n];
    let mut outputs: Vec<Option<Arc<Value>>> = vec![None; n];
    let mut reports: Vec<Option<StageReport>> = vec![None; n];
    let mut base = Scope::of_run(rt.cancel.clone(), rt.product);
    base.set("inputs", Arc::new(inputs));
    base.set("params", Arc::clone(&p.params));
    // Dropped when this function returns or its future is dropped (a stage
    // still at work on the blocking pool keeps its share until it ends).
    let holdings = RunHoldings::default();
    let mut running: FuturesUnordered<futures::future::BoxFuture<'_, Finished>> = FuturesUnordered::new();
    let mut releases = Releases::new(p, rt.release_outputs);
    // Set by the first exit (its code and status) or failure: the run ends.
    let mut ended: Option<Result<(i32, Option<String>), StageError>> = None;

    loop {
        if ended.is_none() {
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
                    releases.started(i, &mut outputs);
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
                if rt.cancel.is_cancelled() {
                    ended = Some(Err(StageError {
                        pipeline: p.name.clone(),
                        file: p.file.clone(),
                        stage: st.name.clone(),
                        cause: Box::new(StageFailure::Cancelled),
                    }));
                    break;
                }
                state[i] = State::Running;
                running.push(Box::pin(run_stage(p, i, scope, rt, &holdings)));
                releases.started(i, &mut outputs);
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
                outputs[i] = releases.keeps(i).then(|| Arc::new(v));
            }
            Ok(Some(Flow::Exit { code, status })) => {
                state[i] = State::Done;
                if ended.is_none() {
                    ended = Some(Ok((code, status)));
                }
            }
            Err(cause) => {
                state[i] = State::Failed;
                if ended.is_none() {
                    ended = Some(Err(StageError {
                        pipeline: p.name.clone(),
                        file: p.file.clone(),
                        stage: p.stages[i].name.clone(),
                        cause: Box::new(cause),
                    }));
                }
            }
        }
        if ended.is_some() {
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
                let status = if *s == State::Running {
                    StageStatus::Cancelled
                } else {
                    StageStatus::NotRun
                };
                stats.report(&st.name, st.kind(), status, 0.0, None)
            })
        })
        .collect();
    let output = || -> Result<Value, StageError> {
        let mut scope = base.clone();
        for (i, s) in p.stages.iter().enumerate() {
            scope.set(
                s.ident.clone(),
                outputs[i].clone().unwrap_or_else(|| Arc::new(Value::Null)),
            );
        }
        match &p.output {
            Some(t) => t.eval(&p.env, &scope).map_err(|message| StageError {
                cause: Box::new(StageFailure::Template(message)),
                pipeline: p.name.clone(),
                file: p.file.clone(),
                stage: "output".into(),
            }),
            None => Ok(Value::Object(
                by_name.iter().map(|(k, v)| (k.clone(), Value::clone(v))).collect(),
            )),
        }
    };
    let result = match ended {
        Some(Ok((code, status))) => Ok(Ending::Exited {
            code,
            status,
            output: output().ok(),
        }),
        Some(Err(e)) => Err(e),
        None => output().map(Ending::Finished),
    };
    (result, reports, by_name)
}

/// Which outputs a run may drop, and when: once every stage reading an
/// output has started (its scope holds what it reads), unless the
/// pipeline's output reads it.
struct Releases {
    /// Per stage: the stages whose outputs it reads.
    reads: Vec<Vec<usize>>,
    /// Per stage: readers not started yet; `None` for an output kept to the end.
    unread: Vec<Option<usize>>,
}

impl Releases {
    fn new(p: &Pipeline, release: bool) -> Self {
        let by_ident: HashMap<&str, usize> = p
            .stages
            .iter()
            .enumerate()
            .map(|(i, s)| (s.ident.as_str(), i))
            .collect();
        let reads: Vec<Vec<usize>> = p
            .stages
            .iter()
            .map(|s| {
                s.reads
                    .iter()
                    .filter_map(|r| by_ident.get(r.as_str()).copied())
                    .collect()
            })
            .collect();
        let mut unread: Vec<Option<usize>> = p
            .stages
            .iter()
            .map(|s| (release && !p.output_reads.contains(&s.ident)).then_some(0))
            .collect();
        for &j in reads.iter().flatten() {
            if let Some(n) = &mut unread[j] {
                *n += 1;
            }
        }
        Self { reads, unread }
    }

    /// Whether stage `i`'s output is stored when it finishes.
    fn keeps(&self, i: usize) -> bool {
        self.unread[i] != Some(0)
    }

    /// Stage `i` started (or was skipped): drop what it was the last to read.
    fn started(&mut self, i: usize, outputs: &mut [Option<Arc<Value>>]) {
        for &j in &self.reads[i] {
            if let Some(n) = &mut self.unread[j] {
                *n -= 1;
                if *n == 0 {
                    outputs[j] = None;
                }
            }
        }
    }
}

fn skipped(st: &Stage) -> StageReport {
    StageStats::default().report(&st.name, st.kind(), StageStatus::Skipped, 0.0, None)
}

async fn run_stage<'a>(
    p: &'a Arc<Pipeline>,
    i: usize,
    scope: Scope,
    rt: &'a Runtime,
    holdings: &'a RunHoldings,
) -> Finished {
    let st = &p.stages[i];
    let started = Instant::now();
    let stats = StageStats::default();
    let span = tracing::info_span!("stage", name = %st.name, kind = %st.kind());
    let res = async {
        if let Some((_, cond)) = &st.when {
            if !cond
                .eval_bool(&p.env, &scope)
                .map_err(|e| StageFailure::Template(format!("`when:` {e}")))?
            {
                tracing::debug!("condition false, skipped");
                return Ok(None);
            }
        }
        // Fan-outs report their own progress; `ask` waits for a person.
        let _step = match (&st.modifier, &st.action) {
            (None, StageAction::Fn(_) | StageAction::Llm(_)) => rt
                .progress
                .as_ref()
                .and_then(|pr| pr.step(&format!("{}: {}", p.name, st.name))),
            _ => None,
        };
        let cx = StageCx {
            pipeline: p,
            stage: st,
            rt,
            stats: &stats,
            holdings,
        };
        crate::stages::execute(&cx, &scope).await.map(Some)
    }
    .instrument(span)
    .await;
    let wall_ms = started.elapsed().as_secs_f64() * 1e3;
    let (status, error) = match &res {
        Ok(None) => (StageStatus::Skipped, None),
        Ok(Some(Flow::Exit { .. })) => (StageStatus::Exited, None),
        Ok(Some(Flow::Value(_))) => (StageStatus::Ok, None),
        Err(e) => (StageStatus::Failed, Some(e.to_string())),
    };
    tracing::debug!(stage = %st.name, ?status, wall_ms, "stage finished");
    let report = stats.report(&st.name, st.kind(), status, wall_ms, error);
    (i, res, report)
}
