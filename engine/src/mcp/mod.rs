//! MCP: a client for any MCP server, a scope guard consulted in code before
//! every call, and an append-only audit of every decision.
//!
//! [`guarded_call`] is the one way a pipeline sends a tool call: the guard
//! decides, the decision is audited, and only an allowed call is sent. A
//! denied call never reaches the server, whatever a plan or a prompt said.

pub mod audit;
pub mod client;
mod connections;
pub mod guard;

use std::path::Path;

use serde_json::Value;

pub use audit::{args_digest, AuditRow, AuditVerdict};
pub use client::{parse_mcp_json, read_mcp_json, McpClient, McpError, ServerConfig, ToolInfo};
pub(crate) use connections::Connections;
pub(crate) use guard::DenyAll;
pub use guard::{CallGuard, Verdict};

/// What happened to one guarded call.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutcome {
    /// The call was sent; this is the tool's result.
    Sent(Value),
    /// The guard refused it; nothing was sent.
    Denied {
        /// Why, for the user.
        reason: String,
    },
}

/// Check `tool(args)` with `guard`, append the decision to `audit_path`,
/// and send the call only if it was allowed. The audit line is written
/// before sending, so a call that hangs or crashes the server is on record;
/// if it cannot be written, nothing is sent.
pub async fn guarded_call(
    client: &McpClient,
    guard: &dyn CallGuard,
    audit_path: &Path,
    sub_intent: &str,
    tool: &str,
    args: Value,
) -> Result<CallOutcome, McpError> {
    let verdict = guard.check(tool, &args);
    let audited = match verdict {
        Verdict::Allowed => AuditVerdict::Allowed,
        Verdict::Denied(_) => AuditVerdict::Denied,
    };
    AuditRow::now(sub_intent, tool, guard.action_of(tool, &args), &args, audited).append_to(audit_path)?;
    match verdict {
        Verdict::Allowed => client.call_tool(tool, args).await.map(CallOutcome::Sent),
        Verdict::Denied(reason) => Ok(CallOutcome::Denied { reason }),
    }
}
