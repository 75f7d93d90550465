//! What the MCP tests share: the indexed example project, our rmcp client
//! on an in-process server, and reading a tool result.

#![allow(dead_code)] // each test file uses its own share of these

use std::path::Path;
use test_support::project::copy_tree;

use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use serde_json::{Map, Value};
use test_support::cli::{self, Run};
use unity_assets::mcp_server::{PipelineServer, ServerOptions};

pub const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");

/// A pipeline a team adds: an `exec` that outlives any test, so a call to
/// it must be cancelled.
const SLOW: &str = "pipeline: slow
summary: A long run the client cancels
expose: mcp
stages:
  wait:
    exec: {command: [sleep, \"30\"]}
";

/// Give the example `project` no MCP for Unity server to reach: a build with
/// nothing chosen still ends in a summary, one with a chosen asset ends in
/// `mcp_unavailable`. Auto is raised to 0.95 so that no group is placed
/// without a confirmation (the enemy group's zombies reach 0.72).
pub fn unreachable_unity(project: &Path) {
    std::fs::write(
        project.join(".claude/unity-assets.yml"),
        "mcp: {command: /nonexistent/mcp-for-unity}\nconfidence_threshold: {auto: 0.95, confirm: 0.40}\n",
    )
    .unwrap();
}

/// The example project copied into a temp folder, indexed, with the slow
/// pipeline added under .claude/unity-assets/pipelines/.
pub fn example_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/zombie-survival"),
        dir.path(),
    );
    let pipelines = dir.path().join(".claude/unity-assets/pipelines");
    std::fs::create_dir_all(&pipelines).unwrap();
    std::fs::write(pipelines.join("slow.yaml"), SLOW).unwrap();
    let index = Run::of(cli::command(Path::new(BIN), dir.path()).args(["-q", "--trust", "index"]));
    assert_eq!(index.code, 0, "index: {}", index.output());
    dir
}

/// Our rmcp client on an in-process server for the project (`trust`: as
/// `--trust`; the slow pipeline's exec stage is a trust item).
pub async fn connect(root: &Path, trust: bool) -> RunningService<RoleClient, ()> {
    connect_as(Some(root), trust, (), ClientLifecycleMode::Initialize).await
}

/// As [`connect`], with a client that declares and handles what `client`
/// does, starting the session as `lifecycle` says; `root: None` is a
/// server started without `--project`.
pub async fn connect_as<C: ClientHandler>(
    root: Option<&Path>,
    trust: bool,
    client: C,
    lifecycle: ClientLifecycleMode,
) -> RunningService<RoleClient, C> {
    let server = PipelineServer::new(ServerOptions {
        root: root.map(Path::to_path_buf),
        provider: None,
        model: None,
        trust,
    });
    connect_to(server, client, lifecycle).await
}

/// A client session on `server` (one of its sessions: see `new_session`).
pub async fn connect_to<C: ClientHandler>(
    server: PipelineServer,
    client: C,
    lifecycle: ClientLifecycleMode,
) -> RunningService<RoleClient, C> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    client
        .serve_with_lifecycle(client_io, lifecycle)
        .await
        .expect("initialize")
}

pub fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

pub fn text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}
