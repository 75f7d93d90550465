//! `llm.prompt` — prompt templates from `prompts/`, loaded into the pipeline's
//! environment and checked for the names they read.

use minijinja::Environment;
use serde_json::Value;

use super::stage::StageSite;
use super::values::TEMPLATE_GLOBALS;
use super::{resource_error, Compiler};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::spec::StageSpec;

impl Compiler<'_> {
    /// Load a prompt template into the pipeline's env and check the names it reads.
    pub(super) fn prompt(
        &mut self,
        name: &str,
        s: &StageSpec,
        ctx: &StageSite,
        env: &mut Environment<'static>,
        errors: &mut Diagnostics,
    ) {
        let rel = format!("prompts/{name}");
        let at = || ctx.spec.source.value(&format!("stages.{}.llm.prompt", s.name));
        let found = match self.resources.get(&rel) {
            Ok(found) => found,
            Err(e) => {
                errors.push(resource_error(e));
                return;
            }
        };
        let Some(res) = found else {
            errors.push(self.not_found("prompt", "prompts", name, ctx.file, at()));
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
                    .help_if_none(format!(
                        "a prompt sees `inputs`, `params` and its stage's `with:` keys ({})",
                        with.keys().cloned().collect::<Vec<_>>().join(", ")
                    )),
                );
            }
        }
    }
}
