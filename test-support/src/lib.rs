//! Helpers shared by the workspace's integration tests and benches (a
//! dev-dependency of both crates; it depends on neither).
//!
//! - [`project`]: a generated Unity project (asset files and `.meta` files);
//! - [`large_project`]: a realistic large project (5k to 10^6 assets) for
//!   the scale bench and tests;
//! - [`cli`]: runs of the `unity-assets` binary and what they printed;
//! - [`checkout`]: a hostile checkout, untrusted, with stand-in programs;
//! - [`llm_server`]: one scripted HTTP server standing in for LLM vendors,
//!   web search APIs and web pages;
//! - [`fake_unity`]: a fake Unity editor behind the real MCP for Unity server;
//! - [`readme`]: the README's shell lines, and how a test skips a missing
//!   prerequisite;
//! - [`sources`]: a crate's Rust sources without their test code.

pub mod checkout;
pub mod cli;
pub mod fake_unity;
pub mod large_project;
pub mod llm_server;
pub mod project;
pub mod readme;
pub mod sources;
