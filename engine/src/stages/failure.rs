//! Why a stage failed, with the source error kept, so a caller (or a
//! report) can tell a locked file from an MCP outage from a model error.

use crate::io::AppendError;
use crate::llm::LlmError;
use crate::mcp::McpError;

/// A stage's failure.
#[derive(Debug, thiserror::Error)]
pub enum StageFailure {
    /// The model call failed after its retries (`context` names the model).
    #[error("{context} failed: {source}")]
    Model {
        /// `model `x` (provider)`.
        context: String,
        /// What the provider reported (boxed: the rare case stays small).
        source: Box<LlmError>,
    },
    /// A value failed its JSON Schema gate.
    #[error("{what} fails {file}: {}", errors.join("; "))]
    Gate {
        /// `output`, `row`, or the model's answer.
        what: String,
        /// The schema file.
        file: String,
        /// Each validation error, as `/pointer: message`.
        errors: Vec<String>,
    },
    /// `append`'s file is held by another writer.
    #[error("locked: {0}")]
    Locked(#[source] Box<AppendError>),
    /// The MCP server could not be started or reached.
    #[error("mcp_unavailable: {0}")]
    McpUnavailable(#[source] Box<McpError>),
    /// The MCP call itself failed.
    #[error("{0}")]
    Mcp(#[source] Box<McpError>),
    /// A template did not render or evaluate.
    #[error("{0}")]
    Template(String),
    /// A native function (`fn:` or an `llm` stage's `builtin:`) failed.
    #[error("{0}")]
    Native(String),
    /// Anything else: a value of the wrong shape, a path refused, an I/O error.
    #[error("{0}")]
    Invalid(String),
}

impl From<String> for StageFailure {
    fn from(message: String) -> Self {
        Self::Invalid(message)
    }
}

impl From<&str> for StageFailure {
    fn from(message: &str) -> Self {
        Self::Invalid(message.to_owned())
    }
}
