//! What the encoder's test files share.

use std::path::Path;

/// The texts of `parity_texts.txt`, one a line.
pub fn texts() -> Vec<String> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/parity_texts.txt");
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}
