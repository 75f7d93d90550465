//! File operations that never leave a half-written file behind.

mod append;
mod atomic;
mod records;

pub use append::{append_line_locked, AppendError};
pub use atomic::{write_atomic, AtomicFile};
pub use records::{read_records, BadRow, Format, Records};
