//! One function per command. The product commands (search, pick, build,
//! index, doctor) are pipeline runs with their inputs filled from flags.

pub mod eject;
pub mod eval;
pub mod providers;

use engine::render::{render, Format};
use engine::run::{bind_inputs, Flow, RunError};
use engine::Output;
use serde_json::{Map, Value};

use crate::cli::RunOptions;
use crate::exit;
use crate::project::Project;

/// A command's end: an exit code, and a message for stderr if any.
pub struct Outcome {
    pub code: i32,
    pub message: Option<String>,
}

impl Outcome {
    pub fn ok() -> Self {
        Self {
            code: exit::OK,
            message: None,
        }
    }
    pub fn invalid(message: impl ToString) -> Self {
        Self {
            code: exit::INVALID,
            message: Some(message.to_string()),
        }
    }
    pub fn failed(message: impl ToString) -> Self {
        Self {
            code: exit::FAILED,
            message: Some(message.to_string()),
        }
    }
}

/// Compile and run a pipeline; print, report and map the ending to an exit
/// code. The pipeline prints its own lines (emit stages); with `--json` its
/// output document goes to stdout and those lines to stderr.
pub async fn run_pipeline(project: &Project, name: &str, inputs: Map<String, Value>, opts: &RunOptions) -> Outcome {
    let pipeline = match project.compile(name, &opts.sets) {
        Ok(p) => p,
        Err(d) => return Outcome::invalid(d),
    };
    let inputs = match bind_inputs(&pipeline, inputs) {
        Ok(v) => v,
        Err(e) => return Outcome::invalid(e),
    };
    // With a JSON document on stdout, the pipeline's own lines go to stderr.
    let lines = if opts.json { Output::stderr() } else { Output::stdout() };
    let rt = match project.runtime(lines) {
        Ok(rt) => rt,
        Err(e) => return Outcome::failed(e),
    };
    let outcome = tokio::select! {
        outcome = engine::run::run(&pipeline, inputs, &rt) => outcome,
        _ = tokio::signal::ctrl_c() => {
            // Dropping the run cancels its stages; atomic writes never renamed
            // a half-written file into place.
            return Outcome { code: exit::INTERRUPTED, message: Some("interrupted".into()) };
        }
    };
    let costs = match crate::usage::Prices::load(&project.resources) {
        Ok(prices) => crate::usage::costs(&outcome.report, &prices),
        Err(e) => {
            tracing::warn!("cannot price the run's model calls: {e}");
            vec![]
        }
    };
    if let Some(line) = crate::usage::summary_line(&costs, outcome.report.cache_hits()) {
        tracing::info!("{line}");
    }
    if let Some(path) = &opts.report {
        let mut report = serde_json::to_value(&outcome.report).unwrap_or_default();
        report["llm_usage"] = serde_json::to_value(&costs).unwrap_or_default();
        let json = serde_json::to_vec_pretty(&report).unwrap_or_default();
        if let Err(e) = engine::io::write_atomic(path, &json) {
            return Outcome::failed(format!("cannot write the report {}: {e}", path.display()));
        }
    }
    let code = outcome.exit_code();
    let print = |document: &Value| {
        if opts.json {
            println!("{}", serde_json::to_string_pretty(document).unwrap_or_default());
        }
    };
    match outcome.result {
        Ok(Flow::Value(v)) => {
            print(&v);
            Outcome { code, message: None }
        }
        Ok(Flow::Exit { code, status, output }) => {
            if let Some(document) = output.filter(|o| !o.is_null()) {
                print(&document);
            }
            Outcome {
                code,
                message: status
                    .filter(|s| !s.is_empty() && code != exit::OK)
                    .map(|s| format!("{}: {s}", pipeline.name)),
            }
        }
        Err(e @ RunError::Input { .. }) => Outcome::invalid(e),
        Err(e) => Outcome::failed(e),
    }
}

/// `--dry-run`: the plan, without calling any provider or writing anything.
pub fn dry_run(project: &Project, name: &str, opts: &RunOptions) -> Outcome {
    let pipeline = match project.compile(name, &opts.sets) {
        Ok(p) => p,
        Err(d) => return Outcome::invalid(d),
    };
    println!("{}", render(&pipeline.graph(), Format::Ascii).trim_end());
    println!();
    println!("provider: {}", project.config.llm.provider.name());
    println!("params:");
    for p in &pipeline.resolved_params {
        println!("  {} = {}   ({})", p.key, p.value, p.source);
    }
    Outcome::ok()
}

/// `validate`: compile pipelines, print every problem.
pub fn validate(project: &Project, names: &[String]) -> Outcome {
    let (count, errors) = project.validate(names);
    if errors.is_empty() {
        println!("{count} pipeline{} valid", if count == 1 { "" } else { "s" });
        Outcome::ok()
    } else {
        Outcome::invalid(errors)
    }
}

/// `graph`: draw a pipeline.
pub fn graph(project: &Project, name: &str, format: &str) -> Outcome {
    let format: Format = match format.parse() {
        Ok(f) => f,
        Err(e) => return Outcome::invalid(e),
    };
    match project.compile(name, &[]) {
        Ok(p) => {
            print!("{}", render(&p.graph(), format));
            Outcome::ok()
        }
        Err(d) => Outcome::invalid(d),
    }
}

/// `key=value` flags into an inputs map (values stay strings; the engine
/// coerces them to each input's declared type).
pub fn inputs_from_flags(flags: &[String]) -> Result<Map<String, Value>, Outcome> {
    let mut map = Map::new();
    for f in flags {
        let (k, v) = f
            .split_once('=')
            .ok_or_else(|| Outcome::invalid(format!("`--input {f}`: expected key=value")))?;
        map.insert(k.trim().to_owned(), Value::String(v.to_owned()));
    }
    Ok(map)
}
