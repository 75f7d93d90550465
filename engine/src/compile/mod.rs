//! spec → checked DAG: resolve references, params, templates and schemas.
//!
//! Compiling never stops at the first problem: every error in the pipeline
//! (and in the prompts, schemas and sub-pipelines it uses) is collected with
//! its `file:line:col`, so one `validate` shows everything to fix.

mod describe;
mod graph;
pub mod params;
mod pipeline;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use minijinja::Environment;
use serde_json::Value;

pub use params::{ConfigLayer, ParamLayers, ResolvedParam};
pub use pipeline::{
    AppendStage, AskStage, ExecStage, ExitStage, FnStage, Gate, HttpStage, InputError, LlmStage, McpStage, Pipeline,
    ReadSource, ReadStage, Recovery, Stage, StageAction, StageModifier, WriteStage,
};

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::registry::Registry;
use crate::resources::Resources;
use crate::spec::{self, Action, Fallback, InputSpec, Modifier, PipelineSpec, StageSpec};
use crate::template::{self, Tmpl};

/// Compiles pipelines by name, sharing sub-pipelines and schemas.
pub struct Compiler<'a> {
    resources: &'a Resources,
    registry: &'a Registry,
    layers: &'a ParamLayers,
    /// With the offline provider every `llm` stage must name a `builtin`.
    builtin_provider: bool,
    pipelines: HashMap<String, Arc<Pipeline>>,
    gates: HashMap<String, Option<Gate>>,
    /// Names being compiled, to catch `run:` recursion.
    active: Vec<String>,
    /// Every param leaf of the pipelines compiled, for checking `--set`.
    param_leaves: BTreeSet<String>,
}

/// Template globals and loop helpers that are never undeclared references.
const TEMPLATE_GLOBALS: &[&str] = &[
    "range",
    "dict",
    "namespace",
    "debug",
    "loop",
    "self",
    "super",
    "caller",
    "varargs",
    "kwargs",
    "true",
    "false",
    "none",
];

impl<'a> Compiler<'a> {
    pub fn new(
        resources: &'a Resources,
        registry: &'a Registry,
        layers: &'a ParamLayers,
        builtin_provider: bool,
    ) -> Self {
        Self {
            resources,
            registry,
            layers,
            builtin_provider,
            pipelines: HashMap::new(),
            gates: HashMap::new(),
            active: vec![],
            param_leaves: BTreeSet::new(),
        }
    }

    /// Names of every pipeline the resources hold (`search`, `search/retrieve`).
    pub fn pipeline_names(&self) -> Vec<String> {
        self.resources
            .list("pipelines")
            .into_iter()
            .filter_map(|p| {
                p.strip_prefix("pipelines/")
                    .and_then(|p| p.strip_suffix(".yaml"))
                    .map(str::to_owned)
            })
            .collect()
    }

    /// Compile a pipeline by name (`search`) or by a path to a YAML file,
    /// with its sub-pipelines; `--set` keys are checked against them all.
    pub fn compile(&mut self, name_or_path: &str) -> Result<Arc<Pipeline>, Diagnostics> {
        let pipeline = self.compile_entry(name_or_path)?;
        self.layers.check_sets(&self.param_leaves, &pipeline.name)?;
        Ok(pipeline)
    }

