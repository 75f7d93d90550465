//! A generic executor for declarative YAML pipelines.
//!
//! A pipeline travels **spec → compile → run**: `spec` is the serde model
//! of the YAML as written, `compile` resolves references, params, templates
//! and schemas into a checked DAG (collecting every error at once), and
//! [`run()`] executes that DAG on tokio. Each stage kind is one module under
//! `stages`: its compiled form, how it compiles and runs, and what the graph
//! shows of it. The engine knows nothing of any domain: products plug
//! native code in through the [`registry`], and name themselves with a
//! [`Product`] (their name, their settings file) that the engine's requests
//! and messages use, naming no product of their own. [`outline()`] says what
//! a pipeline file's stages do as written, for reviewing it before it runs.
//!
//! # Layers
//!
//! Modules depend only on modules above them in this list:
//!
//! 1. `args` (a native function's arguments), `cancel`, `diagnostic`,
//!    `digest`, `product` (who the engine runs for), `output`, `progress` —
//!    leaves.
//! 2. `io` (confined, atomic, limited file access).
//! 3. `asker` (a person's answer), `template`, `resources`, `render` (the
//!    graph drawn), `llm`, `mcp`.
//! 4. `registry` (native functions), `spec` (the YAML as written).
//! 5. `compile` (spec → checked pipeline: what every stage shares),
//!    `outline` (the stages as written, for review), `report`, `runtime`.
//! 6. `stages` (one module per stage kind, compiled and run).
//! 7. `run` (the executor).
//!
//! Edges point back up only where pipelines and stages nest: a compiled
//! pipeline holds its stages' actions, so `compile` names
//! `stages::StageAction` and has it compile each stage's action; and
//! `stages::sub_pipeline` (a `run:` stage) calls [`run()`].

#![warn(missing_docs)]

pub mod args;
mod asker;
mod cancel;
mod compile;
pub mod diagnostic;
pub mod digest;
pub mod io;
pub mod llm;
pub mod mcp;
mod outline;
pub mod output;
mod product;
mod progress;
pub mod registry;
pub mod render;
mod report;
pub mod resources;
mod run;
mod runtime;
// The YAML model, field for field: docs/pipeline-language.md documents each key.
mod spec;
mod stages;
pub mod template;

pub use asker::{Asker, Terminal};
pub use cancel::Cancel;
pub use compile::{Compiler, ConfigLayer, InputError, ParamLayers, ParamSource, Pipeline, ResolvedParam, WrittenAt};
pub use outline::{outline, Outline, StageOutline};
pub use output::{Output, Rewrite};
pub use product::Product;
pub use progress::{Progress, Tick};
pub use registry::{CallContext, Reach, Registry, RunHoldings};
pub use report::{ModelUsage, RunReport, RunStatus, StageReport, StageStatus};
pub use run::{run, Ending, RunOutcome};
pub use runtime::Runtime;
pub use spec::{ActionKind, InputSpec, McpTool, SessionUse};
pub use stages::{StageError, StageFailure};

/// Parse a pipeline file as written and return its problems: the raw
/// entry fuzz tests drive, below what [`outline()`] and [`Compiler`] show.
#[cfg(feature = "fuzzing")]
pub fn parse_spec_for_fuzzing(file: &str, text: &str) -> diagnostic::Diagnostics {
    spec::parse(file, text).1
}
