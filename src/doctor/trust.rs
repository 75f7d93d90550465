//! The project's trust: what in it may start programs or reach hosts, and
//! whether it is trusted (`unity-assets trust`).

use std::path::Path;

use super::Check;
use crate::trust::{Gate, Status};

/// Whether the run may use the project's items, and the trust line. An
/// untrusted project is reported, never refused: doctor leaves its items unused.
pub fn check(root: &Path, gate: &Gate) -> (bool, Check) {
    const NAME: &str = "trust";
    let review = &gate.review;
    let listed = || review.items.iter().map(|i| format!("\n    {i}")).collect::<String>();
    let fix = format!(
        "review the lines above, then `unity-assets --project {} trust`",
        root.display()
    );
    let check = match &gate.status {
        Status::NotNeeded => Check::pass(NAME, "nothing in the project needs trust"),
        Status::Trusted => Check::pass(NAME, format!("{} item(s) trusted:{}", review.items.len(), listed())),
        Status::TrustedForRun => Check::pass(
            NAME,
            format!(
                "{} item(s) trusted for this run (--trust):{}",
                review.items.len(),
                listed()
            ),
        ),
        Status::Untrusted { .. } => Check::fail(
            NAME,
            format!(
                "{} item(s) not trusted, so not used (no MCP server or provider program was started):{}",
                review.items.len(),
                listed()
            ),
            fix,
        ),
    };
    (gate.status.allows(), check.optional())
}
