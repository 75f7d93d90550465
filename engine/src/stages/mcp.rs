//! `mcp:` — one MCP tool call, vetted by the stage's scope guard in code
//! and audited; a denied call is never sent (see `mcp::guarded_call`).

use serde_json::{json, Value};

use super::{Flow, StageFailure};
use crate::mcp::{guarded_call, CallOutcome, ServerConfig};
use crate::template::Scope;

use super::StageCx;
use crate::compile::McpStage;

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
