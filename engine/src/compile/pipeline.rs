//! The compiled pipeline: what the executor runs and the renderers draw.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use minijinja::Environment;
use serde_json::{Map, Value};

use super::params::ResolvedParam;
use crate::spec::{self, InputSpec, McpTool, ModifierKind};
use crate::stages::StageAction;
use crate::template::Tmpl;

/// A checked pipeline, ready to run any number of times.
pub struct Pipeline {
    pub(crate) name: String,
    pub(crate) summary: String,
    /// Where else it is offered besides `run` (`mcp`).
    pub(crate) expose: Vec<String>,
    pub(crate) mcp: McpTool,
    /// Where it was read from (an override path or the embedded path).
    pub(crate) file: String,
    pub(crate) inputs: BTreeMap<String, InputSpec>,
    /// Params after layering.
    pub(crate) params: Arc<Value>,
    pub(crate) resolved_params: Vec<ResolvedParam>,
    pub(crate) output: Option<Tmpl>,
    /// The stages (by ident) the output reads.
    pub(crate) output_reads: BTreeSet<String>,
    /// In a topological order (file order among independent stages).
    pub(crate) stages: Vec<Stage>,
    pub(crate) env: Arc<Environment<'static>>,
}

pub struct Stage {
    pub(crate) name: String,
    /// The name templates use (`-` → `_`).
    pub(crate) ident: String,
    /// Indexes into `Pipeline::stages`.
    pub(crate) needs: Vec<usize>,
    /// Every stage this one may read (transitive needs), by ident.
    pub(crate) upstream: BTreeSet<String>,
    pub(crate) when: Option<(String, Tmpl)>,
    pub(crate) with: Option<Tmpl>,
    pub(crate) gate: Option<Gate>,
    pub(crate) on_invalid: Option<Recovery>,
    pub(crate) on_locked: Option<Recovery>,
    pub(crate) action: StageAction,
    pub(crate) modifier: Option<StageModifier>,
    /// `llm`, `for_each(run)`, ...: named once here, read per run.
    pub(crate) kind: String,
    /// Params the stage's templates read, for graphs and dry runs.
    pub(crate) params_read: Vec<String>,
    /// The upstream stages (by ident) whose outputs its templates read.
    pub(crate) reads: BTreeSet<String>,
}

/// `on_invalid` / `on_locked`: fail, or continue with this output.
pub enum Recovery {
    Fail,
    Output(Tmpl),
}

pub enum StageModifier {
    ForEach {
        items: Tmpl,
        as_name: String,
        concurrency: Tmpl,
    },
    MapReduce {
        items: Tmpl,
        chunk_size: Tmpl,
        as_name: String,
        concurrency: Tmpl,
        reduce: Box<spec::ReduceSpec>,
        top_k: Option<Tmpl>,
    },
    Repeat {
        over: Option<Tmpl>,
        times: Option<u32>,
        as_name: String,
        until: Option<Tmpl>,
    },
}

impl StageModifier {
    pub fn kind(&self) -> ModifierKind {
        match self {
            StageModifier::ForEach { .. } => ModifierKind::ForEach,
            StageModifier::MapReduce { .. } => ModifierKind::MapReduce,
            StageModifier::Repeat { .. } => ModifierKind::Repeat,
        }
    }
}

/// A JSON Schema gate, compiled once.
#[derive(Clone)]
pub struct Gate {
    pub file: String,
    pub schema: Arc<Value>,
    pub(super) validator: Arc<jsonschema::Validator>,
}

