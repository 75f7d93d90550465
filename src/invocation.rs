//! One typed invocation of a pipeline, built from the command line's flags
//! or from an MCP tool call's arguments, and run the same way from both
//! doors: the argument checks, the trust check and the doctor's own
//! inputs live here only, so a call says the same thing and ends the same
//! way whichever door it came through. (The index lock is no rule of a
//! door: the index pipeline's first stage, `index.lock`, takes it.)

use std::path::Path;

use engine::{Ending, Runtime};
use serde_json::{json, Map, Value};

use crate::cli::{Command, ReferenceWalk, RunOptions};
use crate::exit::{self, Outcome};
use crate::project::{Opener, Project};
use crate::trust::Gate;

/// The longest value one input may have, in bytes of its JSON text: a
/// query is a sentence, and a 10 MB one cost half a minute and 640 MB.
pub(crate) const MAX_INPUT_BYTES: usize = 16 * 1024;

/// The pipeline that reports on a project instead of using it: it runs
/// on an untrusted project and on a broken config.
const DOCTOR: &str = "doctor";
/// An input a pipeline may declare `filled: true` to learn the door it was
/// called through (`cli`, `mcp`): build's open groups say how to answer in
/// that door's terms.
const CALLER: &str = "caller";
/// An input a pipeline may declare `filled: true` to learn whether anyone
/// can answer a question (a terminal, an MCP client with elicitation): with
/// nobody, a build group that needs confirmation ends the run with
/// `needs_confirmation`.
const CAN_ASK: &str = "can_ask";

/// The door an invocation came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// The command line.
    Cli,
    /// An MCP tool call.
    Mcp,
}

/// What to run and the rules around the run.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// The pipeline's name (or a path to a YAML file, from `run`).
    pub pipeline: String,
    /// The caller's inputs, before the pipeline binds them to their types.
    pub inputs: Map<String, Value>,
    /// `--set key=value` params (none over MCP).
    pub sets: Vec<String>,
    /// Refuse to run on a project whose trust items are not trusted.
    pub(crate) needs_trust: bool,
    pub(crate) door: Door,
}

/// How a run ended, for whoever presents it (the CLI, the MCP server).
pub struct Finished {
    /// The exit code the CLI ends with (non-zero: an MCP tool error).
    pub code: i32,
    /// The pipeline's output document — also when an `exit` stage stopped it.
    pub document: Option<Value>,
    /// Why it failed or refused, prefixed with the pipeline's name.
    pub message: Option<String>,
    /// Per-stage status, time, calls and tokens (`None` when it never ran).
    pub report: Option<engine::RunReport>,
}

impl Finished {
    fn before_run(outcome: Outcome) -> Self {
        Self {
            code: outcome.code,
            document: None,
            message: outcome.message,
            report: None,
        }
    }
}

impl Invocation {
    /// An invocation of `pipeline` with the caller's `inputs`, checked:
    /// none too long, a pick's index a number. (That none is an input the
    /// product fills is checked once the pipeline, which declares them, is
    /// compiled.)
    pub fn new(door: Door, pipeline: &str, inputs: Map<String, Value>, sets: Vec<String>) -> Result<Self, String> {
        for (name, value) in &inputs {
            let size = json_size(value);
            if size > MAX_INPUT_BYTES {
                return Err(format!(
                    "{pipeline}: input `{name}` is {size} bytes; an input may have at most {MAX_INPUT_BYTES}\n  help: shorten it"
                ));
            }
        }
        if pipeline == "pick" {
            check_pick_index(inputs.get("index"))?;
        }
        // Any pipeline may search (a team's own one through `run: search`):
        // the vocabulary is read while the project opens and the run compiles.
        crate::search::prepare_vocabulary();
        Ok(Self {
            pipeline: pipeline.to_owned(),
            inputs,
            sets,
            needs_trust: pipeline != DOCTOR,
            door,
        })
    }

    /// The invocation an MCP tool call asks for: the exposed pipeline and
    /// the call's arguments.
    pub(crate) fn from_tool(pipeline: &str, arguments: Map<String, Value>) -> Result<Self, String> {
        Self::new(Door::Mcp, pipeline, arguments, vec![])
    }

