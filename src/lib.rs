//! unity-assets: natural-language asset search and scene building for Unity
//! projects. Each command is a pipeline (`pipelines/*.yaml`) run by the
//! generic `engine`; this crate holds the CLI and the Unity domain functions
//! those pipelines call: [`index`], [`search`], [`semantic`] (search by
//! meaning), [`build`], [`eval`], [`websearch`], [`references`] (what uses what).

/// Who runs the engine: this application, and the settings file its
/// users raise a limit in. Every run, provider, MCP client and limited read
/// the engine does for this crate is given it.
pub const PRODUCT: engine::Product = engine::Product::new("unity-assets", config::CONFIG_FILE);

pub mod build;
pub mod cli;
pub mod color;
pub mod commands;
pub mod config;
pub mod doctor;
pub mod eval;
pub mod exit;
pub mod index;
pub mod invocation;
pub mod mcp_server;
pub mod model;
pub mod progress;
pub mod project;
pub mod references;
pub mod runnable;
pub mod search;
pub mod semantic;
pub mod stdout;
pub mod trust;
pub mod usage;
pub mod user_dirs;
pub mod websearch;
