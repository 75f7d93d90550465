//! `exit:` — end the run now with a status and an exit code.

use super::{Flow, StageFailure};
use crate::template::Scope;

use super::StageCx;
use crate::compile::ActionSite;
use crate::spec::ExitSpec;
use crate::template::Tmpl;

/// `exit:` — end the run with a code and a status.
pub struct ExitStage {
    pub code: Tmpl,
    pub status: Option<Tmpl>,
}

pub(super) fn compile(e: &ExitSpec, site: &mut ActionSite) -> ExitStage {
    ExitStage {
        code: site.value(&e.code, "exit.code"),
        status: e.status.as_ref().map(|v| site.value(v, "exit.status")),
    }
}

pub fn run(cx: &StageCx<'_>, scope: &Scope, exit: &ExitStage) -> Result<Flow, StageFailure> {
    let ExitStage { code, status } = exit;
    let code = cx.eval(code, scope)?;
    let code = code
        .as_i64()
        .or_else(|| code.as_str().and_then(|s| s.parse().ok()))
        .ok_or_else(|| format!("`exit.code` must be an integer, got {code}"))?;
    let status = match status {
        Some(t) => Some(cx.eval(t, scope)?.as_str().map(str::to_owned).unwrap_or_default()),
        None => None,
    };
    Ok(Flow::Exit {
        code: i32::try_from(code).map_err(|_| format!("exit code {code} is out of range"))?,
        status,
    })
}
