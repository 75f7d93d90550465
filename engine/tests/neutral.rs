//! The engine is generic: its non-test sources name no product. The product
//! injects its name and where its settings live ([`engine::Product`]), so a
//! name or settings path written into the engine's code is a leak.
//!
//! Test code may name anything: a file's `#[cfg(test)] mod … { … }` block
//! (by convention the last item of the file), files declared as
//! `#[cfg(test)] mod name;` and files named `tests.rs` are skipped.

use std::fs;
use std::path::{Path, PathBuf};

/// What the engine's sources must not hold: the product's name and the
/// folder its settings live in.
const FORBIDDEN: &[&str] = &["unity-assets", ".claude/"];

#[test]
fn the_engine_sources_name_no_product() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![];
    rust_files(&src, &mut files);
    assert!(
        files.len() > 20,
        "found only {} sources under {}",
        files.len(),
        src.display()
    );
    let test_only = test_only_files(&files);

    let mut leaks = vec![];
    for file in &files {
        if file.file_name().is_some_and(|n| n == "tests.rs") || test_only.contains(file) {
            continue;
        }
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if opens_test_module(&lines, i) {
                break;
            }
            for word in FORBIDDEN {
                if line.contains(word) {
                    let shown = file.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(file);
                    leaks.push(format!("{}:{}: `{word}`: {}", shown.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "the engine's sources name the product (take it from `engine::Product` instead):\n{}",
        leaks.join("\n")
    );
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
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
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
