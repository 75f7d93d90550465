//! Who answers an `ask` stage: a person at the terminal, or an MCP client's
//! user through elicitation. The engine only asks; the product decides how
//! the question reaches a person (no asker: the stage takes its default).

use std::io::{BufRead, Write};

use futures::future::BoxFuture;
use serde_json::Value;

use crate::output::Output;

/// Someone who can answer a choice while the run waits.
pub trait Asker: Send + Sync {
    /// Ask `prompt` with `choices`. `Ok(None)`: the person declined, so the
    /// stage takes its safe `default`.
    fn ask<'a>(&'a self, prompt: &'a str, choices: &'a [Value]) -> BoxFuture<'a, Result<Option<Value>, String>>;
}

/// The person at the terminal: the prompt goes to the run's output, the
/// answer is one line of stdin (empty: declined).
pub struct Terminal {
    output: Output,
}

impl Terminal {
    /// Prompts printed through `output`.
    pub fn new(output: Output) -> Self {
        Self { output }
    }
}

impl Asker for Terminal {
    fn ask<'a>(&'a self, prompt: &'a str, _choices: &'a [Value]) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            for l in prompt.trim_end().split('\n') {
                self.output.line(l);
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
            Ok((!line.is_empty()).then(|| Value::String(line.to_owned())))
        })
    }
}
