//! The run report: what each stage did, how long, and what it cost.

use std::sync::Mutex;

use serde::Serialize;

use crate::llm::Usage;

#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub pipeline: String,
    pub file: String,
    /// `ok`, `exited` (an `exit` stage ended it) or `failed`.
    pub status: String,
    pub exit_code: i32,
    pub wall_ms: f64,
    pub stages: Vec<StageReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StageReport {
    pub name: String,
    pub kind: String,
    /// `ok`, `skipped`, `failed`, `exited` or `not_run`.
    pub status: String,
    pub wall_ms: f64,
    pub calls: u64,
    pub retries: u64,
    pub repairs: u64,
    pub tokens: Usage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Reports of the sub-pipeline runs of a `run` stage.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<RunReport>,
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
    runs: Vec<RunReport>,
}

impl StageStats {
    pub fn call(&self, retries: u32, tokens: Usage) {
        let mut c = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        c.calls += 1;
        c.retries += u64::from(retries);
        c.tokens += tokens;
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
        }
        c.runs.push(report);
    }

    pub fn report(&self, name: &str, kind: String, status: &str, wall_ms: f64, error: Option<String>) -> StageReport {
        let c = self.inner.lock().unwrap_or_else(|e| e.into_inner()).clone();
        StageReport {
            name: name.to_owned(),
            kind,
            status: status.to_owned(),
            wall_ms,
            calls: c.calls,
            retries: c.retries,
            repairs: c.repairs,
            tokens: c.tokens,
            error,
            runs: c.runs,
        }
    }
}
