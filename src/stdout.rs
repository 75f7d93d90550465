//! What commands print on stdout. `println!` panics when the reader has
//! gone (`unity-assets search --json | head`); [`outln!`](crate::outln) and
//! [`out!`](crate::out) drop the rest instead, as the engine's output lines
//! do, and the command ends as it would have.

use std::io::Write as _;

/// Write `args` to stdout. A closed pipe is not worth a panic or a failed
/// run; any other failure (a full disk under `> file`) is said on stderr.
pub fn write(args: std::fmt::Arguments) {
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("error: cannot write to stdout: {e}");
        }
    }
}

/// `println!` for a command's output: nothing happens once stdout's reader is gone.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::stdout::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` for a command's output: nothing happens once stdout's reader is gone.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!($($arg)*))
    };
}
