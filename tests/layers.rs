//! The crates' maps stay true: each top-level module uses only the modules
//! above it in the layer list of its crate's `lib.rs` (so no two of them
//! import each other; the engine names its few edges back up), every
//! module has its place in that list, and every path ARCHITECTURE.md names
//! is in the repository.
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
        .expect("lib.rs's doc comment has a `# Layers` section");
    let mut items: Vec<String> = vec![];
    for line in &doc[start + 1..] {
        let numbered = line.split_once(". ").filter(|(n, _)| n.parse::<usize>().is_ok());
        match (numbered, items.last_mut()) {
            (Some((number, text)), _) => {
                let expected = items.len() + 1;
                assert_eq!(number, expected.to_string(), "lib.rs: layer {number} is out of order");
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
                panic!("lib.rs: `{module}` is listed in layers {before} and {layer}");
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

/// The modules of the crate at `root` (its `src/`) that use a module not
/// above them in its `lib.rs`'s layer list, but for the edges `back`
/// (`(from, to)`) its doc names as the way pipelines and stages nest.
fn layer_violations(root: &Path, back: &[(&str, &str)]) -> Vec<String> {
    let src = root.join("src");
    let lib_path = src.join("lib.rs");
    let shown = |path: &Path| path.strip_prefix(repo()).unwrap_or(path).display().to_string();
    let lib = read(&lib_path);
    let modules = declared_modules(&lib);
    assert!(
        modules.len() > 15,
        "found only {} modules in {}",
        modules.len(),
        shown(&lib_path)
    );
    let layers = layer_list(&lib);
    let unlisted: Vec<&String> = modules.iter().filter(|m| !layers.contains_key(*m)).collect();
    assert!(
        unlisted.is_empty(),
        "{}: these modules have no place in the layer list of its doc comment: {unlisted:?}",
        shown(&lib_path)
    );
    let stale: Vec<&String> = layers.keys().filter(|m| !modules.contains(m)).collect();
    assert!(
        stale.is_empty(),
        "{}: the layer list names modules it does not declare: {stale:?}",
        shown(&lib_path)
    );

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
                let named_back = back.contains(&(module, used));
                if let Some(other) = layers
                    .get(used)
                    .filter(|&&other| used != module && other >= layer && !named_back)
                {
                    wrong.push(format!(
                        "{}:{number}: `{module}` (layer {layer}) uses `{used}` (layer {other}): {}",
                        shown(&source.path),
                        line.trim()
                    ));
                }
            }
        }
    }
    wrong
}

#[test]
fn each_module_uses_only_modules_above_it_in_the_layer_list() {
    let wrong = layer_violations(&repo(), &[]);
    assert!(
        wrong.is_empty(),
        "a module uses one that is not above it in src/lib.rs's layer list \
         (move the code to where it belongs, or correct the list):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn each_engine_module_uses_only_modules_above_it_but_where_pipelines_and_stages_nest() {
    // engine/src/lib.rs names these two: a compiled pipeline holds its
    // stages' actions, and a `run:` stage runs a pipeline.
    let nesting = [("compile", "stages"), ("stages", "run")];
    let wrong = layer_violations(&repo().join("engine"), &nesting);
    assert!(
        wrong.is_empty(),
        "an engine module uses one that is not above it in engine/src/lib.rs's layer list \
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
