//! The MCP server's request handling: list and call tools, list and read
//! resources. Each call opens the project as the CLI does, so config,
//! overrides and the project's rules apply exactly as on the command line.

use std::sync::Arc;

use engine::render::{render, Format};
use engine::Output;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock as Content, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Map, Value};

use super::catalog::{self, GRAPH, LIST_PIPELINES};
use super::elicit::Elicitor;
use super::progress::Notifier;
use super::ServerOptions;
use crate::commands::{execute, Finished};
use crate::index::store::INDEX_DIR;
use crate::project::{Opener, Project};
use crate::search::result;

const SEARCH_RESULT_URI: &str = "unity-assets://search-result.json";
const GRAPH_URI: &str = "unity-assets://graph/";
/// The one tool that runs on a project whose config is broken, to report it.
const DOCTOR: &str = "doctor";

#[derive(Clone)]
pub struct PipelineServer {
    options: Arc<ServerOptions>,
}

impl PipelineServer {
    pub fn new(options: ServerOptions) -> Self {
        Self {
            options: Arc::new(options),
        }
    }

    /// The project as the CLI opens it, now (a config edited between calls counts).
    fn project(&self) -> Result<Project, String> {
        self.open(Project::open)
    }

    /// The project as `doctor` opens it: a broken config opens with the
    /// defaults, so the tools are still listed and `doctor` can report it.
    fn project_for_doctor(&self) -> Result<Project, String> {
        self.open(Project::open_for_doctor)
    }

    fn open(&self, open: Opener) -> Result<Project, String> {
        let o = &self.options;
        let mut project = open(&o.root, o.provider, o.model.as_deref()).map_err(|d| d.to_string())?;
        project.show_progress = false;
        Ok(project)
    }

    /// Run an exposed pipeline with the call's arguments as its inputs.
    async fn run_tool(
        &self,
        name: &str,
        mut args: Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let opened = if name == DOCTOR {
            self.project_for_doctor()
        } else {
            self.project()
        };
        let project = match opened {
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
        // The project's trust rules apply to the server exactly as to the CLI.
        let gate = crate::trust::Gate::check(&project, None, self.options.trust);
        if tool.pipeline.name() == DOCTOR && !gate.review.runs_reaching_override(DOCTOR) {
            args.extend(crate::doctor::inputs(&gate, &project.root, vec![]));
        } else if let Some(refusal) = gate.refusal(&project.root) {
            return Ok(CallToolResult::error(vec![Content::text(refusal)]));
        }
        // Nobody can answer a terminal prompt here: the client's user is asked
        // through elicitation when it can be, else a pipeline that can ask
        // leaves its question open and returns the choices instead.
        let asker = Elicitor::for_call(context, &args);
        if asker.is_none() && tool.pipeline.inputs().contains_key("non_interactive") {
            args.entry("non_interactive").or_insert(Value::Bool(true));
        }
        let lines = Output::buffer();
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
        let finished = tokio::select! {
            finished = execute(&project, tool.pipeline.name(), args, &[], &rt) => finished,
            // Dropping the run cancels its stages; atomic writes leave no half-written file.
            _ = context.ct.cancelled() => {
                return Err(McpError::internal_error(format!("{name}: cancelled by the client"), None));
            }
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
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let project = self
            .project_for_doctor()
            .map_err(|m| McpError::internal_error(m, None))?;
        let (exposed, problems) = catalog::exposed(&project);
        for p in problems {
            tracing::warn!("pipeline left out of the tools: {p}");
        }
        let mut tools: Vec<_> = exposed.iter().map(catalog::describe).collect();
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
                let project = self.project().map_err(|m| McpError::internal_error(m, None))?;
                let listing = catalog::listing(&project);
                let mut r = CallToolResult::structured(listing.clone());
                r.content = vec![Content::text(
                    serde_json::to_string_pretty(&listing).unwrap_or_default(),
                )];
                r
            }
            GRAPH => {
                let name = args.get("name").and_then(Value::as_str).unwrap_or_default();
                let format = args.get("format").and_then(Value::as_str).unwrap_or("mermaid");
                match self.graph(name, format) {
                    Ok(text) => CallToolResult::success(vec![Content::text(text)]),
                    Err(message) => CallToolResult::error(vec![Content::text(message)]),
                }
            }
            name => self.run_tool(name, args, &context).await?,
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let project = self.project().map_err(|m| McpError::internal_error(m, None))?;
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
                .with_mime_type("text/plain"),
            );
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri;
        let text = if uri == SEARCH_RESULT_URI {
            let limits = self
                .project()
                .map_err(|m| McpError::internal_error(m, None))?
                .config
                .limits;
            match result::read_text(&self.options.root.join(INDEX_DIR), &limits) {
                Ok(Some(text)) => text,
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
            self.graph(name, "mermaid")
                .map_err(|m| McpError::resource_not_found(m, None))?
        } else {
            return Err(McpError::resource_not_found(format!("unknown resource {uri}"), None));
        };
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri)]).into())
    }
}

impl PipelineServer {
    fn graph(&self, name: &str, format: &str) -> Result<String, String> {
        let format: Format = format
            .parse()
            .map_err(|e: engine::render::UnknownFormat| e.to_string())?;
        let project = self.project()?;
        let pipeline = project.compile(name, &[]).map_err(|d| d.to_string())?;
        Ok(render(&pipeline.graph(), format))
    }
}
