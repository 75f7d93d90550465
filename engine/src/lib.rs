//! A generic executor for declarative YAML pipelines.
//!
//! A pipeline travels **spec → compile → run**: [`spec`] is the serde model
//! of the YAML as written, [`compile`] resolves references, params, templates
//! and schemas into a checked DAG (collecting every error at once), and
//! [`run`] executes that DAG on tokio. Each stage kind lives in its own module
//! under [`stages`]. The engine knows nothing of any domain: products plug
//! native code in through the [`registry`].

pub mod compile;
pub mod diagnostic;
pub mod io;
pub mod llm;
pub mod mcp;
pub mod output;
pub mod registry;
pub mod render;
pub mod resources;
pub mod run;
pub mod spec;
pub mod stages;
pub mod template;

pub use output::Output;
pub use registry::{CallContext, Registry};