    fn compile_entry(&mut self, name_or_path: &str) -> Result<Arc<Pipeline>, Diagnostics> {
        let path = Path::new(name_or_path);
        if matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")) {
            let limit = crate::io::Limits::default().file_bytes;
            let text = crate::io::read_text_limited(path, limit, crate::io::FILE_KEY).map_err(|e| {
                one(Diagnostic::about(
                    name_or_path,
                    format!("cannot read pipeline file: {e}"),
                ))
            })?;
            return self.compile_text(name_or_path, &text, path.parent().map(Path::to_path_buf), None);
        }
        self.compile_named(name_or_path, None, None)
    }

    fn compile_named(
        &mut self,
        name: &str,
        sibling_dir: Option<&Path>,
        at: Option<Diagnostic>,
    ) -> Result<Arc<Pipeline>, Diagnostics> {
        if let Some(p) = self.pipelines.get(name) {
            return Ok(Arc::clone(p));
        }
        if let Some(dir) = sibling_dir {
            let file = dir.join(format!("{name}.yaml"));
            let limit = crate::io::Limits::default().file_bytes;
            let read = crate::io::read_text_if_present(&file, limit, crate::io::FILE_KEY);
            let text = read.map_err(|e| {
                one(Diagnostic::about(
                    file.display().to_string(),
                    format!("cannot read pipeline file: {e}"),
                ))
            })?;
            if let Some(text) = text {
                let p = self.compile_text(&file.display().to_string(), &text, Some(dir.to_path_buf()), at.as_ref())?;
                self.pipelines.insert(name.to_owned(), Arc::clone(&p));
                return Ok(p);
            }
        }
        let rel = format!("pipelines/{name}.yaml");
        let Some(res) = self.resources.get(&rel).map_err(|e| one(resource_error(e)))? else {
            let names = self.pipeline_names();
            let d = at.unwrap_or_else(|| Diagnostic::about(name, String::new()));
            let d = Diagnostic {
                message: format!("no pipeline named `{name}` (looked for {rel})"),
                ..d
            };
            return Err(one(d.suggest(name, names.iter().map(String::as_str))));
        };
        let p = self.compile_text(&res.origin, &res.text, None, at.as_ref())?;
        self.pipelines.insert(name.to_owned(), Arc::clone(&p));
        Ok(p)
    }

    /// `from`: the `run:` reference that led here, where a recursion is reported.
    fn compile_text(
        &mut self,
        file: &str,
        text: &str,
        sibling_dir: Option<PathBuf>,
        from: Option<&Diagnostic>,
    ) -> Result<Arc<Pipeline>, Diagnostics> {
        let (spec, parse_errors) = spec::parse(file, text);
        let Some(spec) = spec else { return Err(parse_errors) };
        if self.active.contains(&spec.name) {
            let message = format!(
                "pipeline `{}` runs itself through `run:` ({} → {}); sub-pipelines must not recurse",
                spec.name,
                self.active.join(" → "),
                spec.name
            );
            let d = match from {
                Some(at) => Diagnostic { message, ..at.clone() },
                None => Diagnostic::about(file, message),
            };
            return Err(one(d));
        }
        self.active.push(spec.name.clone());
        let result = self.build(spec, sibling_dir);
        self.active.pop();
        match result {
            Ok(p) if parse_errors.is_empty() => Ok(Arc::new(p)),
            Ok(_) => Err(parse_errors),
            Err(mut e) => {
                e.extend(parse_errors);
                e.sort();
                Err(e)
            }
        }
    }

    fn build(&mut self, spec: PipelineSpec, sibling_dir: Option<PathBuf>) -> Result<Pipeline, Diagnostics> {
        let mut errors = Diagnostics::default();
        let file = spec.file.clone();
        let src = &spec.source;
        let (params, resolved_params) = self.layers.resolve(&spec.params);
        let mut leaves = vec![];
        params::flatten(&spec.params, "", &mut leaves);
        self.param_leaves.extend(leaves);

        // Stage names and edges.
        let index: HashMap<&str, usize> = spec
            .stages
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i))
            .collect();
        let names: Vec<&str> = spec.stages.iter().map(|s| s.name.as_str()).collect();
        let mut idents: HashMap<String, &str> = HashMap::new();
        for s in &spec.stages {
            if let Some(other) = idents.insert(spec::ident(&s.name), &s.name) {
                errors.push(Diagnostic::new(
                    &file,
                    src.key(&format!("stages.{}", s.name)),
                    format!(
                        "stage `{}` and stage `{other}` are both `{}` in templates; rename one",
                        s.name,
                        spec::ident(&s.name)
                    ),
                ));
            }
        }
        let mut needs: Vec<Vec<usize>> = Vec::with_capacity(spec.stages.len());
        for s in &spec.stages {
            let mut ns = vec![];
            for (i, n) in s.needs.iter().enumerate() {
                match index.get(n.as_str()) {
                    Some(&j) => ns.push(j),
                    None if spec.broken.contains(n) => {}
                    None => errors.push(
                        Diagnostic::new(
                            &file,
                            src.value(&format!("stages.{}.needs.{i}", s.name)),
                            format!("stage `{}` needs `{n}`, which is not a stage of this pipeline", s.name),
                        )
                        .suggest(n, names.iter().copied()),
                    ),
                }
            }
            needs.push(ns);
        }
        let order = match graph::topological_order(&needs) {
            Ok(order) => order,
            Err(cycles) => {
                for cycle in cycles {
                    let first = &spec.stages[cycle[0]].name;
                    let path: Vec<&str> = cycle
                        .iter()
                        .chain(std::iter::once(&cycle[0]))
                        .map(|&i| spec.stages[i].name.as_str())
                        .collect();
                    errors.push(
                        Diagnostic::new(
                            &file,
                            src.key(&format!("stages.{first}.needs")),
                            format!("cycle in `needs`: {}", path.join(" → ")),
                        )
                        .help("a stage can only need stages that finish before it; remove one of these edges"),
                    );
                }
                (0..spec.stages.len()).collect()
            }
        };
        let upstream = graph::upstream(&needs);

        let env = template::environment();
        let mut env_prompts = template::environment();
        let mut stages: Vec<Option<Stage>> = Vec::new();
        for (i, s) in spec.stages.iter().enumerate() {
            let ups: BTreeSet<String> = upstream[i].iter().map(|&j| spec::ident(&spec.stages[j].name)).collect();
            let ctx = StageCtx {
                file: &file,
                spec: &spec,
                stage: s,
                upstream: &ups,
                params: &params,
                env: &env,
            };
            stages.push(self.stage(
                &ctx,
                needs[i].clone(),
                &mut env_prompts,
                sibling_dir.as_deref(),
                &mut errors,
            ));
        }

        let output = spec.output.as_ref().map(|v| {
            let all: BTreeSet<String> = spec
                .stages
                .iter()
                .map(|s| &s.name)
                .chain(&spec.broken)
                .map(|n| spec::ident(n))
                .collect();
            let ctx = RefCtx {
                file: &file,
                source: src,
                inputs: &spec.inputs,
                params: &params,
                upstream: &all,
                locals: &[],
                stage: None,
                all_stages: &all,
                broken: &spec.broken,
            };
            compile_value(&env, v, "output", &ctx, &mut errors)
        });

        if !errors.is_empty() {
            errors.sort();
            return Err(errors);
        }
        // Reorder topologically, remapping `needs` indexes.
        let mut position = vec![0; order.len()];
        for (new, &old) in order.iter().enumerate() {
            position[old] = new;
        }
        let mut by_old: Vec<Option<Stage>> = stages;
        let stages = order
            .iter()
            .map(|&old| {
                let mut st = by_old[old].take().expect("compiled without errors");
                st.needs = st.needs.iter().map(|&n| position[n]).collect();
                st
            })
            .collect();
        // Prompts were added to their own env; templates share the base syntax.
        drop(env);
        Ok(Pipeline {
            name: spec.name.clone(),
            summary: spec.summary.clone(),
            expose: spec.expose.clone(),
            file,
            inputs: spec.inputs.clone(),
            params: Arc::new(params),
            resolved_params,
            output,
            stages,
            env: Arc::new(env_prompts),
        })
    }

    fn stage(
        &mut self,
        ctx: &StageCtx,
        needs: Vec<usize>,
        prompts: &mut Environment<'static>,
        sibling_dir: Option<&Path>,
        errors: &mut Diagnostics,
    ) -> Option<Stage> {
        let s = ctx.stage;
        let base = format!("stages.{}", s.name);
        let all: BTreeSet<String> = ctx
            .spec
            .stages
            .iter()
            .map(|s| &s.name)
            .chain(&ctx.spec.broken)
            .map(|n| spec::ident(n))
            .collect();
        let locals: Vec<String> = s.modifier.as_ref().map(Modifier::locals).unwrap_or_default();
        for local in &locals {
            if all.contains(local) || local == "inputs" || local == "params" {
                let key = s.modifier.as_ref().map(Modifier::key).unwrap_or_default();
                errors.push(
                    Diagnostic::new(
                        ctx.file,
                        ctx.spec.source.key(&format!("{base}.{key}")),
                        format!(
                            "the loop variable `{local}` of stage `{}` hides the name `{local}`",
                            s.name
                        ),
                    )
                    .help("pick another name with `as:` (or rename the stage)"),
                );
            }
        }
        let outer = RefCtx {
            file: ctx.file,
            source: &ctx.spec.source,
            inputs: &ctx.spec.inputs,
            params: ctx.params,
            upstream: ctx.upstream,
            locals: &[],
            stage: Some(&s.name),
            all_stages: &all,
            broken: &ctx.spec.broken,
        };
        let inner = RefCtx {
            locals: &locals,
            ..outer
        };
        let env = ctx.env;
        let mut params_read = BTreeSet::new();
        let mut c = |v: &Value, path: &str, rc: &RefCtx, errors: &mut Diagnostics| {
            let t = compile_value(env, v, &format!("{base}.{path}"), rc, errors);
            for (r, _) in t.references(env) {
                if let Some(p) = r.strip_prefix("params.") {
                    params_read.insert(p.to_owned());
                }
            }
            t
        };

        let when = s
            .when
            .as_ref()
            .map(|w| (w.clone(), c(&Value::String(w.clone()), "when", &outer, errors)));
        let with = s.with.as_ref().map(|w| c(w, "with", &inner, errors));
        let gate = s
            .output
            .as_ref()
            .and_then(|f| self.gate(f, ctx.file, ctx.spec.source.value(&format!("{base}.output")), errors));
        let recovery = |fb: &Option<Fallback>,
                        key: &str,
                        errors: &mut Diagnostics,
                        c: &mut dyn FnMut(&Value, &str, &RefCtx, &mut Diagnostics) -> Tmpl| {
            fb.as_ref().map(|f| match f {
                Fallback::Fail(_) => Recovery::Fail,
                Fallback::Output { output } => Recovery::Output(c(output, &format!("{key}.output"), &inner, errors)),
            })
        };
        let on_invalid = recovery(&s.on_invalid, "on_invalid", errors, &mut c);
        let on_locked = recovery(&s.on_locked, "on_locked", errors, &mut c);

        let modifier = s.modifier.as_ref().map(|m| match m {
            Modifier::ForEach(f) => StageModifier::ForEach {
                items: c(&f.items, "for_each.items", &outer, errors),
                as_name: f.as_name.clone(),
                concurrency: c(&f.concurrency, "for_each.concurrency", &outer, errors),
            },
            Modifier::MapReduce(m) => StageModifier::MapReduce {
                items: c(&m.items, "map_reduce.items", &outer, errors),
                chunk_size: c(&m.chunk_size, "map_reduce.chunk_size", &outer, errors),
                as_name: m.as_name.clone(),
                concurrency: c(&m.concurrency, "map_reduce.concurrency", &outer, errors),
                top_k: m
                    .reduce
                    .top_k
                    .as_ref()
                    .map(|k| c(k, "map_reduce.reduce.top_k", &outer, errors)),
                reduce: Box::new(m.reduce.clone()),
            },
            Modifier::Repeat(r) => {
                let mut with_result = locals.clone();
                with_result.push("result".into());
                let until_ctx = RefCtx {
                    locals: &with_result,
                    ..outer
                };
                StageModifier::Repeat {
                    over: r.over.as_ref().map(|o| c(o, "repeat.over", &outer, errors)),
                    times: r.times,
                    as_name: r.as_name.clone(),
                    until: r
                        .until
                        .as_ref()
                        .map(|u| c(&Value::String(u.clone()), "repeat.until", &until_ctx, errors)),
                }
            }
        });

        let at = |key: &str| ctx.spec.source.value(&format!("{base}.{key}"));
        let action = match &s.action {
            Action::Fn(name) => match self.registry.get_function(name) {
                Some(native) => Some(StageAction::Fn(FnStage {
                    name: name.clone(),
                    native: native.clone(),
                })),
                None => {
                    errors.push(
                        Diagnostic::new(ctx.file, at("fn"), format!("no native function named `{name}`"))
                            .suggest(name, self.registry.function_names()),
                    );
                    None
                }
            },
            Action::Llm(l) => {
                let builtin = match &l.builtin {
                    Some(b) => match self.registry.get_builtin(b) {
                        Some(n) => Some((b.clone(), n.clone())),
                        None => {
                            errors.push(
                                Diagnostic::new(ctx.file, at("llm.builtin"), format!("no builtin task named `{b}`"))
                                    .suggest(b, self.registry.builtin_names()),
                            );
                            None
                        }
                    },
                    None => {
                        if self.builtin_provider {
                            errors.push(
                                Diagnostic::new(ctx.file, at("llm"), format!("llm stage `{}` has no `builtin:`, so the offline builtin provider cannot run it", s.name))
                                    .help("name a builtin task, or select a model provider (`--provider anthropic|openai|claude-code`)"),
                            );
                        }
                        None
                    }
                };
                self.prompt(&l.prompt, s, ctx, prompts, errors);
                if s.output.is_none() {
                    errors.push(
                        Diagnostic::new(
                            ctx.file,
                            at("llm"),
                            format!("llm stage `{}` has no `output:` schema gate", s.name),
                        )
                        .help("every model answer is checked against a schema: add `output: <file>.schema.json`"),
                    );
                }
                Some(StageAction::Llm(LlmStage {
                    prompt: l.prompt.clone(),
                    builtin,
                    tier: l.tier,
                    repair: l.repair,
                    max_tokens: l.max_tokens,
                }))
            }
            Action::Run(name) => {
                let d = Diagnostic::new(ctx.file, at("run"), String::new());
                match self.compile_named(name, sibling_dir, Some(d)) {
                    Ok(p) => Some(StageAction::Run(p)),
                    Err(e) => {
                        errors.extend(e);
                        None
                    }
                }
            }
            Action::Read(r) => {
                let rows = r
                    .schema
                    .as_ref()
                    .and_then(|f| self.gate(f, ctx.file, at("read.schema"), errors));
                let source = match (&r.path, &r.resource) {
                    (Some(p), None) => Some(ReadSource::Path(c(p, "read.path", &inner, errors))),
                    (None, Some(rel)) => {
                        let found = self.resources.get(rel);
                        if let Err(e) = &found {
                            errors.push(resource_error(e.clone()));
                        } else if found.is_ok_and(|r| r.is_none()) {
                            let known = self.resources.list(rel.split('/').next().unwrap_or_default());
                            errors.push(
                                Diagnostic::new(ctx.file, at("read.resource"), format!("resource `{rel}` not found"))
                                    .suggest(rel, known.iter().map(String::as_str)),
                            );
                        }
                        Some(ReadSource::Resource(rel.clone()))
                    }
                    _ => {
                        errors.push(Diagnostic::new(ctx.file, at("read"), "`read` needs exactly one of `path:` (a file of the project) or `resource:` (data/…, schemas/…)"));
                        None
                    }
                }?;
                Some(StageAction::Read(ReadStage {
                    source,
                    format: r.format,
                    rows,
                    bad_rows: r.bad_rows,
                    missing: r.missing,
                }))
            }
            Action::Write(w) => Some(StageAction::Write(WriteStage {
                path: c(&w.path, "write.path", &inner, errors),
                value: c(&w.value, "write.value", &inner, errors),
                format: w.format,
            })),
            Action::Append(a) => Some(StageAction::Append(AppendStage {
                path: c(&a.path, "append.path", &inner, errors),
                value: c(&a.value, "append.value", &inner, errors),
            })),
            Action::Emit(e) => Some(StageAction::Emit(c(e, "emit", &inner, errors))),
            Action::Exit(e) => Some(StageAction::Exit(ExitStage {
                code: c(&e.code, "exit.code", &inner, errors),
                status: e.status.as_ref().map(|v| c(v, "exit.status", &inner, errors)),
            })),
            Action::Ask(a) => Some(StageAction::Ask(AskStage {
                prompt: c(&a.prompt, "ask.prompt", &inner, errors),
                choices: c(&a.choices, "ask.choices", &inner, errors),
                answer: a.answer.as_ref().map(|v| c(v, "ask.answer", &inner, errors)),
                default: a.default.as_ref().map(|v| c(v, "ask.default", &inner, errors)),
            })),
            Action::Http(h) => Some(StageAction::Http(HttpStage {
                method: h.method.to_uppercase(),
                url: c(&h.url, "http.url", &inner, errors),
                headers: h.headers.as_ref().map(|v| c(v, "http.headers", &inner, errors)),
                query: h.query.as_ref().map(|v| c(v, "http.query", &inner, errors)),
                body: h.body.as_ref().map(|v| c(v, "http.body", &inner, errors)),
                timeout_s: h.timeout_s,
            })),
            Action::Exec(e) => Some(StageAction::Exec(ExecStage {
                command: c(&e.command, "exec.command", &inner, errors),
                stdin: e.stdin.as_ref().map(|v| c(v, "exec.stdin", &inner, errors)),
                timeout_s: e.timeout_s,
            })),
            Action::Mcp(m) => {
                let guard = self.registry.get_guard(&m.guard).cloned();
                if guard.is_none() {
                    errors.push(
                        Diagnostic::new(ctx.file, at("mcp.guard"), format!("no scope guard named `{}`", m.guard))
                            .suggest(&m.guard, self.registry.guard_names()),
                    );
                }
                let stage = StageAction::Mcp(McpStage {
                    server: c(&m.server, "mcp.server", &inner, errors),
                    tool: c(&m.tool, "mcp.tool", &inner, errors),
                    args: c(&m.args, "mcp.args", &inner, errors),
                    guard: guard.unwrap_or_else(|| Arc::new(crate::mcp::DenyAll)),
                    audit: c(&m.audit, "mcp.audit", &inner, errors),
                    sub_intent: m.sub_intent.as_ref().map(|v| c(v, "mcp.sub_intent", &inner, errors)),
                });
                Some(stage)
            }
        }?;
        Some(Stage {
            name: s.name.clone(),
            ident: spec::ident(&s.name),
            summary: s.summary.clone(),
            needs,
            upstream: ctx.upstream.clone(),
            when,
            with,
            gate,
            on_invalid,
            on_locked,
            action,
            modifier,
            params_read: params_read.into_iter().collect(),
        })
    }

    /// Load and compile a JSON Schema from `schemas/`, once per file (an
    /// invalid schema is reported once, in the schema file).
    fn gate(&mut self, name: &str, file: &str, at: (usize, usize), errors: &mut Diagnostics) -> Option<Gate> {
        if let Some(g) = self.gates.get(name) {
            return g.clone();
        }
        let rel = format!("schemas/{name}");
        let gate = match self.resources.get(&rel) {
            Err(e) => {
                errors.push(resource_error(e));
                return None;
            }
            Ok(None) => {
                let known: Vec<String> = self
                    .resources
                    .list("schemas")
                    .into_iter()
                    .filter_map(|p| p.strip_prefix("schemas/").map(str::to_owned))
                    .collect();
                errors.push(
                    Diagnostic::new(file, at, format!("schema file `{rel}` not found"))
                        .suggest(name, known.iter().map(String::as_str)),
                );
                // Not cached: every stage naming it gets its own message.
                return None;
            }
            Ok(Some(res)) => match serde_json::from_str::<Value>(&res.text) {
                Err(e) => {
                    errors.push(Diagnostic::new(
                        &res.origin,
                        (e.line(), e.column()),
                        format!("schema is not valid JSON: {e}"),
                    ));
                    None
                }
                Ok(schema) => match jsonschema::validator_for(&schema) {
                    Err(e) => {
                        errors.push(
                            Diagnostic::about(&res.origin, format!("not a valid JSON Schema: {e}"))
                                .help(format!("at {}", e.instance_path())),
                        );
                        None
                    }
                    Ok(v) => Some(Gate {
                        file: rel,
                        schema: Arc::new(schema),
                        validator: Arc::new(v),
                    }),
                },
            },
        };
        self.gates.insert(name.to_owned(), gate.clone());
        gate
    }

    /// Load a prompt template into the pipeline's env and check the names it reads.
    fn prompt(
        &mut self,
        name: &str,
        s: &StageSpec,
        ctx: &StageCtx,
        env: &mut Environment<'static>,
        errors: &mut Diagnostics,
    ) {
        let rel = format!("prompts/{name}");
        let at = ctx.spec.source.value(&format!("stages.{}.llm.prompt", s.name));
        let found = match self.resources.get(&rel) {
            Ok(found) => found,
            Err(e) => {
                errors.push(resource_error(e));
                return;
            }
        };
        let Some(res) = found else {
            let known: Vec<String> = self
                .resources
                .list("prompts")
                .into_iter()
                .filter_map(|p| p.strip_prefix("prompts/").map(str::to_owned))
                .collect();
            errors.push(
                Diagnostic::new(ctx.file, at, format!("prompt file `{rel}` not found"))
                    .suggest(name, known.iter().map(String::as_str)),
            );
            return;
        };
        if env.get_template(name).is_ok() {
            return;
        }
        if let Err(e) = env.add_template_owned(name.to_owned(), res.text.to_string()) {
            errors.push(Diagnostic::new(
                &res.origin,
                (e.line().unwrap_or(1), 1),
                format!("template syntax error: {}", e.detail().unwrap_or(&e.kind().to_string())),
            ));
            return;
        }
        // A prompt sees inputs, params and the keys of its stage's `with:` map.
        let Some(Value::Object(with)) = &s.with else { return };
        let Ok(t) = env.get_template(name) else { return };
        let mut allowed: Vec<&str> = vec!["inputs", "params"];
        allowed.extend(with.keys().map(String::as_str));
        let mut undeclared: Vec<String> = t.undeclared_variables(false).into_iter().collect();
        undeclared.sort();
        for var in undeclared {
            if !allowed.contains(&var.as_str()) && !TEMPLATE_GLOBALS.contains(&var.as_str()) {
                let line = res
                    .text
                    .lines()
                    .position(|l| l.contains(var.as_str()))
                    .map_or(1, |i| i + 1);
                let col = res
                    .text
                    .lines()
                    .nth(line - 1)
                    .and_then(|l| l.find(var.as_str()))
                    .map_or(1, |c| c + 1);
                errors.push(
                    Diagnostic::new(
                        &res.origin,
                        (line, col),
                        format!(
                            "template reads `{var}`, which stage `{}` does not pass in `with:`",
                            s.name
                        ),
                    )
                    .suggest(&var, allowed.iter().copied())
                    .help_once(format!(
                        "a prompt sees `inputs`, `params` and its stage's `with:` keys ({})",
                        with.keys().cloned().collect::<Vec<_>>().join(", ")
                    )),
                );
            }
        }
    }
}

