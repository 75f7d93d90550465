//! `mcp:` — one MCP tool call, vetted by the stage's scope guard in code
//! and audited; a denied call is never sent (see `mcp::guarded_call`).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::mcp::{guarded_call, CallGuard, CallOutcome, McpClient, ServerConfig};
use crate::run::Flow;
use crate::template::{Scope, Tmpl};

use super::StageCx;

/// Clients by server, connected on first use and reused for the whole run.
#[derive(Default)]
pub struct McpConnections {
    clients: tokio::sync::Mutex<HashMap<String, Arc<McpClient>>>,
}

impl McpConnections {
    async fn client(&self, config: &ServerConfig, max_answer_bytes: u64) -> Result<Arc<McpClient>, String> {
        let key = config.describe();
        let mut clients = self.clients.lock().await;
        if let Some(c) = clients.get(&key) {
            return Ok(Arc::clone(c));
        }
        let client = Arc::new(
            McpClient::connect(config, max_answer_bytes)
                .await
                .map_err(|e| format!("mcp_unavailable: {e}"))?,
        );
        clients.insert(key, Arc::clone(&client));
        Ok(client)
    }
}

#[allow(clippy::too_many_arguments)]
pub async fn run(
    cx: &StageCx<'_>,
    scope: &Scope,
    server: &Tmpl,
    tool: &Tmpl,
    args: &Tmpl,
    guard: &dyn CallGuard,
    audit: &Tmpl,
    sub_intent: Option<&Tmpl>,
) -> Result<Flow, String> {
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
    let client = cx.rt.mcp.client(&config, cx.rt.limits.http_bytes).await?;
    let outcome = guarded_call(&client, guard, &audit, &sub_intent, &tool, args)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Flow::Value(match outcome {
        CallOutcome::Sent(result) => json!({"sent": true, "tool": tool, "result": result}),
        CallOutcome::Denied { reason } => json!({"sent": false, "tool": tool, "denied": reason, "result": Value::Null}),
    }))
}
