//! The serde model of a pipeline file, field for field.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::{ActionKind, ModifierKind};
use crate::diagnostic::SourceMap;

/// A parsed pipeline file.
#[derive(Debug, Clone)]
pub struct PipelineSpec {
    pub name: String,
    pub summary: String,
    /// Where else the pipeline is offered (`mcp`: as a tool of the product's MCP server).
    pub expose: Vec<String>,
    /// How it is offered as an MCP tool (`mcp:`), when `expose` names `mcp`.
    pub mcp: McpTool,
    pub inputs: BTreeMap<String, InputSpec>,
    pub params: Value,
    pub output: Option<Value>,
    /// In file order.
    pub stages: Vec<StageSpec>,
    pub file: String,
    pub source: SourceMap,
    /// Stages that had errors of their own (already reported): references to
    /// them are not reported again.
    pub broken: Vec<String>,
}

/// One input a pipeline declares under `inputs:`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputSpec {
    /// Its `type:`: a JSON Schema type, or `any` (the default).
    #[serde(rename = "type", default = "any")]
    pub kind: String,
    /// Present (even as `null`) makes the input optional.
    #[serde(default, deserialize_with = "present")]
    pub default: Option<Value>,
    /// What it is, for help texts and MCP tool schemas.
    pub description: Option<String>,
    /// An `array` input's item type, for tool schemas that must say it.
    pub items: Option<String>,
    /// The product running the pipeline fills it: a caller may not set it,
    /// and tool schemas leave it out.
    #[serde(default)]
    pub filled: bool,
}

/// What an exposed pipeline tells an MCP client about its tool (`mcp:`):
/// the MCP spec's behaviour hints, so a client knows which calls to confirm,
/// and the schema of its output document. Whatever a pipeline leaves out is
/// the spec's cautious default: it may change anything, anywhere, each call.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpTool {
    /// It changes nothing.
    pub read_only: bool,
    /// What it changes may be lost (only meaningful when not read-only).
    pub destructive: bool,
    /// Calling it again with the same inputs changes nothing more.
    pub idempotent: bool,
    /// It reaches beyond the project (the web, other services).
    pub open_world: bool,
    /// A file under `schemas/`: the schema of its output document.
    pub output_schema: Option<String>,
    /// How a call uses the state its MCP session keeps apart from other
    /// sessions (the product says which state that is).
    pub session: SessionUse,
}

/// How a tool call uses its session's own state (`mcp.session`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionUse {
    /// It neither reads nor changes it: calls run side by side.
    #[default]
    None,
    /// It reads it: the session's own is put in place for the call.
    Reads,
    /// It reads and replaces it: what the call leaves becomes the session's.
    Writes,
}

impl Default for McpTool {
    fn default() -> Self {
        Self {
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: true,
            output_schema: None,
            session: SessionUse::None,
        }
    }
}

/// `default: null` is a default of null, not a missing default.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

fn any() -> String {
    "any".into()
}

#[derive(Debug, Clone)]
pub struct StageSpec {
    pub name: String,
    pub needs: Vec<String>,
    pub when: Option<String>,
    pub with: Option<Value>,
    pub output: Option<String>,
    pub on_invalid: Option<Fallback>,
    pub on_locked: Option<Fallback>,
    pub action: Action,
    pub modifier: Option<Modifier>,
}

/// What to do when a stage's output fails its gate (or its file is locked):
/// fail the run, or go on with a fixed output.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Fallback {
    Fail(FailWord),
    Output { output: Value },
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailWord {
    Fail,
}

/// A stage's action as written. Each kind's fields are here rather than in
/// its module under `stages`: `spec` sits above `compile` and `stages` in
/// the layers of `lib.rs`, so the YAML model cannot name them.
#[derive(Debug, Clone)]
pub enum Action {
    Fn(String),
    Llm(LlmSpec),
    Run(String),
    Read(ReadSpec),
    Write(WriteSpec),
    Append(AppendSpec),
    Emit(Value),
    Exit(ExitSpec),
    Ask(AskSpec),
    Http(HttpSpec),
    Exec(ExecSpec),
    Mcp(McpSpec),
}

impl Action {
    pub fn kind(&self) -> ActionKind {
        match self {
            Action::Fn(_) => ActionKind::Fn,
            Action::Llm(_) => ActionKind::Llm,
            Action::Run(_) => ActionKind::Run,
            Action::Read(_) => ActionKind::Read,
            Action::Write(_) => ActionKind::Write,
            Action::Append(_) => ActionKind::Append,
            Action::Emit(_) => ActionKind::Emit,
            Action::Exit(_) => ActionKind::Exit,
            Action::Ask(_) => ActionKind::Ask,
            Action::Http(_) => ActionKind::Http,
            Action::Exec(_) => ActionKind::Exec,
            Action::Mcp(_) => ActionKind::Mcp,
        }
    }