impl Gate {
    /// Every validation error, as `/json/pointer: message` lines.
    pub fn check(&self, value: &Value) -> Result<(), Vec<String>> {
        let errors: Vec<String> = self
            .validator
            .iter_errors(value)
            .map(|e| {
                let at = e.instance_path().to_string();
                format!("{}: {}", if at.is_empty() { "/" } else { &at }, e)
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

impl Stage {
    /// `llm`, `for_each(run)`, ...: the kind reports and graphs show.
    pub fn kind(&self) -> &str {
        &self.kind
    }
}

/// A stage's kind as [`Stage::kind`] shows it, computed once when it is compiled.
pub(super) fn kind_name(action: &StageAction, modifier: Option<&StageModifier>) -> String {
    match modifier {
        Some(m) => format!("{}({})", m.kind().key(), action.kind().key()),
        None => action.kind().key().to_owned(),
    }
}

/// Inputs a caller gave that the pipeline cannot take.
#[derive(Debug, thiserror::Error)]
#[error("pipeline `{pipeline}`: {message}")]
pub struct InputError {
    /// The pipeline called.
    pub pipeline: String,
    /// What is wrong and how to pass it.
    pub message: String,
}

impl Pipeline {
    /// Its name (`search`, `search/drill-down`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The one-line `summary:` it gives of itself.
    pub fn summary(&self) -> &str {
        &self.summary
    }

    /// Where it was read from: an override path or the embedded path.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Where else it is offered besides `run` (`mcp`).
    pub fn expose(&self) -> &[String] {
        &self.expose
    }

    /// How it is offered as an MCP tool (`mcp:`; the cautious defaults
    /// when it says nothing).
    pub fn mcp(&self) -> &McpTool {
        &self.mcp
    }

    /// The inputs the product fills (`filled: true`), which no caller sets.
    pub fn filled_inputs(&self) -> impl Iterator<Item = &str> {
        self.inputs.iter().filter(|(_, i)| i.filled).map(|(n, _)| n.as_str())
    }

    /// Its declared inputs, by name.
    pub fn inputs(&self) -> &BTreeMap<String, InputSpec> {
        &self.inputs
    }

    /// Its params after layering (defaults, config, `--set`).
    pub fn params(&self) -> &Value {
        &self.params
    }

    /// Each param after layering, with the layer that set it.
    pub fn resolved_params(&self) -> &[ResolvedParam] {
        &self.resolved_params
    }

    /// The schemas its `llm` stages gate answers with (file, schema).
    pub fn llm_gates(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.stages.iter().filter_map(|s| match (&s.action, &s.gate) {
            (StageAction::Llm(_), Some(gate)) => Some((gate.file.as_str(), gate.schema.as_ref())),
            _ => None,
        })
    }

    /// Check and coerce caller inputs against the pipeline's declarations.
    /// Strings from the command line become the declared type.
    pub fn bind_inputs(&self, mut given: Map<String, Value>) -> Result<Value, InputError> {
        let err = |message: String| InputError {
            pipeline: self.name.clone(),
            message,
        };
        if let Some(unknown) = given.keys().find(|k| !self.inputs.contains_key(*k)) {
            let names: Vec<&str> = self.inputs.keys().map(String::as_str).collect();
            let hint = crate::diagnostic::did_you_mean(unknown, names.iter().copied())
                .map(|b| format!("; did you mean `{b}`?"))
                .unwrap_or_else(|| format!("; inputs are: {}", names.join(", ")));
            return Err(err(format!("unknown input `{unknown}`{hint}")));
        }
        let mut out = Map::new();
        for (name, spec) in &self.inputs {
            let value = match given.remove(name) {
                Some(v) => {
                    coerce(v, &spec.kind, spec.items.as_deref()).map_err(|m| err(format!("input `{name}`: {m}")))?
                }
                None => match &spec.default {
                    Some(d) => d.clone(),
                    None => return Err(err(format!("missing input `{name}` (pass --input {name}=...)"))),
                },
            };
            out.insert(name.clone(), value);
        }
        Ok(Value::Object(out))
    }
}

/// One input given as `kind`: command-line strings parsed to the declared
/// type, numbers and booleans taken as text; any other value of another
/// type is refused, not converted (an object is not a query).
fn coerce(v: Value, kind: &str, items: Option<&str>) -> Result<Value, String> {
    let parsed = |s: &str| serde_json::from_str::<Value>(s).map_err(|_| format!("`{s}` is not a valid {kind}"));
    let value = match (kind, v) {
        ("string", Value::Number(n)) => Value::String(n.to_string()),
        ("string", Value::Bool(b)) => Value::String(b.to_string()),
        ("integer" | "number" | "array" | "object", Value::String(s)) => parsed(&s)?,
        ("boolean", Value::String(s)) => match s.as_str() {
            "true" | "yes" | "1" => Value::Bool(true),
            "false" | "no" | "0" | "" => Value::Bool(false),
            _ => return Err(format!("`{s}` is not a boolean (true/false)")),
        },
        (_, v) => v,
    };
    if !is_kind(&value, kind) {
        return Err(format!("expected {}, got {}", a_kind(kind), a_kind(json_kind(&value))));
    }
    let wrong_item = value
        .as_array()
        .zip(items)
        .and_then(|(list, items)| list.iter().position(|item| !is_kind(item, items)).map(|i| (i, items)));
    match wrong_item {
        Some((i, items)) => Err(format!(
            "item {i}: expected {}, got {}",
            a_kind(items),
            a_kind(json_kind(&value[i]))
        )),
        None => Ok(value),
    }
}

/// Whether `value` is of the declared `kind` (`any` takes everything).
fn is_kind(value: &Value, kind: &str) -> bool {
    match kind {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

/// `a string`, `an object`: a type named in a sentence.
fn a_kind(kind: &str) -> String {
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {kind}")
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
