//! unity-assets: natural-language asset search and scene building for Unity
//! projects. Each command is a pipeline (`pipelines/*.yaml`) run by the
//! generic `engine`; this crate holds the CLI and the Unity domain functions
//! those pipelines call: [`index`], [`search`], [`semantic`] (search by
//! meaning), [`build`], [`eval`], `websearch`, `references` (what uses what).
//! ARCHITECTURE.md at the repository's root is the map of the workspace.
//!
//! # Layers
//!
//! Modules depend only on modules above them in this list
//! (`tests/layers.rs` holds it; test code may use anything):
//!
//! 1. `exit` (exit codes, a command's [`exit::Outcome`]), `stdout` (the
//!    [`outln!`] that survives a closed pipe), `color`, `user_dirs` (the
//!    user's config and cache folders), `runnable` (suggested commands that
//!    name the project), `usage` (what a run's model calls cost), `eval`
//!    (search quality on a labelled query set) — leaves.
//! 2. `progress` (the terminal's bars), `model` (where the sentence encoder
//!    of search by meaning is kept), `index` (a project's assets into its
//!    index folder).
//! 3. `cli` (the command line's grammar), `search` (the indexed assets by
//!    words).
//! 4. `semantic` (search by meaning), `references` (what uses what).
//! 5. `config` (the project's settings file), `build` (a scene from a
//!    request, through MCP for Unity).
//! 6. `websearch` (assets found on the web).
//! 7. `trust` (what in a project needs the user's trust, and whether it
//!    has it).
//! 8. `doctor` (the read-only checks of `unity-assets doctor`).
//! 9. `project` (a project opened: its settings, resources and every
//!    native function).
//! 10. `invocation` (one pipeline run, the same from the CLI and MCP).
//! 11. `commands` (one function per command), `mcp_server`.

#![warn(missing_docs)]

/// Who runs the engine: this application, and the settings file its
/// users raise a limit in. Every run, provider, MCP client and limited read
/// the engine does for this crate is given it.
pub const PRODUCT: engine::Product = engine::Product::new("unity-assets", config::CONFIG_FILE);

pub mod build;
pub mod cli;
pub mod color;
pub mod commands;
mod config;
pub mod doctor;
pub mod eval;
pub mod exit;
pub mod index;
pub mod invocation;
pub mod mcp_server;
mod model;
mod progress;
pub mod project;
mod references;
pub mod runnable;
pub mod search;
pub mod semantic;
pub mod stdout;
pub mod trust;
mod usage;
mod user_dirs;
mod websearch;