    /// The invocation a command line asks for, with its run options; `None`
    /// for the commands that run no pipeline (validate, graph, eval, …) and
    /// for `run --dry-run`.
    pub fn from_command(command: &Command) -> Option<Result<(Self, &RunOptions), String>> {
        let (pipeline, fields, run) = match command {
            Command::Search {
                query, reindex, run, ..
            } => (
                "search",
                json!({"query": query, "reindex": reindex, "json": run.json}),
                run,
            ),
            Command::WebSearch {
                query,
                kind,
                format,
                run,
                ..
            } => (
                "web-search",
                json!({"query": query, "type": kind, "format": format, "json": run.json}),
                run,
            ),
            Command::Pick { index, run } => ("pick", json!({ "index": index }), run),
            Command::Refs(walk) => ("refs", walk_inputs(walk), &walk.run),
            Command::Deps(walk) => ("deps", walk_inputs(walk), &walk.run),
            Command::Unused { roots, run } => ("unused", json!({"roots": roots, "json": run.json}), run),
            Command::Build {
                request,
                yes,
                choose,
                non_interactive,
                plan,
                run,
                ..
            } => (
                "build",
                json!({"request": request, "yes": yes, "choose": choose, "non_interactive": non_interactive, "plan": plan}),
                run,
            ),
            Command::Index { run, .. } => ("index", json!({"force": false}), run),
            Command::Reindex { run, .. } => ("index", json!({"force": true}), run),
            Command::Doctor { offline, run, .. } => (DOCTOR, json!({ "offline": offline }), run),
            Command::Run {
                name,
                inputs,
                dry_run: false,
                run,
                ..
            } => {
                return Some(
                    inputs_from_flags(inputs)
                        .and_then(|i| Self::new(Door::Cli, name, i, run.sets.clone()))
                        .map(|i| (i, run)),
                )
            }
            _ => return None,
        };
        let inputs = fields.as_object().cloned().unwrap_or_default();
        Some(Self::new(Door::Cli, pipeline, inputs, run.sets.clone()).map(|i| (i, run)))
    }

    /// How the project is opened for it: doctor reports a broken config
    /// instead of failing on it.
    pub fn opener(&self) -> Opener {
        if self.pipeline == DOCTOR {
            Project::open_for_doctor
        } else {
            Project::open
        }
    }

    /// Why the invocation may not run on `project` until it is trusted, if
    /// it may not (`trust_for_run`: `--trust`). Also asked before anything
    /// that precedes a run, such as `index --watch` starting its watch.
    pub fn refused(&self, project: &Project, trust_for_run: bool) -> Option<Outcome> {
        let gate = self.gate(project, trust_for_run);
        self.refusal(&gate, project)
    }

    /// The trust check of this invocation on `project`, which reviews the
    /// pipeline file a `run FILE` names too (`trust_for_run`: `--trust`).
    fn gate(&self, project: &Project, trust_for_run: bool) -> Gate {
        let run_file = Some(Path::new(&self.pipeline));
        Gate::check(
            &project.root,
            &project.resources,
            &project.registry,
            run_file,
            trust_for_run,
        )
    }

    fn refusal(&self, gate: &Gate, project: &Project) -> Option<Outcome> {
        let needs_trust = self.needs_trust || gate.review.runs_reaching_override(&self.pipeline);
        let refusal = gate.refusal(&project.root).filter(|_| needs_trust)?;
        Some(Outcome {
            code: exit::UNTRUSTED,
            message: Some(refusal),
        })
    }

