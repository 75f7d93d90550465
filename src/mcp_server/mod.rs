//! `unity-assets mcp`: the project's pipelines as MCP tools, so Claude Code,
//! Cursor or any MCP client calls the same runs the CLI makes.
//!
//! Which pipelines become tools is declared in the pipelines themselves
//! (`expose: mcp`), with the input schema generated from `inputs:` and the
//! description from `summary:` — a team's own pipeline under
//! `.claude/unity-assets/pipelines/` becomes a tool without code. Every call
//! opens the project afresh (config and overrides as the CLI would read them),
//! runs the pipeline with its lines captured, and answers the output document
//! as structured content plus the lines as text.

mod catalog;
mod elicit;
mod handler;
mod last_search;
mod locate;
mod progress;
mod sessions;
mod stdio;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use engine::llm::ProviderKind;

pub use handler::PipelineServer;

/// The project a server started without `--project` works on before any
/// client has spoken (no roots yet): what `mcp --watch` watches, found by
/// the rule every call follows (`locate`).
pub fn project_before_any_call() -> Result<PathBuf, String> {
    locate::locate(&locate::Places::of_this_process(None))
}

/// The names of the tools the project's pipelines are offered as.
pub fn pipeline_tools(project: &crate::project::Project) -> Vec<String> {
    catalog::exposed(project).0.into_iter().map(|t| t.tool).collect()
}

/// What every call opens: the project and the CLI's provider overrides.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// `--project`; `None`: found per call from the client's roots,
    /// `CLAUDE_PROJECT_DIR` or the folders upward.
    pub root: Option<PathBuf>,
    /// `--provider`: the LLM provider every call uses.
    pub provider: Option<ProviderKind>,
    /// `--model`: the model for every tier.
    pub model: Option<String>,
    /// `--trust` / `UNITY_ASSETS_TRUST=1`: trust the project for this server's life.
    pub trust: bool,
}

/// Serve over stdin/stdout until the client closes the stream.
pub async fn serve_stdio(options: ServerOptions) -> anyhow::Result<()> {
    use rmcp::ServiceExt;
    let server = PipelineServer::new(options);
    let transport = stdio::LineTransport::new(tokio::io::stdin(), tokio::io::stdout());
    let running = server.serve(transport).await?;
    running.waiting().await?;
    Ok(())
}

/// Serve streamable HTTP at `http://ADDR/mcp` until Ctrl+C.
pub async fn serve_http(options: ServerOptions, addr: SocketAddr) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr()?;
    // The one line a script waits for (the port may have been 0).
    eprintln!("unity-assets mcp: listening on http://{local}/mcp");
    let sessions = Arc::new(sessions::Sessions::new(sessions::MAX_SESSIONS, sessions::IDLE));
    axum::serve(listener, http_router(options, local, sessions))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

/// The `/mcp` endpoint, one session per client, kept in `sessions`. A
/// browser page of another site must not drive a local server: a request
/// whose `Origin` is neither the server's own nor localhost is refused with
/// 403, as the MCP spec asks of local servers.
fn http_router(options: ServerOptions, local: SocketAddr, sessions: Arc<sessions::Sessions>) -> axum::Router {
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
    let server = PipelineServer::new(options);
    let mut hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
    hosts.push(local.ip().to_string());
    let own = match local {
        SocketAddr::V4(a) => format!("http://{}:{}", a.ip(), a.port()),
        SocketAddr::V6(a) => format!("http://[{}]:{}", a.ip(), a.port()),
    };
    let origins = [
        "http://localhost:*",
        "http://127.0.0.1:*",
        "http://[::1]:*",
        own.as_str(),
    ];
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .with_max_request_body_bytes(stdio::MAX_LINE_BYTES);
    let service = StreamableHttpService::new(move || Ok(server.new_session()), sessions, config);
    axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(session_deleted))
        .layer(axum::middleware::from_fn(json_rpc_errors))
}

/// A JSON body that is no message is answered as over stdio (-32700 for
/// what does not parse, nesting past 128 levels included; -32600 for a
/// batch or a body over [`stdio::MAX_LINE_BYTES`]), with 400 or 413: rmcp
/// answers it in plain text, which a JSON-RPC client cannot read.
async fn json_rpc_errors(request: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    use axum::http::{header, Method, StatusCode};
    use axum::response::IntoResponse;
    let answer = |status: StatusCode, reply: serde_json::Value| {
        (status, [(header::CONTENT_TYPE, "application/json")], reply.to_string()).into_response()
    };
    let json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/json")
        });
    if request.method() != Method::POST || !json {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, stdio::MAX_LINE_BYTES).await else {
        return answer(StatusCode::PAYLOAD_TOO_LARGE, stdio::too_long());
    };
    if let Err(Some(reply)) = stdio::parse(&bytes) {
        return answer(StatusCode::BAD_REQUEST, reply);
    }
    next.run(axum::extract::Request::from_parts(parts, bytes.into())).await
}

