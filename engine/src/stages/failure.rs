//! Why a stage failed, with the source error kept, so a caller (or a
//! report) can tell a locked file from an MCP outage from a model error.

use crate::compile::InputError;
use crate::io::{AppendError, ConfineError};
use crate::llm::LlmError;
use crate::mcp::McpError;
use crate::registry::{BoxError, NativeError};

/// A stage failure, with everything a user needs to find it.
#[derive(Debug, thiserror::Error)]
#[error("stage `{stage}` of pipeline `{pipeline}` ({file}) failed: {cause}")]
pub struct StageError {
    /// The pipeline's name.
    pub pipeline: String,
    /// The pipeline's file.
    pub file: String,
    /// The stage that failed.
    pub stage: String,
    /// Why it failed, with its source error.
    #[source]
    pub cause: Box<StageFailure>,
}

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
    /// A `fn:` stage's native function failed.
    #[error("{0}")]
    Native(#[source] NativeError),
    /// An `llm` stage's `builtin:` failed (the offline provider's answer).
    #[error("builtin `{function}`: {0}", function = .0.function())]
    Builtin(#[source] NativeError),
    /// A path was refused: outside the run's folder, through a symlink, a device.
    #[error("{0}")]
    Path(#[source] ConfineError),
    /// Reading or writing a file, running a program or sending a request failed.
    #[error("{doing}: {source}")]
    Io {
        /// What the stage was doing, with the file, program or URL.
        doing: String,
        /// The error it met.
        source: BoxError,
    },
    /// A program or request ran past its `timeout_s`.
    #[error("{what} did not finish within {seconds}s")]
    TimedOut {
        /// The program or request.
        what: String,
        /// The timeout.
        seconds: u64,
    },
    /// One iteration of `for_each`, `map_reduce` or `repeat` failed.
    #[error("{at}: {source}")]
    Iteration {
        /// Which one: `item 3`, `chunk 0`, `iteration 2`.
        at: String,
        /// Why it failed.
        source: Box<StageFailure>,
    },
    /// A `run:` stage's inputs do not fit the sub-pipeline.
    #[error("{0}")]
    Inputs(#[source] InputError),
    /// A `run:` stage's sub-pipeline failed.
    #[error("{0}")]
    SubPipeline(#[source] Box<StageError>),
    /// A value of the wrong shape: a `with:` that is not a map, a list that is
    /// not a list, an answer that is not among the choices.
    #[error("{0}")]
    Invalid(String),
    /// The run was asked to stop ([`crate::Cancel`]) before or while this stage ran.
    #[error("the run was cancelled")]
    Cancelled,
}

impl StageFailure {
    /// An I/O failure while `doing` something.
    pub(crate) fn io(doing: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Self::Io {
            doing: doing.into(),
            source: source.into(),
        }
    }
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