impl Diagnostic {
    fn help_once(self, help: String) -> Self {
        if self.help.is_some() {
            self
        } else {
            self.help(help)
        }
    }
}

/// An override that exists but cannot be used, at its file.
fn resource_error(e: crate::resources::ResourceError) -> Diagnostic {
    Diagnostic::about(e.origin.clone(), format!("cannot use this override: {}", e.why))
        .help("fix or delete it; the embedded copy is used only when no override exists")
}

fn one(d: Diagnostic) -> Diagnostics {
    Diagnostics(vec![d])
}

struct StageCtx<'a> {
    file: &'a str,
    spec: &'a PipelineSpec,
    stage: &'a StageSpec,
    upstream: &'a BTreeSet<String>,
    params: &'a Value,
    env: &'a Environment<'static>,
}

/// What names a template at some place may read.
#[derive(Clone, Copy)]
struct RefCtx<'a> {
    file: &'a str,
    source: &'a spec::SourceMap,
    inputs: &'a BTreeMap<String, InputSpec>,
    params: &'a Value,
    upstream: &'a BTreeSet<String>,
    locals: &'a [String],
    stage: Option<&'a str>,
    all_stages: &'a BTreeSet<String>,
    broken: &'a [String],
}

/// Compile a templated value and check every name it reads.
fn compile_value(env: &Environment<'static>, v: &Value, path: &str, rc: &RefCtx, errors: &mut Diagnostics) -> Tmpl {
    let mut syntax = vec![];
    let t = Tmpl::compile(env, v, &mut syntax);
    let pos_of = |sub: &str| {
        let full = if sub.is_empty() {
            path.to_owned()
        } else {
            format!("{path}.{sub}")
        };
        rc.source.value(&full)
    };
    for e in syntax {
        errors.push(Diagnostic::new(
            rc.file,
            pos_of(&e.path),
            format!("template syntax error: {}", e.message),
        ));
    }
    for (reference, sub) in t.references(env) {
        let mut segs = reference.split('.');
        let root = segs.next().unwrap_or_default();
        let second = segs.next();
        let at = pos_of(&sub);
        let here = rc
            .stage
            .map(|s| format!("stage `{s}`"))
            .unwrap_or_else(|| "`output`".into());
        if root == "inputs" {
            if let Some(name) = second {
                if !rc.inputs.contains_key(name) {
                    errors.push(
                        Diagnostic::new(
                            rc.file,
                            at,
                            format!("{here} reads `inputs.{name}`, which is not declared under `inputs:`"),
                        )
                        .suggest(name, rc.inputs.keys().map(String::as_str)),
                    );
                }
            }
        } else if root == "params" {
            let key: Vec<&str> = reference.split('.').skip(1).collect();
            if !key.is_empty() && params::get_path(rc.params, &key.join(".")).is_none() && !under_leaf(rc.params, &key)
            {
                let mut leaves = vec![];
                params::flatten(rc.params, "", &mut leaves);
                errors.push(
                    Diagnostic::new(
                        rc.file,
                        at,
                        format!(
                            "{here} reads `params.{}`, which is not declared under `params:`",
                            key.join(".")
                        ),
                    )
                    .suggest(&key.join("."), leaves.iter().map(String::as_str)),
                );
            }
        } else if rc.upstream.contains(root) || rc.locals.iter().any(|l| l == root) || TEMPLATE_GLOBALS.contains(&root)
        {
            // fine
        } else if rc.broken.iter().any(|b| spec::ident(b) == root) {
            // Already reported where that stage is defined.
        } else if rc.all_stages.contains(root) {
            errors.push(
                Diagnostic::new(
                    rc.file,
                    at,
                    format!("{here} reads stage `{root}`, which is not upstream of it"),
                )
                .help(format!("add `{root}` (or a stage after it) to `needs:`")),
            );
        } else {
            let mut known: Vec<&str> = vec!["inputs", "params"];
            known.extend(rc.upstream.iter().map(String::as_str));
            known.extend(rc.locals.iter().map(String::as_str));
            errors.push(
                Diagnostic::new(rc.file, at, format!("{here} reads unknown name `{root}`"))
                    .suggest(root, known.iter().copied())
                    .help_once(format!("in scope here: {}", known.join(", "))),
            );
        }
    }
    t
}

/// `params.some_list.0` or a field of a non-map param is not checkable; accept it.
fn under_leaf(params: &Value, key: &[&str]) -> bool {
    let mut v = params;
    for seg in key {
        match v.as_object().and_then(|m| m.get(*seg)) {
            Some(next) => v = next,
            None => return !v.is_object(),
        }
    }
    true
}
