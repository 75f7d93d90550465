//! `.claude/unity-assets.yml`: the project's settings, checked against
//! `schemas/config.schema.json` with every problem at `file:line:col`.

use std::path::Path;

use engine::diagnostic::SourceMap;
use engine::diagnostic::{Diagnostic, Diagnostics};
use engine::llm::config::LlmConfig;
use engine::resources::Resources;
use engine::ConfigLayer;
use serde_json::Value;

pub const CONFIG_FILE: &str = ".claude/unity-assets.yml";
/// Where a team's edited copies of the embedded files live.
pub const OVERRIDES: &str = ".claude/unity-assets";
const SCHEMA: &str = "schemas/config.schema.json";

/// The parsed config: the parts the product reads itself, and the whole
/// document as a params layer for the pipelines.
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub llm: LlmConfig,
    /// `embeddings:`: where the vectors of search by meaning come from.
    pub embeddings: crate::semantic::EmbeddingsConfig,
    pub parallel_subagents: usize,
    /// `limits:`: size bounds on files and HTTP answers a run reads.
    pub limits: engine::io::Limits,
    pub layer: Option<ConfigLayer>,
}

impl Config {
    /// What a project without a config file runs with.
    pub fn defaults() -> Self {
        Self {
            parallel_subagents: 10,
            ..Self::default()
        }
    }

    /// Read the project's config; a missing file means all defaults.
    pub fn load(project: &Path, resources: &Resources) -> Result<Self, Diagnostics> {
        // A link out of the project is refused, as for every project file:
        // its target is not what `unity-assets trust` reviewed.
        let path = engine::io::confine(project, CONFIG_FILE).map_err(|e| {
            Diagnostics(vec![Diagnostic::about(
                CONFIG_FILE,
                format!("cannot read the config: {e}"),
            )
            .help("replace the link with the file itself (a copy inside the project)")])
        })?;
        // Read before the limits it sets are known: bounded by the default.
        let limit = engine::io::Limits::default().file_bytes;
        let text = match engine::io::read_text_if_present(&path, limit, engine::io::FILE_KEY, &crate::PRODUCT) {
            Ok(Some(t)) => t,
            Ok(None) => return Ok(Self::defaults()),
            Err(e) => {
                return Err(Diagnostics(vec![Diagnostic::about(
                    path.display().to_string(),
                    format!("cannot read the config: {e}"),
                )]))
            }
        };
        Self::parse(&path.display().to_string(), &text, resources)
    }

    pub fn parse(file: &str, text: &str, resources: &Resources) -> Result<Self, Diagnostics> {
        let (values, source) = parse_document(file, text)?;
        check_schema(file, &values, Some(&source), resources)?;
        let llm = match values.get("llm") {
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|e| Diagnostics(vec![Diagnostic::new(file, source.value("llm"), format!("`llm`: {e}"))]))?,
            None => LlmConfig::default(),
        };
        let embeddings = match values.get("embeddings") {
            Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
                Diagnostics(vec![Diagnostic::new(
                    file,
                    source.value("embeddings"),
                    format!("`embeddings`: {e}"),
                )])
            })?,
            None => crate::semantic::EmbeddingsConfig::default(),
        };
        let parallel_subagents = values.get("parallel_subagents").and_then(Value::as_u64).unwrap_or(10) as usize;
        let limits = engine::io::Limits::from_config(
            values.pointer("/limits/file_mb").and_then(Value::as_u64),
            values.pointer("/limits/http_mb").and_then(Value::as_u64),
            values.pointer("/limits/line_kb").and_then(Value::as_u64),
        )
        .with_data_mb(values.pointer("/limits/data_mb").and_then(Value::as_u64))
        .with_template_fuel(values.pointer("/limits/template_fuel").and_then(Value::as_u64));
        Ok(Self {
            llm,
            embeddings,
            parallel_subagents,
            limits,
            layer: Some(ConfigLayer {
                file: file.to_owned(),
                values,
                source,
            }),
        })
    }
}

/// The config text as every reader sees it: the loader and the trust review
/// read it through this one parser, so a tag, an anchor or a layout cannot
/// show one of them something the other does not.
pub fn parse_document(file: &str, text: &str) -> Result<(Value, SourceMap), Diagnostics> {
    let source = SourceMap::new(text);
    let doc: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| {
        let at = e.location().map(|l| (l.line(), l.column()));
        Diagnostics(vec![Diagnostic::new(file, at, format!("invalid YAML: {e}"))])
    })?;
    let values: Value = if doc.is_null() {
        Value::Object(Default::default())
    } else {
        serde_json::to_value(&doc).unwrap_or(Value::Null)
    };
    Ok((values, source))
}

/// `--set` values whose key is a config key (`batch_size`, `search.asset_top_k`)
/// are checked against the same schema as the file; other keys are pipeline
/// params, which the compiler checks.
pub fn check_sets(sets: &[(String, Value)], resources: &Resources) -> Result<(), Diagnostics> {
    let schema = schema(resources)?;
    let mut errors = Diagnostics::default();
    for (key, value) in sets {
        let top = key.split('.').next().unwrap_or_default();
        if schema["properties"].get(top).is_none() {
            continue;
        }
        let doc = key
            .rsplit('.')
            .fold(value.clone(), |inner, segment| serde_json::json!({ segment: inner }));
        if let Err(e) = check_schema(&format!("--set {key}"), &doc, None, resources) {
            errors.extend(e);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn schema(resources: &Resources) -> Result<Value, Diagnostics> {
    resources
        .get(SCHEMA)
        .map_err(|e| Diagnostics(vec![Diagnostic::about(e.origin.clone(), e.to_string())]))?
        .and_then(|r| serde_json::from_str(&r.text).ok())
        .ok_or_else(|| {
            Diagnostics(vec![Diagnostic::about(
                SCHEMA,
                "the config schema is missing or not JSON",
            )])
        })
}

/// Unknown keys and wrong types are reported, not ignored. `source`: where
/// each key sits in `file`; `None` when the values come from a flag.
fn check_schema(
    file: &str,
    values: &Value,
    source: Option<&SourceMap>,
    resources: &Resources,
) -> Result<(), Diagnostics> {
    let schema = schema(resources)?;
    let validator = jsonschema::validator_for(&schema)
        .map_err(|e| Diagnostics(vec![Diagnostic::about(SCHEMA, format!("invalid config schema: {e}"))]))?;
    let known: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let mut errors = Diagnostics::default();
    for e in validator.iter_errors(values) {
        let path: Vec<String> = e
            .instance_path()
            .to_string()
            .split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let dotted = path.join(".");
        let message = e.to_string();
        // "Additional properties are not allowed ('x' was unexpected)" → point at x.
        let extra = message
            .split('\'')
            .nth(1)
            .filter(|_| message.contains("unexpected"))
            .map(str::to_owned);
        let d = match extra {
            Some(key) => {
                let at = if dotted.is_empty() {
                    key.clone()
                } else {
                    format!("{dotted}.{key}")
                };
                Diagnostic::new(file, source.map(|s| s.key(&at)), format!("unknown key `{at}`"))
                    .suggest(&key, known.iter().map(String::as_str))
            }
            None => Diagnostic::new(file, source.map(|s| s.value(&dotted)), format!("`{dotted}`: {message}")),
        };
        errors.push(d.help_or("see the Configuration section of the README for every key"));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

trait HelpOr {
    fn help_or(self, help: &str) -> Self;
}

impl HelpOr for Diagnostic {
    fn help_or(self, help: &str) -> Self {
        if self.help.is_some() {
            self
        } else {
            self.help(help)
        }
    }
}
