//! `mcp:` — one MCP tool call, vetted by the stage's scope guard in code
//! and audited; a denied call is never sent (see `mcp::guarded_call`).

use serde_json::{json, Value};

use super::{Flow, StageFailure};
use crate::mcp::{guarded_call, CallOutcome, ServerConfig};
use crate::template::Scope;

use std::sync::Arc;

use super::StageCx;
use crate::compile::ActionSite;
use crate::spec::McpSpec;
use crate::template::Tmpl;

/// `mcp:` — one MCP tool call through the scope guard.
pub struct McpStage {
    pub server: Tmpl,
    pub tool: Tmpl,
    pub args: Tmpl,
    pub guard: Arc<dyn crate::mcp::CallGuard>,
    pub audit: Tmpl,
    pub sub_intent: Option<Tmpl>,
}

/// An unknown guard is reported and denies every call, so the stage's
/// values are still checked.
pub(super) fn compile(m: &McpSpec, site: &mut ActionSite) -> McpStage {
    let guard = site.registry().get_guard(&m.guard).cloned();
    if guard.is_none() {
        site.push(site.unknown("mcp.guard", "scope guard", &m.guard, site.registry().guard_names()));
    }
    McpStage {
        server: site.value(&m.server, "mcp.server"),
        tool: site.value(&m.tool, "mcp.tool"),
        args: site.value(&m.args, "mcp.args"),
        guard: guard.unwrap_or_else(|| Arc::new(crate::mcp::DenyAll)),
        audit: site.value(&m.audit, "mcp.audit"),
        sub_intent: m.sub_intent.as_ref().map(|v| site.value(v, "mcp.sub_intent")),
    }
}

pub async fn run(cx: &StageCx<'_>, scope: &Scope, mcp: &McpStage) -> Result<Flow, StageFailure> {
    let McpStage {
        server,
        tool,
        args,
        guard,
        audit,
        sub_intent,
    } = mcp;
    let config: ServerConfig =
        serde_json::from_value(cx.eval(server, scope)?).map_err(|e| format!("`mcp.server`: {e}"))?;
    let tool = cx.eval(tool, scope)?;
    let tool = tool.as_str().ok_or("`mcp.tool` must be a string")?.to_owned();
    let args = cx.eval(args, scope)?;
    let audit = cx.write_path(&cx.eval(audit, scope)?)?;
    let sub_intent = match sub_intent {
        Some(t) => cx.eval(t, scope)?.as_str().unwrap_or_default().to_owned(),
        None => String::new(),
    };
    let client = cx
        .rt
        .mcp
        .client(&config, cx.rt.limits.http_bytes, &cx.rt.product)
        .await
        .map_err(|e| StageFailure::McpUnavailable(Box::new(e)))?;
    let outcome = guarded_call(&client, guard.as_ref(), &audit, &sub_intent, &tool, args)
        .await
        .map_err(|e| StageFailure::Mcp(Box::new(e)))?;
    Ok(Flow::Value(match outcome {
        CallOutcome::Sent(result) => json!({"sent": true, "tool": tool, "result": result}),
        CallOutcome::Denied { reason } => json!({"sent": false, "tool": tool, "denied": reason, "result": Value::Null}),
    }))
}
