//! `append:` — one JSONL line under the file's lock (see `io::append`).

use serde_json::json;

use super::{Flow, StageFailure};
use crate::io::{append_line_locked, AppendError};
use crate::template::Scope;

use super::{recover, StageCx};
use crate::compile::ActionSite;
use crate::spec::AppendSpec;
use crate::template::Tmpl;

/// `append:` — one gated row added to a line-per-record file.
pub struct AppendStage {
    pub path: Tmpl,
    pub value: Tmpl,
}

pub(super) fn compile(a: &AppendSpec, site: &mut ActionSite) -> AppendStage {
    AppendStage {
        path: site.value(&a.path, "append.path"),
        value: site.value(&a.value, "append.value"),
    }
}

pub fn run(cx: &StageCx<'_>, scope: &Scope, append: &AppendStage) -> Result<Flow, StageFailure> {
    let AppendStage { path, value } = append;
    let path = cx.write_path(&cx.eval(path, scope)?)?;
    let value = cx.eval(value, scope)?;
    if let Some(gate) = &cx.stage.gate {
        // Gate the row before it is written: a bad row never reaches the log.
        gate.check(&value).map_err(|errors| StageFailure::Gate {
            what: "row".into(),
            file: gate.file.clone(),
            errors,
        })?;
    }
    let line = serde_json::to_string(&value).map_err(|e| e.to_string())?;
    match append_line_locked(&path, &line) {
        Ok(()) => Ok(Flow::Value(
            json!({"path": path.display().to_string(), "locked": false}),
        )),
        Err(e @ AppendError::Locked { .. }) => {
            recover(cx, scope, &cx.stage.on_locked, StageFailure::Locked(Box::new(e)))
        }
        Err(AppendError::Io { path, source }) => {
            Err(StageFailure::io(format!("cannot append to {}", path.display()), source))
        }
    }
}
