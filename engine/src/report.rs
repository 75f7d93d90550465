//! The run report: what each stage did, how long, and what it cost.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;

use crate::llm::Usage;

/// How a whole run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every stage that ran ended well.
    Ok,
    /// An `exit` stage ended it.
    Exited,
    /// A stage failed.
    Failed,
}

/// How one stage ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StageStatus {
    /// It ran and succeeded.
    Ok,
    /// Its `when:` was false, or nothing upstream of it ran.
    Skipped,
    /// It failed; `error` says why.
    Failed,
    /// It ended the run (an `exit` stage).
    Exited,
    /// The run ended (an exit or a failure elsewhere) before it started.
    NotRun,
    /// The run ended while it was running.
    Cancelled,
}

/// What a whole run did: its end and each stage's report.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// The pipeline's name.
    pub pipeline: String,
    /// The pipeline file, as given.
    pub file: String,
    /// How the run ended.
    pub status: RunStatus,
    /// The process exit code the run asks for.
    pub exit_code: i32,
    /// Wall-clock time of the run, in milliseconds.
    pub wall_ms: f64,
    /// One report per stage of the pipeline.
    pub stages: Vec<StageReport>,
}

/// What one stage did: how it ended, how long it took, what it cost.
#[derive(Debug, Clone, Serialize)]
pub struct StageReport {
    /// The stage's name.
    pub name: String,
    /// The stage's kind (`llm`, `read`, `for_each`, ...).
    pub kind: String,
    /// How it ended.
    pub status: StageStatus,
    /// Wall-clock time, in milliseconds.
    pub wall_ms: f64,
    /// Model requests sent, failed ones too.
    pub calls: u64,
    /// Transport retries over all its calls.
    pub retries: u64,
    /// Repair turns: answers sent back to be fixed (no JSON, or failing the output schema).
    pub repairs: u64,
    /// Tokens over all its calls.
    pub tokens: Usage,
    /// Answers taken from this run's earlier identical requests (not sent).
    #[serde(skip_serializing_if = "is_zero")]
    pub cache_hits: u64,
    /// Requests sent and tokens, per `provider/model`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub models: BTreeMap<String, ModelUsage>,
    /// Why it failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Reports of the sub-pipeline runs of a `run` stage.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<RunReport>,
}

/// What one model was asked: requests sent (failed ones too) and tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ModelUsage {
    /// Requests sent to the model.
    pub calls: u64,
    /// Tokens those requests spent.
    pub tokens: Usage,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl RunReport {
    /// Requests and tokens per `provider/model` over the whole run.
    pub fn usage_by_model(&self) -> BTreeMap<String, ModelUsage> {
        let mut out: BTreeMap<String, ModelUsage> = BTreeMap::new();
        for stage in &self.stages {
            merge_models(&mut out, &stage.models);
        }
        out
    }

    /// Answers reused within the run instead of sent again.
    pub fn cache_hits(&self) -> u64 {
        self.stages.iter().map(|s| s.cache_hits).sum()
    }
}

fn merge_models(into: &mut BTreeMap<String, ModelUsage>, from: &BTreeMap<String, ModelUsage>) {
    for (model, usage) in from {
        let slot = into.entry(model.clone()).or_default();
        slot.calls += usage.calls;
        slot.tokens += usage.tokens;
    }
}

/// Counters a stage's calls add to while it runs (concurrently).
#[derive(Debug, Default)]
pub struct StageStats {
    inner: Mutex<Counters>,
}

#[derive(Debug, Default, Clone)]
struct Counters {
    calls: u64,
    retries: u64,
    repairs: u64,
    tokens: Usage,
    cache_hits: u64,
    models: BTreeMap<String, ModelUsage>,
    runs: Vec<RunReport>,
}

impl StageStats {
    pub fn call(&self, retries: u32, tokens: Usage) {
        let mut c = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        c.calls += 1;
        c.retries += u64::from(retries);
        c.tokens += tokens;
    }

    /// One request sent to `provider`'s `model`, answered or not.
    pub fn call_to(&self, model: &str, provider: &str, retries: u32, tokens: Usage) {
        self.call(retries, tokens);
        let mut c = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let slot = c.models.entry(format!("{provider}/{model}")).or_default();
        slot.calls += 1;
        slot.tokens += tokens;
    }

    pub fn cache_hit(&self) {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).cache_hits += 1;
    }

    pub fn repair(&self) {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).repairs += 1;
    }

    pub fn sub_run(&self, report: RunReport) {
        let mut c = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // Sub-pipeline costs roll up into the stage that ran them.
        for s in &report.stages {
            c.calls += s.calls;
            c.retries += s.retries;
            c.repairs += s.repairs;
            c.tokens += s.tokens;
            c.cache_hits += s.cache_hits;
            merge_models(&mut c.models, &s.models);
        }
        c.runs.push(report);
    }

    pub fn report(
        &self,
        name: &str,
        kind: &str,
        status: StageStatus,
        wall_ms: f64,
        error: Option<String>,
    ) -> StageReport {
        let c = self.inner.lock().unwrap_or_else(|e| e.into_inner()).clone();
        StageReport {
            name: name.to_owned(),
            kind: kind.to_owned(),
            status,
            wall_ms,
            calls: c.calls,
            retries: c.retries,
            repairs: c.repairs,
            tokens: c.tokens,
            cache_hits: c.cache_hits,
            models: c.models,
            error,
            runs: c.runs,
        }
    }
}
