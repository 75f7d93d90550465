//! `ask:` — a choice. An answer given by flags wins; then the runtime's
//! asker (an MCP client's user) or, on a terminal, the person is asked;
//! otherwise the safe `default` is taken (null if none).

use std::io::{BufRead, IsTerminal, Write};

use serde_json::Value;

use super::{Flow, StageFailure};
use crate::template::Scope;

use super::StageCx;
use crate::compile::AskStage;

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
    if let Some(asker) = &cx.rt.asker {
        return match asker.ask(&prompt()?, &list).await? {
            Some(answer) => pick(&list, &answer).map(Flow::Value),
            None => Ok(Flow::Value(default)),
        };
    }
    if !(cx.rt.interactive && std::io::stdin().is_terminal()) {
        return Ok(Flow::Value(default));
    }
    let prompt = prompt()?;
    for l in prompt.trim_end().split('\n') {
        cx.rt.output.line(l);
    }
    // Reading a line blocks; keep it off the async workers.
    let line = tokio::task::spawn_blocking(|| {
        print!("> ");
        let _ = std::io::stdout().flush();
        let mut s = String::new();
        std::io::stdin().lock().read_line(&mut s).map(|_| s)
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("cannot read the answer: {e}"))?;
    let line = line.trim();
    if line.is_empty() {
        return Ok(Flow::Value(default));
    }
    pick(&list, &Value::String(line.to_owned())).map(Flow::Value)
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
