//! A Model Context Protocol client over stdio (a spawned command) or
//! streamable HTTP (a URL), built on the official `rmcp` SDK.
//!
//! It knows nothing of any particular server: the caller says how to reach
//! one ([`ServerConfig`], from a config file or Claude Code's `.mcp.json`),
//! then lists and calls tools with plain JSON.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, ContentBlock, Implementation};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde::Deserialize;
use serde_json::Value;

use crate::io::{Limits, HTTP_KEY};
use tokio::io::{AsyncBufReadExt, BufReader};

/// How many of the server's last stderr lines an error message quotes.
const STDERR_TAIL_LINES: usize = 12;

/// How to reach one MCP server: `command` (+ `args`, `env`) for stdio, or
/// `url` for streamable HTTP. This is the shape of the `mcp:` section of a
/// project config.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The program to start for a stdio server.
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment for the spawned command (added to the inherited one).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The endpoint of a streamable HTTP server.
    #[serde(default)]
    pub url: Option<String>,
    /// Bound on start-up + initialisation, and on each request.
    #[serde(default = "default_timeout_s")]
    pub timeout_s: f64,
}

fn default_timeout_s() -> f64 {
    60.0
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            command: None,
            args: vec![],
            env: BTreeMap::new(),
            url: None,
            timeout_s: default_timeout_s(),
        }
    }
}

impl ServerConfig {
    /// A one-line description for messages (`mcp-for-unity --transport stdio`).
    pub fn describe(&self) -> String {
        match (&self.command, &self.url) {
            (Some(command), _) => std::iter::once(command.as_str())
                .chain(self.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            (None, Some(url)) => url.clone(),
            (None, None) => "(no command or url)".to_owned(),
        }
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_s.max(0.1))
    }
}

/// Why talking to an MCP server failed.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The server could not be started, did not answer, or failed to
    /// initialise: nothing can be sent to it.
    #[error("MCP server `{server}` is unavailable: {detail}")]
    Unavailable {
        /// The server, as its config describes it.
        server: String,
        /// What went wrong.
        detail: String,
    },
    /// A configuration file that names servers could not be used.
    #[error("{path}: {detail}")]
    Config {
        /// The file.
        path: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The server answered a request with a protocol error or not in time.
    #[error("MCP request `{request}` to `{server}` failed: {detail}")]
    Request {
        /// The server, as its config describes it.
        server: String,
        /// The request: its MCP method, and the tool for calls (`tools/call find`).
        request: String,
        /// What went wrong.
        detail: String,
    },
    /// The tool ran and reported an error (`isError: true`).
    #[error("MCP tool `{tool}` reported an error: {detail}")]
    ToolFailed {
        /// The tool called.
        tool: String,
        /// The error the tool reported.
        detail: String,
    },
    /// The audit line for a call could not be written, so the call was not sent.
    #[error("cannot audit the MCP call, so it was not sent: {0}")]
    Audit(#[from] crate::io::AppendError),
}

/// A tool the server offers.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ToolInfo {
    /// The tool's name, as calls give it.
    pub name: String,
    /// What the server says the tool does.
    pub description: String,
}

/// A live session with one MCP server. Dropping it ends the session (and a
/// spawned server process); [`McpClient::close`] does so gracefully.
pub struct McpClient {
    service: RunningService<RoleClient, ClientConfig>,
    server: String,
    timeout: Duration,
    stderr_tail: StderrTail,
    /// The bound on one answer, for servers reached over HTTP.
    answer_limit: Option<u64>,
    /// Whose client this is: where that bound is raised.
    product: crate::Product,
}

