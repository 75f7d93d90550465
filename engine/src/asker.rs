//! Who answers an `ask` stage when there is no terminal: an MCP client's
//! user through elicitation, for example. The engine only asks; the product
//! decides how the question reaches a person.

use futures::future::BoxFuture;
use serde_json::Value;

/// Someone who can answer a choice while the run waits.
pub trait Asker: Send + Sync {
    /// Ask `prompt` with `choices`. `Ok(None)`: the person declined, so the
    /// stage takes its safe `default`.
    fn ask<'a>(&'a self, prompt: &'a str, choices: &'a [Value]) -> BoxFuture<'a, Result<Option<Value>, String>>;
}
