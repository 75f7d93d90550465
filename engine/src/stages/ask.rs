//! `ask:` — a choice. An answer given by flags wins; then the runtime's
//! asker (the person at the terminal, an MCP client's user) is asked;
//! otherwise the safe `default` is taken (null if none).

use serde_json::Value;

use super::{Flow, StageFailure};
use crate::template::Scope;

use super::StageCx;
use crate::compile::ActionSite;
use crate::spec::AskSpec;
use crate::template::Tmpl;

/// `ask:` — a choice, from the caller or a person at a terminal.
pub struct AskStage {
    pub prompt: Tmpl,
    pub choices: Tmpl,
    pub answer: Option<Tmpl>,
    pub default: Option<Tmpl>,
}

pub(super) fn compile(a: &AskSpec, site: &mut ActionSite) -> AskStage {
    AskStage {
        prompt: site.value(&a.prompt, "ask.prompt"),
        choices: site.value(&a.choices, "ask.choices"),
        answer: a.answer.as_ref().map(|v| site.value(v, "ask.answer")),
        default: a.default.as_ref().map(|v| site.value(v, "ask.default")),
    }
}

pub async fn run(cx: &StageCx<'_>, scope: &Scope, ask: &AskStage) -> Result<Flow, StageFailure> {
    let AskStage {
        prompt,
        choices,
        answer,
        default,
    } = ask;
    let choices = cx.eval(choices, scope)?;
    let list = choices.as_array().cloned().unwrap_or_default();
    if let Some(a) = answer {
        let given = cx.eval(a, scope)?;
        if !given.is_null() {
            return pick(&list, &given).map(Flow::Value);
        }
    }
    let default = match default {
        Some(d) => cx.eval(d, scope)?,
        None => Value::Null,
    };
    let prompt = || -> Result<String, StageFailure> {
        Ok(match cx.eval(prompt, scope)? {
            Value::String(s) => s,
            other => other.to_string(),
        })
    };
    let Some(asker) = &cx.rt.asker else {
        return Ok(Flow::Value(default));
    };
    match asker.ask(&prompt()?, &list).await? {
        Some(answer) => pick(&list, &answer).map(Flow::Value),
        None => Ok(Flow::Value(default)),
    }
}

/// An answer is a 0-based number into `choices`, or a choice itself.
fn pick(choices: &[Value], given: &Value) -> Result<Value, StageFailure> {
    let as_index = given
        .as_u64()
        .or_else(|| given.as_str().and_then(|s| s.trim().parse().ok()));
    if let Some(i) = as_index {
        return choices
            .get(i as usize)
            .cloned()
            .ok_or_else(|| format!("answer {i} is out of range (0..{})", choices.len().saturating_sub(1)).into());
    }
    if choices.is_empty() || choices.contains(given) {
        return Ok(given.clone());
    }
    Err(format!("answer {given} is not one of the choices").into())
}
