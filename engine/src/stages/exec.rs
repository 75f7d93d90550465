//! `exec:` — run a command (no shell), optionally feeding stdin.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use super::{Flow, StageFailure};
use crate::template::Scope;

use super::StageCx;
use crate::compile::ActionSite;
use crate::spec::ExecSpec;
use crate::template::Tmpl;

/// `exec:` — one program, without a shell.
pub struct ExecStage {
    pub command: Tmpl,
    pub stdin: Option<Tmpl>,
    pub timeout_s: Option<u64>,
}

pub(super) fn compile(e: &ExecSpec, site: &mut ActionSite) -> ExecStage {
    ExecStage {
        command: site.value(&e.command, "exec.command"),
        stdin: e.stdin.as_ref().map(|v| site.value(v, "exec.stdin")),
        timeout_s: e.timeout_s,
    }
}

pub async fn run(cx: &StageCx<'_>, scope: &Scope, exec: &ExecStage) -> Result<Flow, StageFailure> {
    let ExecStage {
        command,
        stdin,
        timeout_s,
    } = exec;
    let argv: Vec<String> = match cx.eval(command, scope)? {
        Value::Array(a) => a
            .iter()
            .map(|v| v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()))
            .collect(),
        Value::String(s) => s.split_whitespace().map(str::to_owned).collect(),
        other => return Err(format!("`exec.command` must be a list of arguments, got {other}").into()),
    };
    let (program, args) = argv.split_first().ok_or("`exec.command` is empty")?;
    let input = match stdin {
        Some(t) => Some(match cx.eval(t, scope)? {
            Value::String(s) => s,
            other => other.to_string(),
        }),
        None => None,
    };
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .current_dir(&cx.rt.workdir)
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| StageFailure::io(format!("cannot start `{program}`"), e))?;
    if let (Some(text), Some(mut pipe)) = (input, child.stdin.take()) {
        pipe.write_all(text.as_bytes())
            .await
            .map_err(|e| StageFailure::io(format!("cannot write to `{program}`"), e))?;
    }
    let limit = Duration::from_secs(timeout_s.unwrap_or(60));
    let out = tokio::time::timeout(limit, child.wait_with_output())
        .await
        .map_err(|_| StageFailure::TimedOut {
            what: format!("`{program}`"),
            seconds: limit.as_secs(),
        })?
        .map_err(|e| StageFailure::io(format!("`{program}`"), e))?;
    Ok(Flow::Value(json!({
        "code": out.status.code(),
        "stdout": String::from_utf8_lossy(&out.stdout),
        "stderr": String::from_utf8_lossy(&out.stderr),
    })))
}
