//! The decision, made in code before anything is sent, whether one MCP tool
//! call may go out.
//!
//! The engine only knows that some guard decides; which tools and actions a
//! product allows is the product's business (it registers a [`CallGuard`]).

use serde_json::Value;

/// What a guard decided for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The call may be sent.
    Allowed,
    /// The call must not be sent; the reason is for the user.
    Denied(String),
}

impl Verdict {
    /// True when the call may be sent.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Verdict::Allowed)
    }
}

/// A scope policy for MCP tool calls.
pub trait CallGuard: Send + Sync {
    /// Decide whether `tool` may be called with `args`.
    fn check(&self, tool: &str, args: &Value) -> Verdict;

    /// The action an audit line names for this call: by default the
    /// `action` argument that most multi-purpose tools take.
    fn action_of(&self, _tool: &str, args: &Value) -> Option<String> {
        args.get("action").and_then(Value::as_str).map(str::to_owned)
    }
}

/// Denies everything: the stand-in while a pipeline names an unknown guard
/// (such a pipeline never compiles, so it never runs).
pub(crate) struct DenyAll;

impl CallGuard for DenyAll {
    fn check(&self, _tool: &str, _args: &Value) -> Verdict {
        Verdict::Denied("no scope guard configured".into())
    }
}
