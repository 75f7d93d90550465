//! The MCP server's request handling: list and call tools, list and read
//! resources. Each call opens the project as the CLI does, so config,
//! overrides and the project's rules apply exactly as on the command line.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use engine::render::{render, Format};
use engine::Output;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock as Content, CustomRequest, CustomResult,
    ErrorCode, Implementation, ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Map, Value};

use super::catalog::{self, GRAPH, LIST_PIPELINES};
use super::elicit::{may_request, Elicitor};
use super::last_search;
use super::locate::{locate, Places};
use super::progress::Notifier;
use super::ServerOptions;
use crate::config::OVERRIDES;
use crate::index::store::INDEX_DIR;
use crate::invocation::{Finished, Invocation};
use crate::project::{Opener, Project};
use crate::search::result;

const SEARCH_RESULT_URI: &str = "unity-assets://search-result.json";
const GRAPH_URI: &str = "unity-assets://graph/";
/// The one tool that runs on a project whose config is broken, to report it.
const DOCTOR: &str = "doctor";
const JSON: &str = "application/json";
const TEXT: &str = "text/plain";
/// The methods this server serves (the others are not found).
const SERVED: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
];

/// The MCP server: one tool per pipeline, each call an [`Invocation`](crate::invocation::Invocation).
#[derive(Clone)]
pub struct PipelineServer {
    options: Arc<ServerOptions>,
    /// The sessions' turns at `search-result.json`.
    turn: Arc<last_search::Turn>,
    session: Arc<Session>,
}

/// What one client's session keeps between calls.
#[derive(Default)]
struct Session {
    /// The client's roots as last listed (`None`: not asked yet), dropped
    /// when the client says they changed.
    roots: tokio::sync::Mutex<Option<Option<Vec<String>>>>,
    last_search: last_search::Own,
}

impl PipelineServer {
    /// A server for one session (stdio has one; HTTP makes one per client).
    pub fn new(options: ServerOptions) -> Self {
        Self {
            options: Arc::new(options),
            turn: Arc::default(),
            session: Arc::default(),
        }
    }

    /// Another session of the same server: its own roots and last search.
    pub fn new_session(&self) -> Self {
        Self {
            options: self.options.clone(),
            turn: self.turn.clone(),
            session: Arc::default(),
        }
    }

    /// The project folder of this call: `--project`, else the first of the
    /// client's roots, `CLAUDE_PROJECT_DIR` and the folders upward from the
    /// working folder that is a Unity project (see [`locate`]).
    async fn project_dir(&self, context: &RequestContext<RoleServer>) -> Result<PathBuf, String> {
        if let Some(root) = &self.options.root {
            return Ok(root.clone());
        }
        let roots = self.client_roots(context).await;
        locate(&Places::of_this_process(roots.as_deref()))
    }

    /// The client's roots (`roots/list`), once per session until they
    /// change; `None` when the client offers none or may not be asked.
    /// SEP-2577 deprecates roots, but the clients in use (Claude Code,
    /// Cursor) still tell their open folder this way.
    #[allow(deprecated)]
    async fn client_roots(&self, context: &RequestContext<RoleServer>) -> Option<Vec<String>> {
        let offers = context.client_capabilities().is_some_and(|c| c.roots.is_some());
        if !offers || !may_request(context) {
            return None;
        }
        let mut cached = self.session.roots.lock().await;
        if let Some(roots) = cached.as_ref() {
            return roots.clone();
        }
        let listed = tokio::time::timeout(std::time::Duration::from_secs(10), context.peer.list_roots()).await;
        let roots = match listed {
            Ok(Ok(result)) => Some(result.roots.into_iter().map(|r| r.uri).collect()),
            Ok(Err(e)) => {
                tracing::warn!("the client did not list its roots: {e}");
                None
            }
            Err(_) => {
                tracing::warn!("the client did not list its roots within 10 s");
                None
            }
        };
        *cached = Some(roots.clone());
        roots
    }

    /// The call's project as `open` opens it, now (a config edited between
    /// calls counts).
    async fn open(&self, open: Opener, context: &RequestContext<RoleServer>) -> Result<Project, String> {
        let dir = self.project_dir(context).await?;
        let o = &self.options;
        let mut project = open(&dir, o.provider, o.model.as_deref()).map_err(|d| d.to_string())?;
        project.quiet = true;
        Ok(project)
    }

    /// The project whose tools are listed: as `doctor` opens it (a broken
    /// config opens with the defaults, so the tools are still listed and
    /// `doctor` can report it); without a project, the working folder's
    /// embedded pipelines (each call then says where it looked).
    async fn project_for_listing(&self, context: &RequestContext<RoleServer>) -> Result<Project, String> {
        let dir = self.project_dir(context).await.unwrap_or_else(|_| ".".into());
        let o = &self.options;
        Project::open_for_doctor(&dir, o.provider, o.model.as_deref()).map_err(|d| d.to_string())
    }

