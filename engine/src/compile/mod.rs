//! spec → checked DAG: resolve references, params, templates and schemas.
//! This file drives it (names, files, the pipeline as a whole); one module
//! per part: [`stage`] (what every stage shares; each kind compiles its own
//! action in `stages`), [`values`] (templated values and their references),
//! [`gate`] and [`prompt`] (the files a stage names), [`pipeline`] (the result).
//!
//! Compiling never stops at the first problem: every error in the pipeline
//! (and in the prompts, schemas and sub-pipelines it uses) is collected with
//! its `file:line:col`, so one `validate` shows everything to fix.

mod describe;
mod gate;
mod graph;
pub mod params;
mod pipeline;
mod prompt;
mod stage;
mod values;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use params::{ConfigLayer, ParamLayers, ParamSource, ResolvedParam, WrittenAt};
pub use pipeline::{Gate, InputError, Pipeline, Recovery, Stage, StageModifier};
pub(crate) use stage::ActionSite;

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::io::Limits;
use crate::registry::Registry;
use crate::resources::Resources;
use crate::spec::{self, PipelineSpec};
use crate::template;
use stage::StageSite;
use values::{compile_value, RefCtx};

/// Compiles pipelines by name, sharing sub-pipelines and schemas.
pub struct Compiler<'a> {
    resources: &'a Resources,
    registry: &'a Registry,
    layers: &'a ParamLayers,
    /// With the offline provider every `llm` stage must name a `builtin`.
    builtin_provider: bool,
    /// The run's limits: a pipeline file read from disk is one file.
    limits: Limits,
    /// Where those limits are raised, in the messages of a file over them.
    product: crate::Product,
    pipelines: HashMap<String, Arc<Pipeline>>,
    gates: HashMap<String, Option<Gate>>,
    /// Names being compiled, to catch `run:` recursion.
    active: Vec<String>,
    /// Every param leaf of the pipelines compiled, for checking `--set`.
    param_leaves: BTreeSet<String>,
}

impl<'a> Compiler<'a> {
    /// A compiler over the product's files and natives; `builtin_provider`
    /// requires every `llm` stage to name its offline `builtin:` task.
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
            limits: Limits::default(),
            product: crate::Product::NEUTRAL,
            pipelines: HashMap::new(),
            gates: HashMap::new(),
            active: vec![],
            param_leaves: BTreeSet::new(),
        }
    }

    /// Read pipeline files from disk within `limits` (`limits.file_mb`)
    /// instead of the defaults.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Name `product`'s settings file where a pipeline file is over a limit.
    pub fn for_product(mut self, product: crate::Product) -> Self {
        self.product = product;
        self
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
            let text = crate::io::read_text_limited(path, self.limits.file_bytes, crate::io::FILE_KEY, &self.product)
                .map_err(|e| {
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
        at: Option<RunSite>,
    ) -> Result<Arc<Pipeline>, Diagnostics> {
        if let Some(p) = self.pipelines.get(name) {
            return Ok(Arc::clone(p));
        }
        if let Some(dir) = sibling_dir {
            let file = dir.join(format!("{name}.yaml"));
            let read =
                crate::io::read_text_if_present(&file, self.limits.file_bytes, crate::io::FILE_KEY, &self.product);
            let text = read.map_err(|e| {
                one(Diagnostic::about(
                    file.display().to_string(),
                    format!("cannot read pipeline file: {e}"),
                ))
            })?;
            if let Some(text) = text {
                let p = self.compile_text(&file.display().to_string(), &text, Some(dir.to_path_buf()), at)?;
                self.pipelines.insert(name.to_owned(), Arc::clone(&p));
                return Ok(p);
            }
        }
        let rel = format!("pipelines/{name}.yaml");
        let Some(res) = self.resources.get(&rel).map_err(|e| one(resource_error(e)))? else {
            let names = self.pipeline_names();
            let d = at.map_or_else(|| Diagnostic::about(name, String::new()), |at| at());
            let d = Diagnostic {
                message: format!("no pipeline named `{name}` (looked for {rel})"),
                ..d
            };
            return Err(one(d.suggest(name, names.iter().map(String::as_str))));
        };
        let p = self.compile_text(&res.origin, &res.text, None, at)?;
        self.pipelines.insert(name.to_owned(), Arc::clone(&p));
        Ok(p)
    }

    /// `from`: the `run:` reference that led here, where a recursion is reported.
    fn compile_text(
        &mut self,
        file: &str,
        text: &str,
        sibling_dir: Option<PathBuf>,
        from: Option<RunSite>,
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
                Some(at) => Diagnostic { message, ..at() },
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
        let (params, resolved_params) = self.layers.resolve(&spec.params, &file, src);
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
        env_prompts.set_fuel(Some(self.limits.template_fuel));
        let mut stages: Vec<Option<Stage>> = Vec::new();
        for (i, s) in spec.stages.iter().enumerate() {
            let ups: BTreeSet<String> = upstream[i].iter().map(|&j| spec::ident(&spec.stages[j].name)).collect();
            let ctx = StageSite {
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
        let output_reads = output
            .as_ref()
            .map(|t| {
                t.references(&env)
                    .into_iter()
                    .map(|(r, _)| r.split('.').next().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default();
        // Prompts were added to their own env; templates share the base syntax.
        drop(env);
        Ok(Pipeline {
            name: spec.name.clone(),
            summary: spec.summary.clone(),
            expose: spec.expose.clone(),
            mcp: spec.mcp.clone(),
            file,
            inputs: spec.inputs.clone(),
            params: Arc::new(params),
            resolved_params,
            output,
            output_reads,
            stages,
            env: Arc::new(env_prompts),
        })
    }
}

/// An override that exists but cannot be used, at its file.
impl Compiler<'_> {
    /// `<what> file `<folder>/<name>` not found`, with the closest file the
    /// folder holds (embedded or overridden) as the suggestion.
    fn not_found(&self, what: &str, folder: &str, name: &str, file: &str, at: (usize, usize)) -> Diagnostic {
        let prefix = format!("{folder}/");
        let known: Vec<String> = self
            .resources
            .list(folder)
            .into_iter()
            .filter_map(|p| p.strip_prefix(&prefix).map(str::to_owned))
            .collect();
        Diagnostic::new(file, at, format!("{what} file `{prefix}{name}` not found"))
            .suggest(name, known.iter().map(String::as_str))
    }
}

/// Where a `run:` stage names a sub-pipeline, as the diagnostic to fill
/// in; built only when there is something to report there.
type RunSite<'a> = &'a dyn Fn() -> Diagnostic;

pub(crate) fn resource_error(e: crate::resources::ResourceError) -> Diagnostic {
    Diagnostic::about(e.origin.clone(), format!("cannot use this override: {}", e.why))
        .help("fix or delete it; the embedded copy is used only when no override exists")
}

fn one(d: Diagnostic) -> Diagnostics {
    Diagnostics(vec![d])
}