impl McpClient {
    /// Start (stdio) or reach (HTTP) the server and run the MCP
    /// initialisation handshake, all within `config.timeout_s`. Over HTTP,
    /// no one answer may exceed `max_answer_bytes` (`limits.http_mb`). The
    /// client introduces itself as `product`'s (`<name>-engine`).
    pub async fn connect(
        config: &ServerConfig,
        max_answer_bytes: u64,
        product: &crate::Product,
    ) -> Result<Self, McpError> {
        let server = config.describe();
        let timeout = config.timeout();
        let unavailable = |detail: String| McpError::Unavailable {
            server: server.clone(),
            detail,
        };
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new(product.client_name(), env!("CARGO_PKG_VERSION")),
        );
        let stderr_tail = StderrTail::default();
        let expand = |text: &str| expand_env(text).map_err(&unavailable);
        let handshake = async {
            match (&config.command, &config.url) {
                (Some(command), _) => {
                    let command = expand(command)?;
                    let mut cmd = tokio::process::Command::new(&command);
                    for arg in &config.args {
                        cmd.arg(expand(arg)?);
                    }
                    for (key, value) in &config.env {
                        cmd.env(key, expand(value)?);
                    }
                    let (transport, stderr) = TokioChildProcess::builder(cmd)
                        .stderr(Stdio::piped())
                        .spawn()
                        .map_err(|e| unavailable(spawn_failure(&command, &e)))?;
                    if let Some(stderr) = stderr {
                        stderr_tail.collect(stderr);
                    }
                    info.clone()
                        .serve(transport)
                        .await
                        .map_err(|e| unavailable(e.to_string()))
                }
                (None, Some(url)) => {
                    let mut http = StreamableHttpClientTransportConfig::with_uri(expand(url)?);
                    let limit = usize::try_from(max_answer_bytes).unwrap_or(usize::MAX);
                    http.max_json_response_size = limit;
                    http.max_sse_event_size = limit;
                    let transport = StreamableHttpClientTransport::from_config(http);
                    info.clone()
                        .serve(transport)
                        .await
                        .map_err(|e| unavailable(e.to_string()))
                }
                (None, None) => Err(unavailable(
                    "the configuration names neither a `command` nor a `url`".into(),
                )),
            }
        };
        let service = match tokio::time::timeout(timeout, handshake).await {
            Ok(Ok(service)) => service,
            Ok(Err(McpError::Unavailable { server, detail })) => {
                return Err(McpError::Unavailable {
                    server,
                    detail: stderr_tail.append_to(detail),
                })
            }
            Ok(Err(other)) => return Err(other),
            Err(_) => {
                let detail = format!("no answer to `initialize` within {:.1} s", timeout.as_secs_f64());
                return Err(unavailable(stderr_tail.append_to(detail)));
            }
        };
        Ok(Self {
            service,
            server,
            timeout,
            stderr_tail,
            answer_limit: config.command.is_none().then_some(max_answer_bytes),
            product: *product,
        })
    }

    /// The server's own name and version, as it announced them.
    pub fn server_name(&self) -> String {
        match self.service.peer_info().and_then(|info| info.server_info.clone()) {
            Some(implementation) => format!("{} {}", implementation.name, implementation.version),
            None => self.server.clone(),
        }
    }

    /// Every tool the server offers (all pages).
    pub async fn list_tools(&self) -> Result<Vec<ToolInfo>, McpError> {
        let tools = self.request("tools/list", self.service.list_all_tools()).await?;
        Ok(tools
            .into_iter()
            .map(|t| ToolInfo {
                name: t.name.into_owned(),
                description: t.description.map(|d| d.into_owned()).unwrap_or_default(),
            })
            .collect())
    }

    /// Call `tool` with a JSON object of arguments. Returns the tool's
    /// structured result, or its text content parsed as JSON when it is
    /// JSON (as a string otherwise). A tool that reports `isError` gives
    /// [`McpError::ToolFailed`].
    pub async fn call_tool(&self, tool: &str, args: Value) -> Result<Value, McpError> {
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => {
                return Err(McpError::Request {
                    server: self.server.clone(),
                    request: format!("tools/call {tool}"),
                    detail: format!("arguments must be a JSON object, got {other}"),
                })
            }
        };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let result = self
            .request(&format!("tools/call {tool}"), self.service.call_tool(params))
            .await?;
        let value = match result.structured_content {
            Some(value) => value,
            None => content_as_json(&result.content),
        };
        if result.is_error == Some(true) {
            return Err(McpError::ToolFailed {
                tool: tool.to_owned(),
                detail: value.to_string(),
            });
        }
        Ok(value)
    }

    /// End the session; a spawned server gets its stdin closed, then a
    /// signal if it lingers.
    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }

    async fn request<T, E: std::fmt::Display>(
        &self,
        request: &str,
        fut: impl Future<Output = Result<T, E>>,
    ) -> Result<T, McpError> {
        let failure = |detail: String| McpError::Request {
            server: self.server.clone(),
            request: request.to_owned(),
            detail: self.stderr_tail.append_to(detail),
        };
        match tokio::time::timeout(self.timeout, fut).await {
            Ok(Ok(value)) => Ok(value),
            // rmcp's words for an answer over its byte limit (pinned by a test).
            Ok(Err(e)) if e.to_string().contains("exceeded the maximum size") => {
                let limit = self.answer_limit.unwrap_or_default();
                Err(failure(format!(
                    "the answer is larger than {limit} bytes ({})",
                    self.product.raise_limit(HTTP_KEY, "answer")
                )))
            }
            Ok(Err(e)) => Err(failure(e.to_string())),
            Err(_) => Err(failure(format!("no answer within {:.1} s", self.timeout.as_secs_f64()))),
        }
    }
}

