//! Whether messages and progress bars use colour: `--color` decides, and
//! `auto` means a terminal on stderr and no `NO_COLOR`.

use std::io::IsTerminal;
use std::sync::OnceLock;

use crate::cli::ColorChoice;

static ENABLED: OnceLock<bool> = OnceLock::new();

/// Decide once, at start-up.
pub fn init(choice: ColorChoice) {
    let on = match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal(),
    };
    let _ = ENABLED.set(on);
}

/// Colour on? (`auto` when [`init`] was never called.)
pub fn enabled() -> bool {
    *ENABLED.get_or_init(|| std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal())
}