    /// Run an exposed pipeline with the call's arguments as its inputs.
    async fn run_tool(
        &self,
        name: &str,
        mut args: Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let opener: Opener = if name == DOCTOR {
            Project::open_for_doctor
        } else {
            Project::open
        };
        let project = match self.open(opener, context).await {
            Ok(p) => p,
            Err(message) => return Ok(CallToolResult::error(vec![Content::text(message)])),
        };
        let Some(tool) = catalog::find(&project, name) else {
            let (tools, _) = catalog::exposed(&project);
            let known: Vec<&str> = tools.iter().map(|t| t.tool.as_str()).collect();
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool `{name}` (tools: {}, {LIST_PIPELINES}, {GRAPH})",
                    known.join(", ")
                ),
                None,
            ));
        };
        // Nobody can answer a terminal prompt here: the client's user is asked
        // through elicitation when it can be, else a pipeline that can ask
        // leaves its question open and returns the choices instead.
        let asker = Elicitor::for_call(context, &args);
        if asker.is_none() && tool.pipeline.inputs().contains_key("non_interactive") {
            args.entry("non_interactive").or_insert(Value::Bool(true));
        }
        let invocation = match Invocation::from_tool(tool.pipeline.name(), args) {
            Ok(i) => i,
            Err(message) => return Ok(CallToolResult::error(vec![Content::text(message)])),
        };
        // A command a line suggests runs from anywhere: it names the project.
        let mut lines = Output::buffer();
        if let Some(rewrite) = crate::runnable::rewrite_for(&project.root) {
            lines = lines.rewriting(rewrite);
        }
        let rt = match project.runtime(lines.clone()) {
            Ok(rt) => rt,
            Err(e) => return Ok(CallToolResult::error(vec![Content::text(e.to_string())])),
        };
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| Notifier::shared(context.peer.clone(), token));
        // The server's stdin is the protocol: only the client's user is asked.
        let rt = rt.with_asker(asker).with_progress(progress);
        // A stage stuck in a template holds this task, so the client's cancel
        // reaches it through the run's cancel flag, set from a task of its own.
        let cancel = rt.cancel().clone();
        let client_cancel = context.ct.clone();
        let watcher = tokio::spawn(async move {
            client_cancel.cancelled().await;
            cancel.cancel();
        });
        let index_dir = project.root.join(INDEX_DIR);
        let run = last_search::with_own(
            &self.turn,
            &self.session.last_search,
            &index_dir,
            &project.config.limits,
            tool.pipeline.mcp().session,
            invocation.run(&project, self.options.trust, &rt),
        );
        let finished = tokio::select! {
            finished = run => finished,
            // Dropping the run cancels its stages; atomic writes leave no half-written file.
            _ = context.ct.cancelled() => {
                return Err(McpError::internal_error(format!("{name}: cancelled by the client"), None));
            }
        };
        watcher.abort();
        let finished = match finished {
            Ok(finished) => finished,
            Err(message) => return Ok(CallToolResult::error(vec![Content::text(message)])),
        };
        Ok(tool_result(finished, &lines.captured()))
    }
}

/// The output document as structured content, the run's lines (and its
/// error, if any) as text; a non-zero exit is a tool error.
fn tool_result(finished: Finished, lines: &str) -> CallToolResult {
    let mut text = lines.trim_end().to_owned();
    if let Some(message) = &finished.message {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(message);
    }
    let structured = finished.document.map(|d| match d {
        Value::Object(_) => d,
        other => json!({ "value": other }),
    });
    let mut result = match structured {
        Some(doc) if finished.code == 0 => CallToolResult::structured(doc),
        Some(doc) => CallToolResult::structured_error(doc),
        None if finished.code == 0 => CallToolResult::success(vec![]),
        None => CallToolResult::error(vec![]),
    };
    // `structured` puts the JSON in the text too; the lines read better.
    result.content = vec![Content::text(if text.is_empty() { "(no output)".into() } else { text })];
    result
}

