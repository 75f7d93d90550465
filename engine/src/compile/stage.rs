//! One stage: its action, modifier, gate and recovery compiled and checked
//! against what it may read.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use minijinja::Environment;
use serde_json::Value;

use super::values::{compile_value, RefCtx};
use super::{
    resource_error, AppendStage, AskStage, Compiler, ExecStage, ExitStage, FnStage, HttpStage, LlmStage, McpStage,
    ReadSource, ReadStage, Recovery, Stage, StageAction, StageModifier, WriteStage,
};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::spec::{self, Action, Fallback, Modifier, PipelineSpec, StageSpec};
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
        let env = ctx.env;
        let mut params_read = BTreeSet::new();
        let mut stages_read = BTreeSet::new();
        let mut c = |v: &Value, path: &str, rc: &RefCtx, errors: &mut Diagnostics| {
            let t = compile_value(env, v, &format!("{base}.{path}"), rc, errors);
            for (r, _) in t.references(env) {
                if let Some(p) = r.strip_prefix("params.") {
                    params_read.insert(p.to_owned());
                }
                let root = r.split('.').next().unwrap_or_default();
                if ctx.upstream.contains(root) && !rc.locals.iter().any(|l| l == root) {
                    stages_read.insert(root.to_owned());
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
            .and_then(|f| self.gate(f, ctx.file, || ctx.spec.source.value(&format!("{base}.output")), errors));
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
                let site = || Diagnostic::new(ctx.file, at("run"), String::new());
                match self.compile_named(name, sibling_dir, Some(&site)) {
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
                    .and_then(|f| self.gate(f, ctx.file, || at("read.schema"), errors));
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
            params_read: params_read.into_iter().collect(),
            reads: stages_read,
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
