//! MCP for Unity: the server starts (or answers at its URL), lists its
//! tools, and a Unity editor answers a read-only question.

use std::path::Path;

use engine::io::Limits;
use engine::mcp::{McpClient, McpError, ServerConfig};

use super::Check;
use crate::build::execute::{resolve_server, tool_failure, INSTALL_GUIDANCE};

const NAME: &str = "MCP for Unity";

/// Asks the editor for its active scene: a fixed read-only query (never
/// model-planned), so it needs no scope guard and writes no audit row.
const EDITOR_PROBE: (&str, &str) = ("manage_scene", "get_active");

/// The check without starting anything: `--offline` promises no program
/// runs, and an untrusted project's server settings are not used.
pub(crate) fn not_started(why: &str) -> Check {
    match why {
        "offline" => Check::warn(
            NAME,
            "not checked (--offline: no server is started)",
            "run `unity-assets doctor` without --offline to check it",
        ),
        _ => Check::fail(
            NAME,
            "not checked: this project's settings are not trusted",
            "review them and run `unity-assets trust` (see the trust line)",
        ),
    }
    .optional()
}

/// Initialize, tools/list, then a read-only call only an attached Unity
/// editor can answer. Optional: search and index work without it.
pub async fn check(project: &Path, server: Option<ServerConfig>, limits: &Limits) -> Check {
    let outcome = async {
        let config = resolve_server(project, server, limits)?;
        let client = McpClient::connect(&config, limits.http_bytes, &crate::PRODUCT).await?;
        let checked = async {
            let tools = client.list_tools().await?.len();
            let (tool, action) = EDITOR_PROBE;
            let editor = match client.call_tool(tool, serde_json::json!({"action": action})).await {
                Ok(result) => tool_failure(&result).map_or(Ok(result), Err),
                Err(e) => Err(e.to_string()),
            };
            Ok::<_, McpError>((tools, editor))
        }
        .await;
        let name = client.server_name();
        client.close().await;
        checked.map(|(tools, editor)| (name, tools, editor))
    };
    let check = match outcome.await {
        Ok((name, tools, Ok(scene))) => {
            let scene = scene["data"]["name"]
                .as_str()
                .map_or(String::new(), |n| format!(", active scene {n}"));
            Check::pass(
                NAME,
                format!("reachable ({name}, {tools} tools); Unity editor attached{scene}"),
            )
        }
        Ok((name, tools, Err(why))) => Check::fail(
            NAME,
            format!("server answers ({name}, {tools} tools) but no Unity editor does: {why}"),
            "Open this project in the Unity Editor with the MCP for Unity package installed and its bridge \
             running (Window > MCP for Unity), then run `unity-assets doctor` again.",
        ),
        Err(e) => Check::fail(NAME, format!("unreachable: {e}"), INSTALL_GUIDANCE.trim()),
    };
    check.optional()
}
