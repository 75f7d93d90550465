//! A crate's Rust sources without their test code, for tests that hold a
//! rule over what the code itself names (the engine names no product, the
//! product's modules use only the layers below theirs).
//!
//! Test code may name anything: a file's `#[cfg(test)] mod … { … }` block
//! (by convention the last item of the file), files declared as
//! `#[cfg(test)] mod name;` and files named `tests.rs` are skipped.

use std::fs;
use std::path::{Path, PathBuf};

/// One source file's code outside its tests.
pub struct Source {
    pub path: PathBuf,
    /// Its lines before its test block, each with its 1-based number.
    pub lines: Vec<(usize, String)>,
}

/// Every `.rs` file under `src` that is not test code, sorted by path.
pub fn non_test_sources(src: &Path) -> Vec<Source> {
    let mut files = vec![];
    rust_files(src, &mut files);
    let test_only = test_only_files(&files);
    files
        .into_iter()
        .filter(|file| file.file_name().is_none_or(|n| n != "tests.rs") && !test_only.contains(file))
        .map(|path| {
            let text = read(&path);
            let lines: Vec<&str> = text.lines().collect();
            let end = (0..lines.len())
                .find(|&i| opens_test_module(&lines, i))
                .unwrap_or(lines.len());
            let lines = lines[..end]
                .iter()
                .enumerate()
                .map(|(i, line)| (i + 1, (*line).to_owned()))
                .collect();
            Source { path, lines }
        })
        .collect()
}

fn read(file: &Path) -> String {
    fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a folder entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Line `i` is `#[cfg(test)]` followed by an inline module (`mod tests {`):
/// the test block, the rest of the file.
fn opens_test_module(lines: &[&str], i: usize) -> bool {
    lines[i].trim() == "#[cfg(test)]"
        && lines
            .get(i + 1)
            .is_some_and(|next| next.trim_start().starts_with("mod ") && next.trim_end().ends_with('{'))
}

/// The files declared `#[cfg(test)] mod name;`: `name.rs` or `name/mod.rs`
/// beside the declaring file (`mod.rs` and `lib.rs` declare their own folder's).
fn test_only_files(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = vec![];
    for file in files {
        let text = read(file);
        let lines: Vec<&str> = text.lines().collect();
        let folder = match file.file_name().and_then(|n| n.to_str()) {
            Some("mod.rs" | "lib.rs") => file.parent().expect("a folder").to_path_buf(),
            _ => file.with_extension(""),
        };
        for pair in lines.windows(2) {
            let declared = pair[1]
                .trim()
                .strip_prefix("mod ")
                .and_then(|rest| rest.strip_suffix(';'));
            if let (true, Some(name)) = (pair[0].trim() == "#[cfg(test)]", declared) {
                out.push(folder.join(format!("{name}.rs")));
                out.push(folder.join(name).join("mod.rs"));
            }
        }
    }
    out
}
