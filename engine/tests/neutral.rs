//! The engine is generic: its non-test sources name no product. The product
//! injects its name and where its settings live ([`engine::Product`]), so a
//! name or settings path written into the engine's code is a leak. Test
//! code may name anything ([`test_support::sources`] says what that is).

use std::path::Path;

use test_support::sources::non_test_sources;

/// What the engine's sources must not hold: the product's name and the
/// folder its settings live in.
const FORBIDDEN: &[&str] = &["unity-assets", ".claude/"];

#[test]
fn the_engine_sources_name_no_product() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let sources = non_test_sources(&src);
    assert!(
        sources.len() > 20,
        "found only {} sources under {}",
        sources.len(),
        src.display()
    );

    let mut leaks = vec![];
    for source in &sources {
        for (number, line) in &source.lines {
            for word in FORBIDDEN {
                if line.contains(word) {
                    let shown = source
                        .path
                        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
                        .unwrap_or(&source.path);
                    leaks.push(format!("{}:{number}: `{word}`: {}", shown.display(), line.trim()));
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