/// Expand `${VAR}` and `${VAR:-default}` from the environment, as Claude
/// Code does in `.mcp.json`, so a key stays in the environment rather than
/// in a file. Expansion happens when the server is started: messages name
/// the server by its unexpanded text and never show a value.
fn expand_env(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("`{text}` has a `${{` without its `}}`"))?;
        let (name, default) = match after[..end].split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (&after[..end], None),
        };
        // Like the shell's `:-`, a default also stands in for an empty value.
        let value = std::env::var(name).ok().filter(|v| !v.is_empty() || default.is_none());
        match (value, default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!(
                    "`${{{name}}}` is not set: export {name}, or write `${{{name}:-default}}`"
                ))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn spawn_failure(command: &str, error: &std::io::Error) -> String {
    if error.kind() == std::io::ErrorKind::NotFound {
        format!("command `{command}` not found (is it installed and on PATH?)")
    } else {
        format!("cannot start `{command}`: {error}")
    }
}

/// Tool results without structured content carry JSON as text blocks.
fn content_as_json(content: &[ContentBlock]) -> Value {
    let text: String = content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.as_str())
        .collect();
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

/// The last lines a spawned server wrote to stderr, kept so that an error
/// can say what the server itself complained about, without flooding the
/// user's terminal with its logs.
#[derive(Clone, Default)]
struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn collect(&self, stderr: tokio::process::ChildStderr) {
        let lines = Arc::clone(&self.0);
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                let mut lines = lines.lock().unwrap_or_else(|e| e.into_inner());
                if lines.len() == STDERR_TAIL_LINES {
                    lines.pop_front();
                }
                lines.push_back(line);
            }
        });
    }

    fn append_to(&self, detail: String) -> String {
        let lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if lines.is_empty() {
            return detail;
        }
        let tail: Vec<&str> = lines.iter().map(String::as_str).collect();
        format!("{detail}\n  server stderr (last lines):\n    {}", tail.join("\n    "))
    }
}

/// The servers a Claude Code `.mcp.json` declares:
/// `{"mcpServers": {NAME: {command, args, env} | {type: "http", url}}}`,
/// read within the run's `limits` (`limits.file_mb`, set in `product`'s settings).
pub fn read_mcp_json(
    path: &Path,
    limits: &Limits,
    product: &crate::Product,
) -> Result<BTreeMap<String, ServerConfig>, McpError> {
    let config_error = |detail: String| McpError::Config {
        path: path.display().to_string(),
        detail,
    };
    let text = crate::io::read_text_limited(path, limits.file_bytes, crate::io::FILE_KEY, product)
        .map_err(|e| config_error(format!("cannot read: {e}")))?;
    parse_mcp_json(&text, &path.display().to_string())
}

