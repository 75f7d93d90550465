//! One stage: what every kind shares (names, modifier, `when`, `with`,
//! gate and recovery) is compiled here; its action is compiled by its
//! kind's module in `stages`, through an [`ActionSite`].

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use minijinja::Environment;
use serde_json::Value;

use super::values::{compile_value, RefCtx};
use super::{Compiler, Gate, Pipeline, Recovery, Stage, StageModifier};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::registry::Registry;
use crate::resources::Resources;
use crate::spec::{self, Fallback, Modifier, PipelineSpec, StageSpec};
use crate::stages::StageAction;
use crate::template::Tmpl;

impl Compiler<'_> {
    pub(super) fn stage(
        &mut self,
        ctx: &StageSite,
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
                let key = s.modifier.as_ref().map(|m| m.kind().key()).unwrap_or_default();
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
        let mut values = Values {
            env: ctx.env,
            base: &base,
            upstream: ctx.upstream,
            params_read: BTreeSet::new(),
            stages_read: BTreeSet::new(),
        };
        let v = &mut values;

        let when = s
            .when
            .as_ref()
            .map(|w| (w.clone(), v.compile(&Value::String(w.clone()), "when", &outer, errors)));
        let with = s.with.as_ref().map(|w| v.compile(w, "with", &inner, errors));
        let gate = s
            .output
            .as_ref()
            .and_then(|f| self.gate(f, ctx.file, || value_at(ctx, &base, "output"), errors));
        let on_invalid = v.recovery(&s.on_invalid, "on_invalid", &inner, errors);
        let on_locked = v.recovery(&s.on_locked, "on_locked", &inner, errors);

        let modifier = s.modifier.as_ref().map(|m| match m {
            Modifier::ForEach(f) => StageModifier::ForEach {
                items: v.compile(&f.items, "for_each.items", &outer, errors),
                as_name: f.as_name.clone(),
                concurrency: v.compile(&f.concurrency, "for_each.concurrency", &outer, errors),
            },
            Modifier::MapReduce(m) => StageModifier::MapReduce {
                items: v.compile(&m.items, "map_reduce.items", &outer, errors),
                chunk_size: v.compile(&m.chunk_size, "map_reduce.chunk_size", &outer, errors),
                as_name: m.as_name.clone(),
                concurrency: v.compile(&m.concurrency, "map_reduce.concurrency", &outer, errors),
                top_k: m
                    .reduce
                    .top_k
                    .as_ref()
                    .map(|k| v.compile(k, "map_reduce.reduce.top_k", &outer, errors)),
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
                    over: r.over.as_ref().map(|o| v.compile(o, "repeat.over", &outer, errors)),
                    times: r.times,
                    as_name: r.as_name.clone(),
                    until: r
                        .until
                        .as_ref()
                        .map(|u| v.compile(&Value::String(u.clone()), "repeat.until", &until_ctx, errors)),
                }
            }
        });

        let action = StageAction::compile(
            &s.action,
            &mut ActionSite {
                compiler: self,
                site: ctx,
                values: v,
                scope: &inner,
                prompts,
                sibling_dir,
                errors,
            },
        )?;
        Some(Stage {
            name: s.name.clone(),
            ident: spec::ident(&s.name),
            needs,
            upstream: ctx.upstream.clone(),
            when,
            with,
            gate,
            on_invalid,
            on_locked,
            kind: super::pipeline::kind_name(&action, modifier.as_ref()),
            action,
            modifier,
            params_read: values.params_read.into_iter().collect(),
            reads: values.stages_read,
        })
    }
}

/// Where a stage is written and what it may read, while it is compiled.
pub(super) struct StageSite<'a> {
    pub(super) file: &'a str,
    pub(super) spec: &'a PipelineSpec,
    pub(super) stage: &'a StageSpec,
    pub(super) upstream: &'a BTreeSet<String>,
    pub(super) params: &'a Value,
    pub(super) env: &'a Environment<'static>,
}

/// Compiles a stage's templated values, noting the params and upstream
/// stages they read (for graphs, dry runs and the executor's reads).
struct Values<'a> {
    env: &'a Environment<'static>,
    /// `stages.<name>`, the path every key of the stage is under.
    base: &'a str,
    upstream: &'a BTreeSet<String>,
    params_read: BTreeSet<String>,
    stages_read: BTreeSet<String>,
}