    /// The key it is written under.
    pub fn key(&self) -> &'static str {
        self.kind().key()
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSpec {
    pub prompt: String,
    pub builtin: Option<String>,
    #[serde(default)]
    pub tier: crate::llm::Tier,
    #[serde(default)]
    pub repair: u32,
    pub max_tokens: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadSpec {
    /// A file of the run's folder (templated)...
    pub path: Option<Value>,
    /// ...or one of the pipeline resources (`data/aliases.yml`), with overrides.
    pub resource: Option<String>,
    pub format: Option<crate::io::Format>,
    pub schema: Option<String>,
    #[serde(default)]
    pub bad_rows: BadRows,
    #[serde(default)]
    pub missing: Missing,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BadRows {
    #[default]
    Skip,
    Fail,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Missing {
    #[default]
    Fail,
    Null,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum WriteFormat {
    #[default]
    Json,
    Jsonl,
    Yaml,
    Text,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteSpec {
    pub path: Value,
    pub value: Value,
    #[serde(default)]
    pub format: WriteFormat,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppendSpec {
    pub path: Value,
    pub value: Value,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExitSpec {
    pub code: Value,
    pub status: Option<Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskSpec {
    pub prompt: Value,
    pub choices: Value,
    pub answer: Option<Value>,
    pub default: Option<Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSpec {
    #[serde(default = "default_method")]
    pub method: String,
    pub url: Value,
    pub headers: Option<Value>,
    pub query: Option<Value>,
    pub body: Option<Value>,
    pub timeout_s: Option<u64>,
}

fn default_method() -> String {
    "GET".into()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecSpec {
    pub command: Value,
    pub stdin: Option<Value>,
    pub timeout_s: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpSpec {
    pub server: Value,
    pub tool: Value,
    #[serde(default)]
    pub args: Value,
    /// The registered guard that vets every call before it is sent.
    pub guard: String,
    /// The JSONL audit file every call (allowed or denied) is written to.
    pub audit: Value,
    pub sub_intent: Option<Value>,
}

#[derive(Debug, Clone)]
pub enum Modifier {
    ForEach(ForEachSpec),
    MapReduce(MapReduceSpec),
    Repeat(RepeatSpec),
}

impl Modifier {
    pub fn kind(&self) -> ModifierKind {
        match self {
            Modifier::ForEach(_) => ModifierKind::ForEach,
            Modifier::MapReduce(_) => ModifierKind::MapReduce,
            Modifier::Repeat(_) => ModifierKind::Repeat,
        }
    }

    /// The loop variable names the action sees.
    pub fn locals(&self) -> Vec<String> {
        match self {
            Modifier::ForEach(f) => vec![f.as_name.clone(), "position".into()],
            Modifier::MapReduce(m) => vec![m.as_name.clone(), "position".into()],
            Modifier::Repeat(r) => vec![r.as_name.clone(), "iteration".into()],
        }
    }
}

fn item() -> String {
    "item".into()
}
fn chunk() -> String {
    "chunk".into()
}
fn value() -> String {
    "value".into()
}
fn concurrency() -> Value {
    Value::from(4)
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForEachSpec {
    pub items: Value,
    #[serde(rename = "as", default = "item")]
    pub as_name: String,
    /// At most this many at once: a number or a `{{ expr }}`.
    #[serde(default = "concurrency")]
    pub concurrency: Value,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapReduceSpec {
    pub items: Value,
    pub chunk_size: Value,
    #[serde(rename = "as", default = "chunk")]
    pub as_name: String,
    /// At most this many at once: a number or a `{{ expr }}`.
    #[serde(default = "concurrency")]
    pub concurrency: Value,
    #[serde(default)]
    pub reduce: ReduceSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReduceSpec {
    /// Concatenate the per-chunk lists (default true).
    pub flatten: Option<Flatten>,
    /// A field of each item to sort by (stable; ties keep chunk order).
    pub sort_by: Option<String>,
    #[serde(default)]
    pub order: Order,
    pub top_k: Option<Value>,
}

/// How per-chunk results become one list: concatenate them (`true`), keep
/// them as they are (`false`), or concatenate one list field of each
/// (`flatten: candidates`).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum Flatten {
    All(bool),
    Field(String),
}

#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    #[default]
    Desc,
    Asc,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepeatSpec {
    pub over: Option<Value>,
    pub times: Option<u32>,
    #[serde(rename = "as", default = "value")]
    pub as_name: String,
    pub until: Option<String>,
}