/// The servers of a `.mcp.json` text (`origin`: the file, for messages):
/// what [`read_mcp_json`] returns, for a caller that already holds the text.
pub fn parse_mcp_json(text: &str, origin: &str) -> Result<BTreeMap<String, ServerConfig>, McpError> {
    let config_error = |detail: String| McpError::Config {
        path: origin.to_owned(),
        detail,
    };
    let file: McpJson = serde_json::from_str(text).map_err(|e| {
        config_error(format!(
            "not a valid .mcp.json (line {}, column {}): {e}",
            e.line(),
            e.column()
        ))
    })?;
    file.mcp_servers
        .into_iter()
        .map(|(name, entry)| {
            let config = entry
                .into_config()
                .map_err(|detail| config_error(format!("server `{name}`: {detail}")))?;
            Ok((name, config))
        })
        .collect()
}

#[derive(Deserialize)]
struct McpJson {
    #[serde(rename = "mcpServers", default)]
    mcp_servers: BTreeMap<String, McpJsonServer>,
}

#[derive(Deserialize)]
struct McpJsonServer {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    url: Option<String>,
}

impl McpJsonServer {
    fn into_config(self) -> Result<ServerConfig, String> {
        let config = match (self.kind.as_deref(), self.command, self.url) {
            (None | Some("stdio"), Some(command), _) => ServerConfig {
                command: Some(command),
                args: self.args,
                env: self.env,
                ..ServerConfig::default()
            },
            (None | Some("http"), None, Some(url)) => ServerConfig {
                url: Some(url),
                ..ServerConfig::default()
            },
            (Some("sse"), ..) => return Err(
                "the legacy SSE transport is not supported; serve the server over streamable HTTP (\"type\": \"http\")"
                    .into(),
            ),
            (kind, ..) => {
                return Err(format!(
                    "needs `command` (stdio) or `url` (\"type\": \"http\"), found type {}",
                    kind.unwrap_or("(none)")
                ))
            }
        };
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const TEST_LIMIT: u64 = 64 * 1024;

    /// A streamable-HTTP MCP server in a few lines: JSON answers, no
    /// session, and a `big` tool whose answer is `answer_bytes` long.
    async fn serve_http_tool(answer_bytes: usize) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let (head_end, length) = loop {
                    let n = socket.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf);
                    if let Some(at) = text.find("\r\n\r\n") {
                        let length = text[..at]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse().unwrap_or(0))
                            })
                            .unwrap_or(0usize);
                        break (at + 4, length);
                    }
                };
                while buf.len() < head_end + length {
                    let n = socket.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                let request: Value = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
                let result = match request["method"].as_str() {
                    Some("initialize") => json!({
                        "protocolVersion": "2025-06-18",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "big", "version": "1"}
                    }),
                    Some("tools/call") => json!({
                        "content": [{"type": "text", "text": "x".repeat(answer_bytes)}]
                    }),
                    _ => Value::Null,
                };
                let response = match request.get("id") {
                    Some(id) if !result.is_null() => {
                        let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        )
                    }
                    Some(_) => {
                        "HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into()
                    }
                    None => "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into(),
                };
                let _ = socket.write_all(response.as_bytes()).await;
            }
        });
        url
    }

    #[tokio::test]
    async fn an_http_answer_over_the_limit_is_refused_and_names_the_key() {
        let url = serve_http_tool(2 * TEST_LIMIT as usize).await;
        let config = ServerConfig {
            url: Some(url),
            timeout_s: 10.0,
            ..ServerConfig::default()
        };
        let acme = crate::Product::new("acme", ".acme/settings.yml");
        let client = McpClient::connect(&config, TEST_LIMIT, &acme).await.expect("connects");
        let err = client.call_tool("big", json!({})).await.unwrap_err().to_string();
        assert!(
            err.contains(&format!(
                "the answer is larger than {TEST_LIMIT} bytes (the limit `limits.http_mb`; \
                 raise it in .acme/settings.yml if the answer is genuine)"
            )),
            "{err}"
        );
    }

    #[tokio::test]
    async fn an_http_answer_under_the_limit_arrives_whole() {
        let url = serve_http_tool(TEST_LIMIT as usize / 2).await;
        let config = ServerConfig {
            url: Some(url),
            timeout_s: 10.0,
            ..ServerConfig::default()
        };
        let client = McpClient::connect(&config, TEST_LIMIT, &crate::Product::NEUTRAL)
            .await
            .expect("connects");
        let answer = client.call_tool("big", json!({})).await.unwrap();
        assert_eq!(answer.as_str().map(str::len), Some(TEST_LIMIT as usize / 2));
    }

    #[test]
    fn reads_claude_code_mcp_json() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {
                "unityMCP": {"command": "uvx", "args": ["mcp-for-unity", "--transport", "stdio"], "env": {"DISABLE_TELEMETRY": "1"}},
                "remote": {"type": "http", "url": "http://127.0.0.1:8080/mcp"}
            }}"#,
        )
        .unwrap();
        let servers = read_mcp_json(&path, &Limits::default(), &crate::Product::NEUTRAL).unwrap();
        assert_eq!(servers["unityMCP"].describe(), "uvx mcp-for-unity --transport stdio");
        assert_eq!(servers["unityMCP"].env["DISABLE_TELEMETRY"], "1");
        assert_eq!(servers["remote"].url.as_deref(), Some("http://127.0.0.1:8080/mcp"));
    }

    #[test]
    fn expands_environment_variables_like_claude_code() {
        std::env::set_var("UA_TEST_MCP_TOKEN", "s3cret");
        std::env::set_var("UA_TEST_MCP_EMPTY", "");
        std::env::remove_var("UA_TEST_MCP_UNSET");
        assert_eq!(expand_env("Bearer ${UA_TEST_MCP_TOKEN}").unwrap(), "Bearer s3cret");
        assert_eq!(expand_env("${UA_TEST_MCP_UNSET:-8080}/mcp").unwrap(), "8080/mcp");
        assert_eq!(expand_env("${UA_TEST_MCP_EMPTY:-x}").unwrap(), "x");
        assert_eq!(expand_env("$HOME and $ alone").unwrap(), "$HOME and $ alone");
        let err = expand_env("--token=${UA_TEST_MCP_UNSET}").unwrap_err();
        assert!(err.contains("UA_TEST_MCP_UNSET") && err.contains(":-default"), "{err}");
        assert!(expand_env("${UA_TEST_MCP_TOKEN").unwrap_err().contains("without"));
    }

    #[tokio::test]
    async fn an_unset_variable_names_itself_and_no_value() {
        std::env::set_var("UA_TEST_MCP_SECRET", "hunter2");
        let config = ServerConfig {
            command: Some("${UA_TEST_MCP_NO_SUCH_COMMAND}".into()),
            env: BTreeMap::from([("TOKEN".into(), "${UA_TEST_MCP_SECRET}".into())]),
            ..ServerConfig::default()
        };
        let err = McpClient::connect(&config, TEST_LIMIT, &crate::Product::NEUTRAL)
            .await
            .err()
            .expect("unset variable")
            .to_string();
        assert!(
            err.contains("UA_TEST_MCP_NO_SUCH_COMMAND") && !err.contains("hunter2"),
            "{err}"
        );
    }

    #[test]
    fn rejects_sse_servers_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {"old": {"type": "sse", "url": "http://x/sse"}}}"#,
        )
        .unwrap();
        let err = read_mcp_json(&path, &Limits::default(), &crate::Product::NEUTRAL)
            .unwrap_err()
            .to_string();
        assert!(err.contains("server `old`") && err.contains("SSE"), "{err}");
    }

    #[tokio::test]
    async fn missing_command_is_unavailable() {
        let config = ServerConfig {
            command: Some("surely-not-an-installed-mcp-server".into()),
            ..ServerConfig::default()
        };
        let err = McpClient::connect(&config, TEST_LIMIT, &crate::Product::NEUTRAL)
            .await
            .err()
            .expect("must fail");
        assert!(matches!(err, McpError::Unavailable { .. }), "{err}");
        assert!(err.to_string().contains("not found"), "{err}");
    }

    #[tokio::test]
    async fn silent_server_times_out_as_unavailable() {
        let config = ServerConfig {
            command: Some("sleep".into()),
            args: vec!["5".into()],
            timeout_s: 0.3,
            ..ServerConfig::default()
        };
        let err = McpClient::connect(&config, TEST_LIMIT, &crate::Product::NEUTRAL)
            .await
            .err()
            .expect("must time out");
        assert!(
            matches!(err, McpError::Unavailable { .. }) && err.to_string().contains("initialize"),
            "{err}"
        );
    }
}