impl Values<'_> {
    fn compile(&mut self, v: &Value, path: &str, rc: &RefCtx, errors: &mut Diagnostics) -> Tmpl {
        let t = compile_value(self.env, v, &format!("{}.{path}", self.base), rc, errors);
        for (r, _) in t.references(self.env) {
            if let Some(p) = r.strip_prefix("params.") {
                self.params_read.insert(p.to_owned());
            }
            let root = r.split('.').next().unwrap_or_default();
            if self.upstream.contains(root) && !rc.locals.iter().any(|l| l == root) {
                self.stages_read.insert(root.to_owned());
            }
        }
        t
    }

    /// `on_invalid` / `on_locked` (`key`): fail, or a fallback output.
    fn recovery(
        &mut self,
        fb: &Option<Fallback>,
        key: &str,
        rc: &RefCtx,
        errors: &mut Diagnostics,
    ) -> Option<Recovery> {
        fb.as_ref().map(|f| match f {
            Fallback::Fail(_) => Recovery::Fail,
            Fallback::Output { output } => Recovery::Output(self.compile(output, &format!("{key}.output"), rc, errors)),
        })
    }
}

/// What a kind's module in `stages` is given to compile its action: the
/// stage as written, its values compiled where the action sees them (loop
/// variables in scope), and the compiler's natives and files. Its errors
/// go where the rest of the pipeline's do, each at its `file:line:col`.
pub(crate) struct ActionSite<'a, 'v, 'c> {
    compiler: &'a mut Compiler<'c>,
    site: &'a StageSite<'v>,
    values: &'a mut Values<'v>,
    scope: &'a RefCtx<'v>,
    prompts: &'a mut Environment<'static>,
    sibling_dir: Option<&'a Path>,
    errors: &'a mut Diagnostics,
}

impl ActionSite<'_, '_, '_> {
    /// The stage as written.
    pub(crate) fn stage(&self) -> &StageSpec {
        self.site.stage
    }

    /// The natives, builtins and guards stages may name.
    pub(crate) fn registry(&self) -> &Registry {
        self.compiler.registry
    }

    /// The pipeline resources (`data/…`, `schemas/…`) with their overrides.
    pub(crate) fn resources(&self) -> &Resources {
        self.compiler.resources
    }

    /// Whether the offline builtin provider runs the `llm` stages.
    pub(crate) fn builtin_provider(&self) -> bool {
        self.compiler.builtin_provider
    }

    /// A templated value of the action at `path` (`read.path`), compiled.
    pub(crate) fn value(&mut self, v: &Value, path: &str) -> Tmpl {
        self.values.compile(v, path, self.scope, self.errors)
    }

    /// A problem at the stage's `key` (`llm.builtin`), to report with [`Self::push`].
    pub(crate) fn error(&self, key: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.site.file, self.at(key), message)
    }

    /// `no <what> named `<name>`` at the stage's `key`, suggesting the
    /// closest of the names `known`.
    pub(crate) fn unknown<'k>(
        &self,
        key: &str,
        what: &str,
        name: &str,
        known: impl IntoIterator<Item = &'k str>,
    ) -> Diagnostic {
        self.error(key, format!("no {what} named `{name}`"))
            .suggest(name, known)
    }

    /// Report a problem.
    pub(crate) fn push(&mut self, d: Diagnostic) {
        self.errors.push(d);
    }

    /// The schema file `name` as a gate; `key`: where the stage names it.
    pub(crate) fn gate(&mut self, name: &str, key: &str) -> Option<Gate> {
        let (site, base) = (self.site, self.values.base);
        let at = || value_at(site, base, key);
        self.compiler.gate(name, site.file, at, self.errors)
    }

    /// Load the prompt template `name` and check the names it reads.
    pub(crate) fn prompt(&mut self, name: &str) {
        self.compiler
            .prompt(name, self.site.stage, self.site, self.prompts, self.errors);
    }

    /// The pipeline a `run:` stage names, compiled (beside this file first).
    pub(crate) fn sub_pipeline(&mut self, name: &str) -> Option<Arc<Pipeline>> {
        let (site, base) = (self.site, self.values.base);
        let at = || Diagnostic::new(site.file, value_at(site, base, "run"), String::new());
        match self.compiler.compile_named(name, self.sibling_dir, Some(&at)) {
            Ok(p) => Some(p),
            Err(e) => {
                self.errors.extend(e);
                None
            }
        }
    }

    fn at(&self, key: &str) -> (usize, usize) {
        value_at(self.site, self.values.base, key)
    }
}

/// Where the value of the stage's `key` is written (`base`: `stages.<name>`).
fn value_at(site: &StageSite, base: &str, key: &str) -> (usize, usize) {
    site.spec.source.value(&format!("{base}.{key}"))
}
