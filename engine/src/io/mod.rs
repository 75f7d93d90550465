//! File operations that never leave a half-written file behind.

mod append;
mod atomic;
pub mod confine;
mod limits;
mod records;
mod workdir;

pub use append::{append_line_locked, AppendError};
pub use atomic::{write_atomic, AtomicFile};
pub use confine::{
    confine, confine_for_write, open_limited, read_limited, read_row_lines, read_text_if_present, read_text_limited,
    refuse_protected, ConfineError, RowLines,
};
pub(crate) use limits::LINE_KEY;
pub use limits::{Limits, DATA_KEY, FILE_KEY, HTTP_KEY};
pub use records::{jsonl_records, read_records, BadRow, Format, Records};
pub use workdir::in_empty_folder;