/// A session ended by `DELETE` answers 204 No Content (rmcp says 202,
/// which the SDKs do not expect of a DELETE).
async fn session_deleted(request: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    use axum::http::{Method, StatusCode};
    let delete = request.method() == Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// `--http 8765` binds 127.0.0.1:8765; `--http 0.0.0.0:8765` is taken as
/// written (another interface only when asked for).
pub fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse()
        .map_err(|_| format!("`--http {text}`: expected PORT or IP:PORT (for example 8765 or 127.0.0.1:8765)"))
}

#[cfg(test)]
mod tests {
    use std::future::IntoFuture;
    use std::time::Duration;

    use serde_json::{json, Value};

    use super::*;

    /// The HTTP endpoint on a free port of 127.0.0.1, keeping `sessions`.
    async fn serve(sessions: Arc<sessions::Sessions>) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let local = listener.local_addr().unwrap();
        let options = ServerOptions {
            root: None,
            provider: None,
            model: None,
            trust: false,
        };
        tokio::spawn(axum::serve(listener, http_router(options, local, sessions)).into_future());
        format!("http://{local}/mcp")
    }

    /// POST `body` (in `session`): the status, the session the answer names, and its body.
    async fn post(url: &str, session: Option<&str>, body: &str) -> (u16, Option<String>, String) {
        let mut request = reqwest::Client::new()
            .post(url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(body.to_owned());
        if let Some(id) = session {
            request = request.header("Mcp-Session-Id", id);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        (status, id, response.text().await.unwrap())
    }

    /// A new session, initialized.
    async fn open(url: &str) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
        let (status, id, body) = post(url, None, &init.to_string()).await;
        assert_eq!(status, 200, "{body}");
        let id = id.expect("a session id");
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(post(url, Some(&id), initialized).await.0, 202);
        id
    }

    /// The status a ping in `session` is answered with.
    async fn ping(url: &str, session: &str) -> u16 {
        post(url, Some(session), r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .await
            .0
    }

    #[tokio::test]
    async fn http_sessions_are_capped_least_recently_used_first_and_idle_ones_end() {
        let sessions = Arc::new(sessions::Sessions::new(3, Duration::from_secs(3)));
        let url = serve(sessions.clone()).await;
        let mut ids = vec![];
        for _ in 0..8 {
            ids.push(open(&url).await);
            assert!(sessions.len() <= 3, "{} sessions open", sessions.len());
        }
        assert_eq!(sessions.len(), 3);
        for id in &ids[..5] {
            assert_eq!(ping(&url, id).await, 404, "{id} was closed");
        }
        // The session used last is kept; the least recently used goes.
        assert_eq!(ping(&url, &ids[5]).await, 200);
        ids.push(open(&url).await);
        assert_eq!(ping(&url, &ids[6]).await, 404);
        assert_eq!(ping(&url, &ids[5]).await, 200);
        assert_eq!(sessions.len(), 3);

        // Idle sessions end on their own, with no request to notice them.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while sessions.len() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(sessions.len(), 0);
        assert_eq!(ping(&url, &ids[5]).await, 404);
    }

    #[tokio::test]
    async fn http_answers_batches_and_deep_json_as_json_rpc_errors() {
        let url = serve(Arc::new(sessions::Sessions::new(3, Duration::from_secs(60)))).await;
        let code = |body: &str| serde_json::from_str::<Value>(body).unwrap()["error"]["code"].clone();
        let (status, _, body) = post(&url, None, r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).await;
        assert_eq!((status, code(&body)), (400, json!(-32600)), "{body}");
        assert!(body.contains("batches are not supported"), "{body}");
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let (status, _, body) = post(&url, None, &deep).await;
        assert_eq!((status, code(&body)), (400, json!(-32700)), "{body}");
        let (status, _, body) = post(&url, None, "not json").await;
        assert_eq!((status, code(&body)), (400, json!(-32700)), "{body}");
        let (status, _, body) = post(&url, None, &" ".repeat(stdio::MAX_LINE_BYTES + 1)).await;
        assert_eq!((status, code(&body)), (413, json!(-32600)), "{body}");
        // A message still reaches rmcp.
        assert!(!open(&url).await.is_empty());
    }
}
