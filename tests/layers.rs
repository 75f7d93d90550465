//! The product's map stays true: each top-level module uses only the
//! modules above it in the layer list of `src/lib.rs` (so no two of them
//! import each other), every module has its place in that list, and every
//! path ARCHITECTURE.md names is in the repository.
//!
//! A module uses another when its non-test code names `crate::other`;
//! test code may use anything ([`test_support::sources`] says what that is).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use test_support::sources::non_test_sources;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The modules `src/lib.rs` declares (`pub mod name;`).
fn declared_modules(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|line| line.strip_prefix("pub mod ").or_else(|| line.strip_prefix("mod ")))
        .filter_map(|rest| rest.strip_suffix(';'))
        .map(str::to_owned)
        .collect()
}

/// The `# Layers` list of `src/lib.rs`'s doc comment: each module named in
/// backticks (outside parentheses, which describe it) with its item's number.
fn layer_list(lib: &str) -> BTreeMap<String, usize> {
    let doc: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    let start = doc
        .iter()
        .position(|l| *l == "# Layers")
        .expect("src/lib.rs's doc comment has a `# Layers` section");
    let mut items: Vec<String> = vec![];
    for line in &doc[start + 1..] {
        let numbered = line.split_once(". ").filter(|(n, _)| n.parse::<usize>().is_ok());
        match (numbered, items.last_mut()) {
            (Some((number, text)), _) => {
                let expected = items.len() + 1;
                assert_eq!(
                    number,
                    expected.to_string(),
                    "src/lib.rs: layer {number} is out of order"
                );
                items.push(text.to_owned());
            }
            (None, Some(item)) if line.starts_with("   ") => {
                item.push(' ');
                item.push_str(line.trim());
            }
            (None, Some(_)) => break,
            (None, None) => continue,
        }
    }
    let mut layers = BTreeMap::new();
    for (index, item) in items.iter().enumerate() {
        let layer = index + 1;
        for module in named_outside_parentheses(item) {
            if let Some(before) = layers.insert(module.clone(), layer) {
                panic!("src/lib.rs: `{module}` is listed in layers {before} and {layer}");
            }
        }
    }
    layers
}

/// The `` `names` `` of `text` outside parentheses.
fn named_outside_parentheses(text: &str) -> Vec<String> {
    let mut names = vec![];
    let mut depth = 0usize;
    let mut name: Option<String> = None;
    for c in text.chars() {
        match (c, &mut name) {
            ('`', Some(n)) => {
                if depth == 0 {
                    names.push(std::mem::take(n));
                }
                name = None;
            }
            ('`', None) => name = Some(String::new()),
            (c, Some(n)) => n.push(c),
            ('(', None) => depth += 1,
            (')', None) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    names
}

/// The names `line` reaches through `crate::` (not `othercrate::`).
fn crate_paths(line: &str) -> Vec<&str> {
    line.match_indices("crate::")
        .filter(|(at, _)| {
            !line[..*at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
        .map(|(at, prefix)| {
            let rest = &line[at + prefix.len()..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

#[test]
fn each_module_uses_only_modules_above_it_in_the_layer_list() {
    let lib = read(&repo().join("src/lib.rs"));
    let modules = declared_modules(&lib);
    assert!(modules.len() > 20, "found only {} modules in src/lib.rs", modules.len());
    let layers = layer_list(&lib);
    let unlisted: Vec<&String> = modules.iter().filter(|m| !layers.contains_key(*m)).collect();
    assert!(
        unlisted.is_empty(),
        "src/lib.rs: these modules have no place in the layer list of its doc comment: {unlisted:?}"
    );
    let stale: Vec<&String> = layers.keys().filter(|m| !modules.contains(m)).collect();
    assert!(
        stale.is_empty(),
        "src/lib.rs: the layer list names modules it does not declare: {stale:?}"
    );

    let src = repo().join("src");
    let mut wrong = vec![];
    for source in non_test_sources(&src) {
        let relative = source.path.strip_prefix(&src).expect("under src/");
        let top = relative
            .components()
            .next()
            .expect("a path")
            .as_os_str()
            .to_string_lossy();
        let module = top.trim_end_matches(".rs");
        let Some(&layer) = layers.get(module) else {
            continue; // lib.rs and main.rs: the crate's roots, not a module
        };
        for (number, line) in &source.lines {
            for used in crate_paths(line) {
                if let Some(other) = layers.get(used).filter(|&&other| used != module && other >= layer) {
                    wrong.push(format!(
                        "src/{}:{number}: `{module}` (layer {layer}) uses `{used}` (layer {other}): {}",
                        relative.display(),
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "a module uses one that is not above it in src/lib.rs's layer list \
         (move the code to where it belongs, or correct the list):\n{}",
        wrong.join("\n")
    );
}

/// The spans of `markdown` in backticks that name a repository path (a
/// `/` or a file extension, no spaces, no `::`), without `#anchor` or `:line`.
fn backticked_paths(markdown: &str) -> Vec<String> {
    const EXTENSIONS: &[&str] = &[".rs", ".md", ".yaml", ".yml", ".json", ".toml"];
    let mut in_fence = false;
    let mut paths = vec![];
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_fence = !in_fence;
        }
        if in_fence {
            continue;
        }
        for span in line.split('`').skip(1).step_by(2) {
            if span.contains("::") || span.contains(char::is_whitespace) {
                continue;
            }
            let path = span.split(['#', ':']).next().unwrap_or(span);
            if path.contains('/') || EXTENSIONS.iter().any(|e| path.ends_with(e)) {
                paths.push(path.to_owned());
            }
        }
    }
    paths
}

#[test]
fn every_path_architecture_md_names_exists() {
    let page = read(&repo().join("ARCHITECTURE.md"));
    let paths = backticked_paths(&page);
    assert!(paths.len() > 10, "found only {} paths in ARCHITECTURE.md", paths.len());
    for path in paths {
        // `pipelines/*.yaml`: the folder before the pattern.
        let existing = path.split('*').next().unwrap_or(&path);
        assert!(
            repo().join(existing).exists(),
            "ARCHITECTURE.md names `{path}`, which is not in the repository"
        );
    }
}
