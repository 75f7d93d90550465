//! Helpers shared by the engine's integration tests and benches.

pub mod llm_server;