impl ServerHandler for PipelineServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("unity-assets", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Search a Unity project's assets in Korean or English (`search`), record a choice (`pick`), \
                 and assemble a scene through MCP for Unity (`build`). Each tool is a pipeline of the project; \
                 `list_pipelines` and `graph` show them. Tool text keeps the CLI's exact lines.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let project = self
            .project_for_listing(&context)
            .await
            .map_err(|m| McpError::internal_error(m, None))?;
        let (exposed, problems) = catalog::exposed(&project);
        for p in problems {
            tracing::warn!("pipeline left out of the tools: {p}");
        }
        let mut tools: Vec<_> = exposed.iter().map(|t| catalog::describe(&project, t)).collect();
        tools.extend(catalog::inspection_tools());
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            LIST_PIPELINES => {
                let project = match self.open(Project::open, &context).await {
                    Ok(p) => p,
                    Err(message) => return Ok(CallToolResult::error(vec![Content::text(message)]).into()),
                };
                let listing = catalog::listing(&project);
                let mut r = CallToolResult::structured(listing.clone());
                r.content = vec![Content::text(
                    serde_json::to_string_pretty(&listing).unwrap_or_default(),
                )];
                r
            }
            GRAPH => match self.graph_call(&args, &context).await {
                Ok(text) => CallToolResult::success(vec![Content::text(text)]),
                Err(message) => CallToolResult::error(vec![Content::text(message)]),
            },
            name => self.run_tool(name, args, &context).await?,
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let project = self
            .open(Project::open, &context)
            .await
            .map_err(|m| McpError::internal_error(m, None))?;
        let mut resources = vec![Resource::new(SEARCH_RESULT_URI, "search-result.json")
            .with_description("The last search's result: groups of candidates that `pick` and `build` use")
            .with_mime_type("application/json")];
        let (exposed, _) = catalog::exposed(&project);
        for t in &exposed {
            resources.push(
                Resource::new(
                    format!("{GRAPH_URI}{}", t.pipeline.name()),
                    format!("{} graph", t.pipeline.name()),
                )
                .with_description(format!("The `{}` pipeline's stage graph (mermaid)", t.pipeline.name()))
                .with_mime_type(TEXT),
            );
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri;
        let project = self
            .open(Project::open, &context)
            .await
            .map_err(|m| McpError::internal_error(m, None))?;
        let contents = if uri == SEARCH_RESULT_URI {
            match result::read_text(&project.root.join(INDEX_DIR), &project.config.limits) {
                Ok(Some(text)) => ResourceContents::text(text, uri).with_mime_type(JSON),
                Ok(None) => {
                    return Err(McpError::resource_not_found(
                        "no search result yet; call the `search` tool first",
                        None,
                    ))
                }
                // Too large, a link out of the project: say which, not "missing".
                Err(e) => return Err(McpError::internal_error(e.to_string(), None)),
            }
        } else if let Some(name) = uri.strip_prefix(GRAPH_URI) {
            let text = graph(&project, name, "mermaid").map_err(|m| McpError::resource_not_found(m, None))?;
            ResourceContents::text(text, uri).with_mime_type(TEXT)
        } else {
            return Err(McpError::resource_not_found(format!("unknown resource {uri}"), None));
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        *self.session.roots.lock().await = None;
    }

    /// A request of a method we serve whose params do not fit it (rmcp
    /// hands it over as a method of its own): say so, not "method not found".
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let method = request.method;
        if SERVED.contains(&method.as_str()) {
            let hint = if method == "tools/call" {
                ": `name` must be a string and `arguments` an object of the tool's inputs"
            } else {
                ""
            };
            return Err(McpError::invalid_params(
                format!("invalid params for `{method}`{hint}"),
                None,
            ));
        }
        Err(McpError::new(ErrorCode::METHOD_NOT_FOUND, method, None))
    }
}

impl PipelineServer {
    /// The `graph` tool: `name` and an optional `format`, checked as the schema declares them.
    async fn graph_call(
        &self,
        args: &Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<String, String> {
        let name = match args.get("name") {
            Some(Value::String(name)) => name,
            _ => return Err("graph: `name` must be a pipeline's name (`search`, `build`, …)".into()),
        };
        let format = match args.get("format") {
            None => "mermaid",
            // Exactly the names the tool's schema lists (`Format` alone also takes `MERMAID`).
            Some(Value::String(format)) if Format::ALL.iter().any(|f| f.name() == format) => format,
            Some(Value::String(format)) => {
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                return Err(format!(
                    "graph: unknown format `{format}` (formats: {})",
                    names.join(", ")
                ));
            }
            Some(other) => return Err(format!("graph: `format` must be a string, got {other}")),
        };
        let project = self.open(Project::open, context).await?;
        graph(&project, name, format)
    }
}

/// A pipeline's stage graph in `format`.
fn graph(project: &Project, name: &str, format: &str) -> Result<String, String> {
    let format: Format = format
        .parse()
        .map_err(|e: engine::render::UnknownFormat| e.to_string())?;
    let pipeline = project
        .compile(&graph_target(project, name)?, &[])
        .map_err(|d| d.to_string())?;
    Ok(render(&pipeline.graph(), format))
}

/// The pipeline `graph` draws for `name`: a pipeline's name, or the path
/// of one of the project's override files (`.claude/unity-assets/pipelines/
/// NAME.yaml`, absolute or from the project), drawn as that pipeline. The
/// compiler reads any YAML path and its errors quote the keys it found, so
/// a client's path elsewhere is refused unread.
fn graph_target(project: &Project, name: &str) -> Result<String, String> {
    let path = Path::new(name);
    if !matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")) {
        return Ok(name.to_owned());
    }
    let file = project.root.join(path);
    let pipelines = project.resources.overrides().map(|o| o.join("pipelines"));
    let inside = pipelines.as_deref().and_then(|dir| file.strip_prefix(dir).ok());
    let words = inside.and_then(|rel| {
        rel.components()
            .map(|c| match c {
                Component::Normal(word) => word.to_str(),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
    });
    let pipeline = words
        .and_then(|words| Some(words.join("/").strip_suffix(".yaml")?.to_owned()))
        .filter(|n| project.pipeline_names().contains(n));
    pipeline.ok_or_else(|| {
        format!(
            "graph: `name` {name:?} is not one of the project's pipeline override files, and was not read; \
             give a pipeline's name (`search`, `build`, …; `list_pipelines` lists them) or an override file \
             under {OVERRIDES}/pipelines/"
        )
    })
}
