//! `fn:` — call a registered native function with the stage's `with:`.

use super::{Flow, StageFailure};
use crate::compile::ActionSite;
use crate::registry::Native;
use crate::template::Scope;

use super::StageCx;

/// `fn:` — a native function of the registry.
pub struct FnStage {
    pub name: String,
    pub native: Native,
}

pub(super) fn compile(name: &str, site: &mut ActionSite) -> Option<FnStage> {
    match site.registry().get_function(name) {
        Some(native) => Some(FnStage {
            name: name.to_owned(),
            native: native.clone(),
        }),
        None => {
            site.push(site.unknown("fn", "native function", name, site.registry().function_names()));
            None
        }
    }
}

pub async fn run(cx: &StageCx<'_>, scope: &Scope, native: &Native) -> Result<Flow, StageFailure> {
    let args = cx.with_args(scope)?;
    let out = (native.call)(args, cx.call_context())
        .await
        .map_err(StageFailure::Native)?;
    Ok(Flow::Value(out))
}
