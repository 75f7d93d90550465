//! What a stage kind gets to do its work, and how it ends.

use std::sync::Arc;

use serde_json::Value;

use crate::args::Args;
use crate::compile::{Pipeline, Stage};
use crate::report::StageStats;
use crate::runtime::Runtime;
use crate::template::{Scope, Tmpl};

use super::StageFailure;

/// How a stage ended.
#[derive(Debug, Clone)]
pub enum Flow {
    Value(Value),
    /// An `exit` stage (here or in a sub-pipeline) ends the whole run.
    Exit {
        code: i32,
        status: Option<String>,
    },
}

/// What a stage kind gets to do its work.
pub struct StageCx<'a> {
    pub pipeline: &'a Arc<Pipeline>,
    pub stage: &'a Stage,
    pub rt: &'a Runtime,
    pub stats: &'a StageStats,
    /// What native calls keep until the run ends.
    pub holdings: &'a crate::registry::RunHoldings,
}

impl StageCx<'_> {
    /// Evaluate one of this stage's templated values.
    pub fn eval(&self, t: &Tmpl, scope: &Scope) -> Result<Value, StageFailure> {
        t.eval(&self.pipeline.env, scope).map_err(StageFailure::Template)
    }

    /// Evaluate `with:` (an empty map when absent).
    pub fn with(&self, scope: &Scope) -> Result<Value, StageFailure> {
        match &self.stage.with {
            Some(t) => self
                .eval(t, scope)
                .map_err(|e| StageFailure::Template(format!("`with:` {e}"))),
            None => Ok(Value::Object(Default::default())),
        }
    }

    /// Evaluate `with:` for a native function: values read whole from
    /// earlier outputs are shared, not copied.
    pub fn with_args(&self, scope: &Scope) -> Result<Args, StageFailure> {
        match &self.stage.with {
            Some(t) => t
                .eval_args(&self.pipeline.env, scope)
                .map_err(|e| StageFailure::Template(format!("`with:` {e}"))),
            None => Ok(Args::Value(Value::Object(Default::default()))),
        }
    }

    /// A path to read, relative to the run's folder and confined to it.
    pub fn path(&self, v: &Value) -> Result<std::path::PathBuf, StageFailure> {
        let rel = v.as_str().ok_or_else(|| format!("expected a file path, got {v}"))?;
        crate::io::confine(&self.rt.workdir, rel).map_err(StageFailure::Path)
    }

    /// A path to write: confined, and no symlink anywhere on the way.
    pub fn write_path(&self, v: &Value) -> Result<std::path::PathBuf, StageFailure> {
        let rel = v.as_str().ok_or_else(|| format!("expected a file path, got {v}"))?;
        crate::io::refuse_protected(rel, &self.rt.protected).map_err(StageFailure::Path)?;
        crate::io::confine_for_write(&self.rt.workdir, rel).map_err(StageFailure::Path)
    }

    pub fn call_context(&self) -> crate::registry::CallContext {
        crate::registry::CallContext {
            workdir: self.rt.workdir.clone(),
            output: self.rt.output.clone(),
            stage: self.stage.name.clone(),
            resources: self.rt.resources.clone(),
            limits: self.rt.limits,
            product: self.rt.product,
            holdings: self.holdings.clone(),
            progress: self.rt.progress.clone(),
            label: format!("{}: {}", self.pipeline.name, self.stage.name),
        }
    }
}
