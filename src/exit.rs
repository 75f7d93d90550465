//! Exit codes (also listed in the README and `--help`), and a command's
//! [`Outcome`]: its code and what it says on stderr.

/// The run finished.
pub const OK: i32 = 0;
/// The run failed or refused: a stage failed, a stale index, a locked file, MCP unavailable.
pub const FAILED: i32 = 1;
/// Invalid input: command line, query, pipeline, template, schema or config.
pub(crate) const INVALID: i32 = 2;
/// The project holds items that need trust (`unity-assets trust`); nothing ran.
pub const UNTRUSTED: i32 = 3;
/// A build group needs a confirmation and nobody can answer it here (no
/// terminal, no `--yes` or `--choose`); nothing was sent (`needs_confirmation`,
/// set by `pipelines/build.yaml`).
pub const NEEDS_CONFIRMATION: i32 = 4;
/// Interrupted by Ctrl+C; files being written were left untouched.
pub(crate) const INTERRUPTED: i32 = 130;

/// A command's end: an exit code, and a message for stderr if any.
pub struct Outcome {
    /// The process's exit code (one of the constants above).
    pub code: i32,
    /// What to print on stderr, if anything.
    pub message: Option<String>,
}

impl Outcome {
    /// The run finished, with nothing to say.
    pub fn ok() -> Self {
        Self {
            code: OK,
            message: None,
        }
    }
    /// Invalid input (`INVALID`), saying what is wrong.
    pub fn invalid(message: impl ToString) -> Self {
        Self {
            code: INVALID,
            message: Some(message.to_string()),
        }
    }
    /// The run failed ([`FAILED`]), saying why.
    pub fn failed(message: impl ToString) -> Self {
        Self {
            code: FAILED,
            message: Some(message.to_string()),
        }
    }
}
