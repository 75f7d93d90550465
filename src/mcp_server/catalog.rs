//! Which tools the server offers: every pipeline that says `expose: mcp`,
//! plus `list_pipelines` and `graph`, with schemas generated from `inputs:`.

use std::sync::Arc;

use engine::render::Format;
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

/// The tool a pipeline is offered as: the inputs a caller may set, what
/// it answers (when its document has a schema) and what it does to the world.
pub fn describe(project: &Project, t: &PipelineTool) -> Tool {
    let p = &t.pipeline;
    let description = if p.summary().is_empty() {
        format!("Run the `{}` pipeline.", p.name())
    } else {
        p.summary().to_owned()
    };
    let mut tool = Tool::new(t.tool.clone(), description, Arc::new(input_schema(p)))
        .with_title(format!("unity-assets {}", p.name()))
        .with_annotations(annotations(p));
    match output_schema(project, p) {
        Ok(schema) => tool.output_schema = schema.map(Arc::new),
        Err(e) => tracing::warn!("tool `{}` is listed without its output schema: {e}", t.tool),
    }
    tool
}

/// What the tool does to the world, as its pipeline declares (`mcp:`), so
/// a client knows which calls to confirm with its user.
fn annotations(pipeline: &Pipeline) -> ToolAnnotations {
    let hints = pipeline.mcp();
    ToolAnnotations::new()
        .read_only(hints.read_only)
        .destructive(hints.destructive)
        .idempotent(hints.idempotent)
        .open_world(hints.open_world)
}

/// The schema of a tool's structured content: the schema of the
/// pipeline's output document its `mcp: output_schema:` names (`schemas/`,
/// overridable like the rest).
fn output_schema(project: &Project, pipeline: &Pipeline) -> Result<Option<JsonObject>, String> {
    let Some(file) = &pipeline.mcp().output_schema else {
        return Ok(None);
    };
    match schema_file(project, file, 0)? {
        Value::Object(schema) => Ok(Some(schema)),
        _ => Err(format!("schemas/{file} is not a JSON object")),
    }
}

/// A schema file with the other files it names (`"$ref": "x.schema.json"`)
/// put in place: a client resolves nothing relative to our files.
fn schema_file(project: &Project, file: &str, depth: usize) -> Result<Value, String> {
    let rel = format!("schemas/{file}");
    if depth > 4 {
        return Err(format!("{rel}: `$ref`s nest too deep"));
    }
    let text = match project.resources.get(&rel) {
        Ok(Some(resource)) => resource.text,
        Ok(None) => return Err(format!("{rel} is missing")),
        Err(e) => return Err(e.to_string()),
    };
    let mut schema: Value = serde_json::from_str(&text).map_err(|e| format!("{rel}: {e}"))?;
    if let Value::Object(map) = &mut schema {
        map.remove("$id");
        if depth > 0 {
            map.remove("$schema");
        }
    }
    inline_refs(project, &mut schema, depth)?;
    Ok(schema)
}

fn inline_refs(project: &Project, value: &mut Value, depth: usize) -> Result<(), String> {
    match value {
        Value::Object(map) => {
            let sibling = map
                .get("$ref")
                .and_then(Value::as_str)
                .filter(|r| r.ends_with(".schema.json"));
            if let Some(file) = sibling.map(str::to_owned) {
                *value = schema_file(project, &file, depth + 1)?;
                return Ok(());
            }
            map.values_mut().try_for_each(|v| inline_refs(project, v, depth))
        }
        Value::Array(items) => items.iter_mut().try_for_each(|v| inline_refs(project, v, depth)),
        _ => Ok(()),
    }
}

/// A JSON Schema object for the inputs of a pipeline a caller may set:
/// declared types and descriptions; an input without a default is required.
pub fn input_schema(p: &Pipeline) -> JsonObject {
    let mut properties = Map::new();
    let mut required = vec![];
    for (name, input) in p.inputs().iter().filter(|(_, input)| !input.filled) {
        let mut prop = Map::new();
        if let Some(t) = json_type(&input.kind) {
            prop.insert("type".into(), json!(t));
        }
        if input.kind == "array" {
            let items = input.items.as_deref().and_then(json_type).map(|t| json!({ "type": t }));
            prop.insert("items".into(), items.unwrap_or_else(|| json!({})));
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
    let read_only = ToolAnnotations::new()
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(false);
    let mut list = Tool::new(
        LIST_PIPELINES,
        "List the project's pipelines (embedded or overridden in .claude/unity-assets/): name, summary, \
         inputs, and the tool each exposed one is offered as.",
        Arc::new(object(
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )),
    )
    .with_annotations(read_only.clone());
    list.output_schema = Some(Arc::new(object(json!({
        "type": "object",
        "required": ["pipelines"],
        "properties": {"pipelines": {"type": "array", "items": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string"},
                "summary": {"type": "string"},
                "file": {"type": "string"},
                "inputs": {"type": "object"},
                "tool": {"type": ["string", "null"]},
                "error": {"type": "string"}
            }
        }}}
    }))));
    let formats: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
    let graph = Tool::new(
        GRAPH,
        "Draw a pipeline's stage graph (kinds, conditions, fan-out, loop bounds, schema gates), sub-pipelines \
         nested; mermaid by default.",
        Arc::new(object(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The pipeline (`search`, `build`, …)"},
                "format": {"type": "string", "enum": formats, "default": "mermaid"}
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
