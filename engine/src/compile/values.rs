//! Templated values: compiled once, every name they read checked against
//! the inputs, params, upstream stages and loop variables in scope.

use std::collections::{BTreeMap, BTreeSet};

use minijinja::Environment;
use serde_json::Value;

use super::params;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::spec::{self, InputSpec};
use crate::template::Tmpl;

/// Template globals and loop helpers that are never undeclared references.
pub(super) const TEMPLATE_GLOBALS: &[&str] = &[
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

/// What names a template at some place may read.
#[derive(Clone, Copy)]
pub(super) struct RefCtx<'a> {
    pub(super) file: &'a str,
    pub(super) source: &'a crate::diagnostic::SourceMap,
    pub(super) inputs: &'a BTreeMap<String, InputSpec>,
    pub(super) params: &'a Value,
    pub(super) upstream: &'a BTreeSet<String>,
    pub(super) locals: &'a [String],
    pub(super) stage: Option<&'a str>,
    pub(super) all_stages: &'a BTreeSet<String>,
    pub(super) broken: &'a [String],
}

/// Compile a templated value and check every name it reads.
pub(super) fn compile_value(
    env: &Environment<'static>,
    v: &Value,
    path: &str,
    rc: &RefCtx,
    errors: &mut Diagnostics,
) -> Tmpl {
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
        let at = || pos_of(&sub);
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
                            at(),
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
                        at(),
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
                    at(),
                    format!("{here} reads stage `{root}`, which is not upstream of it"),
                )
                .help(format!("add `{root}` (or a stage after it) to `needs:`")),
            );
        } else {
            let mut known: Vec<&str> = vec!["inputs", "params"];
            known.extend(rc.upstream.iter().map(String::as_str));
            known.extend(rc.locals.iter().map(String::as_str));
            errors.push(
                Diagnostic::new(rc.file, at(), format!("{here} reads unknown name `{root}`"))
                    .suggest(root, known.iter().copied())
                    .help_if_none(format!("in scope here: {}", known.join(", "))),
            );
        }
    }
    t
}

/// `params.some_list.0` or a field of a non-map param is not checkable; accept it.
pub(super) fn under_leaf(params: &Value, key: &[&str]) -> bool {
    let mut v = params;
    for seg in key {
        match v.as_object().and_then(|m| m.get(*seg)) {
            Some(next) => v = next,
            None => return !v.is_object(),
        }
    }
    true
}
