//! `fn:` — call a registered native function with the stage's `with:`.

use super::{Flow, StageFailure};
use crate::registry::Native;
use crate::template::Scope;

use super::StageCx;

pub async fn run(cx: &StageCx<'_>, scope: &Scope, native: &Native) -> Result<Flow, StageFailure> {
    let args = cx.with_args(scope)?;
    let out = (native.call)(args, cx.call_context())
        .await
        .map_err(StageFailure::Native)?;
    Ok(Flow::Value(out))
}
