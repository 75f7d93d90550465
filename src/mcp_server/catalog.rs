//! Which tools the server offers: every pipeline that says `expose: mcp`,
//! plus `list_pipelines` and `graph`, with schemas generated from `inputs:`.

use std::sync::Arc;

use engine::Pipeline;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Map, Value};

use crate::project::Project;

/// The tools that are not pipelines.
pub const LIST_PIPELINES: &str = "list_pipelines";
pub const GRAPH: &str = "graph";

/// A pipeline offered as a tool.
pub struct PipelineTool {
    /// The tool's name: the pipeline's, `-` → `_` (`web-search` → `web_search`).
    pub tool: String,
    pub pipeline: Arc<Pipeline>,
}

/// Every pipeline of the project (embedded or overridden) that says
/// `expose: mcp`, compiled with the project's config. A pipeline that does
/// not compile is left out and named in `problems`.
pub fn exposed(project: &Project) -> (Vec<PipelineTool>, Vec<String>) {
    let mut tools = vec![];
    let mut problems = vec![];
    for name in project.pipeline_names() {
        match project.compile(&name, &[]) {
            Ok(p) if p.expose().iter().any(|s| s == "mcp") => tools.push(PipelineTool {
                tool: tool_name(p.name()),
                pipeline: p,
            }),
            Ok(_) => {}
            Err(d) => problems.push(format!("{name}: {d}")),
        }
    }
    tools.sort_by(|a, b| a.tool.cmp(&b.tool));
    (tools, problems)
}

/// The exposed pipeline offered as `tool`, compiling only that one (a call
/// does not pay for compiling every pipeline of the project).
pub fn find(project: &Project, tool: &str) -> Option<PipelineTool> {
    let name = project.pipeline_names().into_iter().find(|n| tool_name(n) == tool)?;
    let pipeline = project.compile(&name, &[]).ok()?;
    pipeline.expose().iter().any(|s| s == "mcp").then(|| PipelineTool {
        tool: tool.to_owned(),
        pipeline,
    })
}

pub fn tool_name(pipeline: &str) -> String {
    pipeline.replace(['-', '/'], "_")
}

/// The tool a pipeline is offered as.
pub fn describe(t: &PipelineTool) -> Tool {
    let p = &t.pipeline;
    let description = if p.summary().is_empty() {
        format!("Run the `{}` pipeline.", p.name())
    } else {
        p.summary().to_owned()
    };
    Tool::new(t.tool.clone(), description, Arc::new(input_schema(p))).with_title(format!("unity-assets {}", p.name()))
}

/// A JSON Schema object for a pipeline's `inputs:`: declared types and
/// descriptions; an input without a default is required.
pub fn input_schema(p: &Pipeline) -> JsonObject {
    let mut properties = Map::new();
    let mut required = vec![];
    for (name, input) in p.inputs() {
        let mut prop = Map::new();
        if let Some(t) = json_type(&input.kind) {
            prop.insert("type".into(), json!(t));
        }
        if let Some(d) = &input.description {
            prop.insert("description".into(), json!(d));
        }
        match &input.default {
            Some(default) => {
                prop.insert("default".into(), default.clone());
            }
            None => required.push(json!(name)),
        }
        properties.insert(name.clone(), Value::Object(prop));
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.insert("additionalProperties".into(), json!(false));
    schema
}

/// Pipeline input types are JSON Schema's, plus `any` (no constraint).
fn json_type(kind: &str) -> Option<&str> {
    match kind {
        "string" | "boolean" | "number" | "integer" | "array" | "object" => Some(kind),
        _ => None,
    }
}

/// `list_pipelines` and `graph`: read-only views of the pipelines.
pub fn inspection_tools() -> Vec<Tool> {
    let read_only = ToolAnnotations::new().read_only(true);
    let list = Tool::new(
        LIST_PIPELINES,
        "List the project's pipelines (embedded or overridden in .claude/unity-assets/): name, summary, \
         inputs, and the tool each exposed one is offered as.",
        Arc::new(object(
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )),
    )
    .with_annotations(read_only.clone());
    let graph = Tool::new(
        GRAPH,
        "Draw a pipeline's stage graph (kinds, conditions, fan-out, loop bounds, schema gates), sub-pipelines \
         nested; mermaid by default.",
        Arc::new(object(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The pipeline (`search`, `build`, …)"},
                "format": {"type": "string", "enum": ["mermaid", "ascii", "dot", "json"], "default": "mermaid"}
            },
            "required": ["name"],
            "additionalProperties": false
        }))),
    )
    .with_annotations(read_only);
    vec![list, graph]
}

/// `list_pipelines`' answer.
pub fn listing(project: &Project) -> Value {
    let mut rows = vec![];
    for name in project.pipeline_names() {
        let row = match project.compile(&name, &[]) {
            Ok(p) => {
                let exposed = p.expose().iter().any(|s| s == "mcp");
                json!({
                    "name": p.name(),
                    "summary": p.summary(),
                    "file": p.file(),
                    "inputs": Value::Object(input_schema(&p)),
                    "tool": exposed.then(|| tool_name(p.name())),
                })
            }
            Err(d) => json!({"name": name, "error": d.to_string()}),
        };
        rows.push(row);
    }
    json!({"pipelines": rows})
}

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}
