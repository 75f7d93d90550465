//! The pipeline file as written: a serde model of the YAML, unresolved.
//!
//! Parsing is tolerant in one way only: it collects *every* problem it can
//! find (unknown keys, wrong shapes, missing action) instead of stopping at
//! the first, each with `file:line:col` from the document's `SourceMap`.

mod kind;
mod model;
mod parse;

pub use kind::{ActionKind, ModifierKind};
pub use model::*;
pub(crate) use parse::json;
pub use parse::{ident, parse};

/// Keys every stage may carry.
pub const COMMON: &[&str] = &["needs", "when", "with", "output", "on_invalid", "on_locked", "summary"];
/// The types an input may declare (JSON Schema's, plus `any`).
pub const INPUT_TYPES: &[&str] = &["string", "boolean", "number", "integer", "array", "object", "any"];
/// Surfaces a pipeline can be offered on besides `run` (`expose: [mcp]`).
pub const SURFACES: &[&str] = &["mcp"];
