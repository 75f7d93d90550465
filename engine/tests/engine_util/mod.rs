//! Shared by the `engine_*` test files: a throw-away project folder holding
//! `pipelines/ prompts/ schemas/`, compiled and run the way the CLI does.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::sync::Arc;

use engine::diagnostic::Diagnostics;
use engine::llm::Provider;
use engine::resources::Resources;
use engine::{Compiler, ParamLayers, Pipeline};
use engine::{Ending, RunOutcome, Runtime};
use engine::{Output, Registry};
use serde_json::Value;

/// A temporary folder of pipeline resources; removed when dropped.
pub struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Write `text` at `rel` (`pipelines/x.yaml`), creating folders.
    pub fn file(&self, rel: &str, text: &str) -> &Self {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().expect("rel has a folder")).expect("mkdir");
        std::fs::write(p, text).expect("write fixture");
        self
    }

    /// Write `pipelines/<name>.yaml`.
    pub fn pipeline(&self, name: &str, yaml: &str) -> &Self {
        self.file(&format!("pipelines/{name}.yaml"), yaml)
    }

    pub fn resources(&self) -> Resources {
        Resources::from_dir(self.root().to_path_buf())
    }

    /// Compile `name` with the offline builtin provider and no param layers.
    pub fn compile(&self, name: &str, registry: &Registry) -> Result<Arc<Pipeline>, Diagnostics> {
        self.compile_with(name, registry, &ParamLayers::default(), true)
    }

    pub fn compile_with(
        &self,
        name: &str,
        registry: &Registry,
        layers: &ParamLayers,
        builtin_provider: bool,
    ) -> Result<Arc<Pipeline>, Diagnostics> {
        let resources = self.resources();
        Compiler::new(&resources, registry, layers, builtin_provider).compile(name)
    }

    /// A runtime working in this folder, capturing output lines.
    pub fn runtime(&self, provider: Option<Arc<dyn Provider>>) -> Runtime {
        Runtime::new(self.root().to_path_buf(), Output::buffer(), self.resources()).with_provider(provider)
    }

    /// Compile (panicking with the diagnostics on failure) and run `name`.
    pub async fn run(
        &self,
        name: &str,
        registry: &Registry,
        inputs: Value,
        provider: Option<Arc<dyn Provider>>,
    ) -> (RunOutcome, Output) {
        let pipeline = self
            .compile_with(name, registry, &ParamLayers::default(), provider.is_none())
            .unwrap_or_else(|d| panic!("{name} compiles:\n{d}"));
        let rt = self.runtime(provider);
        let inputs = match inputs {
            Value::Object(m) => pipeline.bind_inputs(m).unwrap_or_else(|e| panic!("inputs bind: {e}")),
            other => panic!("inputs must be a map, got {other}"),
        };
        let outcome = engine::run(&pipeline, inputs, &rt).await;
        (outcome, rt.output().clone())
    }
}

/// The report entry of `stage`.
pub fn stage<'a>(outcome: &'a RunOutcome, name: &str) -> &'a engine::StageReport {
    outcome
        .report
        .stages
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no stage `{name}` in the report"))
}

/// The output of a run that finished (panics otherwise).
pub fn value_of(outcome: &RunOutcome) -> Value {
    match &outcome.result {
        Ok(Ending::Finished(v)) => v.clone(),
        other => panic!("expected a value, got {other:?}"),
    }
}

/// The message of a run that failed (panics otherwise).
pub fn failure(outcome: &RunOutcome) -> String {
    match &outcome.result {
        Err(e) => e.to_string(),
        other => panic!("expected a stage failure, got {other:?}"),
    }
}