    /// Check trust, compile, bind the inputs to their declared types and
    /// run on `runtime` (where its lines go, whether it may ask, how
    /// progress shows). `trust_for_run`: `--trust`. Dropping the future
    /// cancels the run; atomic writes never leave a half-written file.
    pub async fn run(&self, project: &Project, trust_for_run: bool, runtime: &Runtime) -> Finished {
        // A pipeline file `run FILE` names is reviewed too when it lies inside
        // the project; doctor, which reports an untrusted project, is refused
        // only when its own pipeline is a project override that reaches out.
        let gate = self.gate(project, trust_for_run);
        if let Some(refusal) = self.refusal(&gate, project) {
            return Finished::before_run(refusal);
        }
        let mut inputs = self.inputs.clone();
        let mut sets = self.sets.clone();
        if self.pipeline == DOCTOR {
            // Bad --set values are reported by the config check, not fatal.
            let mut set_errors = vec![];
            if let Err(bad) = project.compile(DOCTOR, &sets) {
                if project.compile(DOCTOR, &[]).is_ok() {
                    set_errors = bad.0.iter().map(ToString::to_string).collect();
                    sets.clear();
                }
            }
            inputs.extend(crate::doctor::inputs(&gate, &project.root, set_errors));
        }
        let pipeline = match project.compile(&self.pipeline, &sets) {
            Ok(p) => p,
            Err(d) => return Finished::before_run(Outcome::invalid(d)),
        };
        if let Some(name) = pipeline.filled_inputs().find(|name| self.inputs.contains_key(*name)) {
            return Finished::before_run(Outcome::invalid(format!(
                "{}: input `{name}` is filled by unity-assets itself; leave it out",
                self.pipeline
            )));
        }
        // Only the inputs it declares filled: a build ejected before `caller` existed still runs.
        let fills = |input: &str| pipeline.filled_inputs().any(|name| name == input);
        if fills(CALLER) {
            let door = match self.door {
                Door::Cli => "cli",
                Door::Mcp => "mcp",
            };
            inputs.insert(CALLER.into(), door.into());
        }
        if fills(CAN_ASK) {
            inputs.insert(CAN_ASK.into(), runtime.can_ask().into());
        }
        let inputs = match pipeline.bind_inputs(inputs) {
            Ok(v) => v,
            Err(e) => return Finished::before_run(Outcome::invalid(e)),
        };
        let outcome = engine::run(&pipeline, inputs, runtime).await;
        let code = outcome.exit_code();
        let (code, document, message) = match outcome.result {
            Ok(Ending::Finished(v)) => (code, Some(v), None),
            Ok(Ending::Exited { code, status, output }) => {
                let message = status
                    .filter(|s| !s.is_empty() && code != exit::OK)
                    .map(|s| format!("{}: {s}", pipeline.name()));
                (code, output.filter(|o| !o.is_null()), message)
            }
            Err(e) => (exit::FAILED, None, Some(e.to_string())),
        };
        Finished {
            code,
            document,
            message,
            report: Some(outcome.report),
        }
    }
}

/// The inputs of `refs` and `deps`, which walk the same way.
fn walk_inputs(walk: &ReferenceWalk) -> Value {
    json!({"asset": walk.asset, "depth": walk.depth, "json": walk.run.json})
}

/// A pick's index is a candidate number, as text (the CLI) or a number (MCP).
fn check_pick_index(index: Option<&Value>) -> Result<(), String> {
    let valid = match index {
        // A missing index is the pipeline's "missing input", as for any input.
        None => true,
        Some(Value::String(s)) => s.trim().parse::<usize>().is_ok(),
        Some(Value::Number(n)) => n.is_u64(),
        Some(_) => false,
    };
    if valid {
        return Ok(());
    }
    let typed = match index {
        Some(Value::String(s)) => s.clone(),
        other => other.map(Value::to_string).unwrap_or_default(),
    };
    let refusal = crate::search::pick::not_a_number(&typed);
    Err(match refusal.help {
        Some(help) => format!("{}\n  help: {help}", refusal.line),
        None => refusal.line,
    })
}

fn json_size(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        other => other.to_string().len(),
    }
}

/// `key=value` flags into an inputs map (values stay strings; the engine
/// binds them to each input's declared type).
pub fn inputs_from_flags(flags: &[String]) -> Result<Map<String, Value>, String> {
    let mut map = Map::new();
    for f in flags {
        let (k, v) = f
            .split_once('=')
            .ok_or_else(|| format!("`--input {f}`: expected key=value"))?;
        map.insert(k.trim().to_owned(), Value::String(v.to_owned()));
    }
    Ok(map)
}
