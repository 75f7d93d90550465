//! Whether messages and progress bars use colour: `--color` decides, and
//! `auto` means a terminal on stderr and no `NO_COLOR`.

use std::io::IsTerminal;
use std::sync::OnceLock;

static ENABLED: OnceLock<bool> = OnceLock::new();

/// Decide once, at start-up: `forced` by `--color always|never`, else `auto`.
pub fn init(forced: Option<bool>) {
    let _ = ENABLED.set(forced.unwrap_or_else(auto));
}

/// Colour on? (`auto` when [`init`] was never called.)
pub fn enabled() -> bool {
    *ENABLED.get_or_init(auto)
}

fn auto() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
}
