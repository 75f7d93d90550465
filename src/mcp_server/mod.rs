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
mod stdio;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use engine::llm::ProviderKind;

pub use handler::PipelineServer;

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
    pub provider: Option<ProviderKind>,
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
    axum::serve(listener, http_router(options, local))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

/// The `/mcp` endpoint, one session per client. A browser page of another
/// site must not drive a local server: a request whose `Origin` is neither
/// the server's own nor localhost is refused with 403, as the MCP spec asks
/// of local servers.
fn http_router(options: ServerOptions, local: SocketAddr) -> axum::Router {
    use rmcp::transport::streamable_http_server::{
        session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
    };
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
        .with_allowed_origins(origins);
    let service = StreamableHttpService::new(
        move || Ok(server.new_session()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(session_deleted))
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
