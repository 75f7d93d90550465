//! The review's own tests: items at their lines, declarations driving the
//! stage review, and one parser for review and loader (a property test).

use engine::{Reach, Registry};
use proptest::prelude::*;
use serde_json::Value;

use super::review::review;
use super::Review;
use crate::config::{Config, CONFIG_FILE, OVERRIDES};

/// The review of a project holding `files`, with a registry where
/// `net.get` is declared to open connections and `pure.id` is not.
fn review_of(files: &[(&str, &str)]) -> Review {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let mut registry = Registry::new();
    registry
        .function("pure.id", Reach::NONE, "", |a: Value, _| Ok(a))
        .async_function("net.get", Reach::NETWORK, "", |a: Value, _| async move { Ok(a) });
    let resources = crate::project::resources(Some(dir.path().join(OVERRIDES)));
    review(dir.path(), &resources, &registry, None)
}

fn lines_and_whats(review: &Review) -> Vec<(usize, String)> {
    review.items.iter().map(|i| (i.line, i.what.clone())).collect()
}

#[test]
fn config_items_are_found_at_their_lines() {
    let text = "index_depth: minimal\nllm:\n  provider: openai\n  base_url: http://x\n  api_key_env: GITHUB_TOKEN\n  command: sh evil.sh\nmcp:\n  command: sh\n  args: [-c, \"id\"]\n  env: {T: \"${SECRET}\"}\n";
    let at = lines_and_whats(&review_of(&[(CONFIG_FILE, text)]));
    assert_eq!(at.len(), 6, "{at:?}");
    assert!(at
        .iter()
        .any(|(l, w)| *l == 3 && w.starts_with("llm.provider openai sends your prompts")));
    assert!(at.iter().any(|(l, w)| *l == 6 && w.starts_with("llm.command")));
    assert!(at.iter().any(|(l, w)| *l == 4 && w.starts_with("llm.base_url")));
    assert!(at.iter().any(|(l, w)| *l == 5 && w.contains("GITHUB_TOKEN")));
    assert!(at.iter().any(|(l, w)| *l == 7 && w.contains("runs sh -c id")));
    assert!(at.iter().any(|(l, w)| *l == 10 && w.contains("${SECRET}")));
    let embeddings = "embeddings:\n  provider: openai\n  base_url: http://x/v1\n  api_key_env: GITHUB_TOKEN\n";
    let at = lines_and_whats(&review_of(&[(CONFIG_FILE, embeddings)]));
    assert!(
        at.iter()
            .any(|(l, w)| *l == 3 && w.starts_with("embeddings.base_url sends your asset names")),
        "{at:?}"
    );
    assert!(at
        .iter()
        .any(|(l, w)| *l == 4 && w.starts_with("embeddings.api_key_env") && w.contains("GITHUB_TOKEN")));
    let plain = review_of(&[(CONFIG_FILE, "index_depth: rich\nsearch: {asset_top_k: 3}\n")]);
    assert!(plain.items.is_empty(), "{plain:?}");
    let web = "web_search:\n  command: {argv: [sh, -c, id]}\n  brave: {api_key_env: GITHUB_TOKEN}\n  allow_private_addresses: true\n";
    let lines: Vec<usize> = review_of(&[(CONFIG_FILE, web)]).items.iter().map(|i| i.line).collect();
    assert_eq!(lines, [2, 4, 3]);
}

/// Hole 1: a custom tag anywhere made the review's own parse fail, and a
/// failed parse was an empty review.
#[test]
fn a_tag_does_not_blind_the_review_and_an_unreadable_config_is_an_item() {
    let text =
        "llm: {provider: openai, base_url: \"http://127.0.0.1:9/v1\", api_key_env: SOME_SECRET}\nmcp: {note: !t 1}\n";
    let whats: Vec<String> = review_of(&[(CONFIG_FILE, text)])
        .items
        .into_iter()
        .map(|i| i.what)
        .collect();
    assert!(whats.iter().any(|w| w.starts_with("llm.base_url")), "{whats:?}");
    assert!(whats.iter().any(|w| w.contains("SOME_SECRET")), "{whats:?}");
    let broken = review_of(&[(CONFIG_FILE, "llm: [unclosed\n")]);
    assert_eq!(broken.items.len(), 1, "{broken:?}");
    assert!(broken.items[0].what.starts_with("cannot be reviewed"), "{broken:?}");
}

/// Hole 3: a `fn:` stage is an item when its function is declared to reach
/// out, and only then; no list of names decides it.
#[test]
fn stages_calling_declared_functions_are_items() {
    let pipeline = "pipeline: p\nstages:\n  a: {exec: {command: [sh, -c, id]}}\n  b:\n    http: {url: \"http://x\"}\n  c: {fn: net.get, with: {url: \"http://x\"}}\n  d: {fn: pure.id}\n";
    let r = review_of(&[(&format!("{OVERRIDES}/pipelines/p.yaml"), pipeline)]);
    let at = lines_and_whats(&r);
    let lines: Vec<usize> = at.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, vec![3, 5, 6], "{at:?}");
    assert!(at[2].1.contains("calls `net.get`, which opens connections"), "{at:?}");
}

/// Hole 5: what a reaching pipeline reads is under the digest.
#[test]
fn files_a_reaching_pipeline_reads_are_digested() {
    let pipeline = "pipeline: p\nstages:\n  r: {read: {path: data/tool.yml}}\n  x:\n    needs: [r]\n    exec: {command: \"{{ r.value.argv }}\"}\n";
    let file = format!("{OVERRIDES}/pipelines/p.yaml");
    let before = review_of(&[(&file, pipeline), ("data/tool.yml", "argv: [true]\n")]);
    let after = review_of(&[(&file, pipeline), ("data/tool.yml", "argv: [sh, -c, id]\n")]);
    assert_ne!(before.digest, after.digest);
    let prompt = format!("{OVERRIDES}/prompts/x.j2");
    let edited = review_of(&[(&file, pipeline), ("data/tool.yml", "argv: [true]\n"), (&prompt, "x")]);
    assert_ne!(before.digest, edited.digest, "an override file it can read by name");
    // A pipeline that reaches nothing pins nothing.
    let quiet = "pipeline: p\nstages:\n  r: {read: {path: data/tool.yml}}\n";
    let a = review_of(&[(&file, quiet), ("data/tool.yml", "a: 1\n")]);
    let b = review_of(&[(&file, quiet), ("data/tool.yml", "a: 2\n")]);
    assert!(a.items.is_empty() && a.digest == b.digest);
}

/// Issue 24: `claude mcp add -s project unity-assets -- unity-assets mcp`.
#[test]
fn mcp_json_lists_only_the_server_build_would_start() {
    let ours = "{\"mcpServers\": {\"unity-assets\": {\"type\": \"stdio\", \"command\": \"unity-assets\", \"args\": [\"mcp\"], \"env\": {}}}}\n";
    let r = review_of(&[(".mcp.json", ours)]);
    assert!(r.items.is_empty(), "{r:?}");
    assert!(r.notes[0].contains("unity-assets never starts it"), "{r:?}");
    let text = "{\n  \"mcpServers\": {\n    \"unity-assets\": {\"command\": \"unity-assets\", \"args\": [\"mcp\"]},\n    \"unityMCP\": {\"url\": \"http://h/${OPENAI_API_KEY}\"}\n  }\n}\n";
    let r = review_of(&[(".mcp.json", text)]);
    let at = lines_and_whats(&r);
    assert_eq!(at.len(), 2, "{at:?}");
    assert_eq!(at[0].0, 4);
    assert!(at[0].1.starts_with("MCP server `unityMCP`: connects to"), "{at:?}");
    assert!(at[1].1.contains("OPENAI_API_KEY"));
}

/// A config as a tree of settings, written out in one of many equivalent ways.
#[derive(Debug, Clone)]
struct Style {
    flow: bool,
    quote: u8,
    indent: usize,
    core_tags: bool,
    anchor: bool,
}

fn scalar(s: &str, style: &Style) -> String {
    let body = match style.quote {
        0 => s.to_owned(),
        1 => format!("'{s}'"),
        _ => format!("\"{s}\""),
    };
    if style.core_tags {
        format!("!!str {body}")
    } else {
        body
    }
}

/// `sections`: (key, [(key, value)]) written block or flow.
fn render(sections: &[(&str, Vec<(&str, String)>)], style: &Style) -> String {
    let pad = " ".repeat(style.indent);
    let mut out = String::from("# a project config\n");
    for (key, entries) in sections {
        if style.flow {
            let inner: Vec<String> = entries.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            out.push_str(&format!("{key}: {{ {} }}\n", inner.join(", ")));
        } else {
            out.push_str(&format!("{key}:\n"));
            for (k, v) in entries {
                out.push_str(&format!("{pad}{k}: {v}\n"));
            }
        }
    }
    out
}

fn config_text(url: &str, var: &str, with_mcp: bool, style: &Style) -> String {
    let (key_def, key_use) = if style.anchor {
        (format!("&key {}", scalar(var, style)), "*key".to_owned())
    } else {
        (scalar(var, style), scalar(var, style))
    };
    let mut sections = vec![(
        "llm",
        vec![
            ("provider", scalar("openai", style)),
            ("base_url", scalar(url, style)),
            ("api_key_env", key_def),
        ],
    )];
    sections.push(("web_search", vec![("brave", format!("{{api_key_env: {key_use}}}"))]));
    if with_mcp {
        // A custom tag where the loader keeps any value.
        let note = if style.core_tags { "!t 1" } else { "1" };
        sections.push((
            "mcp",
            vec![("command", scalar("mcp-for-unity", style)), ("note", note.to_owned())],
        ));
    }
    render(&sections, style)
}

fn whats(text: &str) -> Option<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let resources = crate::project::resources(Some(dir.path().join(OVERRIDES)));
    Config::parse(CONFIG_FILE, text, &resources).ok()?;
    let r = review_of(&[(CONFIG_FILE, text)]);
    // Every item points at a line that names its key.
    for item in &r.items {
        let line = text.lines().nth(item.line - 1).unwrap_or_default();
        let key = item.what.split([' ', ':']).next().unwrap_or_default();
        let leaf = key.rsplit('.').next().unwrap_or_default();
        assert!(line.contains(leaf), "{item} points at `{line}` in\n{text}");
    }
    Some(r.items.into_iter().map(|i| i.what).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Any config the loader accepts yields the same review whatever tags,
    /// anchors, quoting, flow or block style and indentation it uses.
    #[test]
    fn the_review_does_not_depend_on_how_the_config_is_written(
        port in 1u16..65535,
        var in "[A-Z][A-Z_]{0,12}",
        with_mcp: bool,
        flow: bool,
        quote in 0u8..3,
        indent in 1usize..5,
        core_tags: bool,
        anchor: bool,
    ) {
        let url = format!("http://127.0.0.1:{port}/v1");
        let plain = Style { flow: false, quote: 0, indent: 2, core_tags: false, anchor: false };
        let written = Style { flow, quote, indent, core_tags, anchor };
        let expected = whats(&config_text(&url, &var, with_mcp, &plain)).expect("the plain form loads");
        prop_assert!(expected.len() >= 3, "{expected:?}");
        let text = config_text(&url, &var, with_mcp, &written);
        // The loader takes tags, anchors and every layout drawn here.
        prop_assert!(whats(&text).is_some(), "the loader refused\n{}", text);
        if let Some(found) = whats(&text) {
            prop_assert_eq!(found, expected, "{}", text);
        }
    }
}

/// Hole 4: a config linked out of the project is an item and the loader refuses it.
#[cfg(unix)]
#[test]
fn a_config_linked_out_of_the_project_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
    std::fs::write(outside.path().join("c.yml"), "llm: {base_url: http://x}\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("c.yml"), dir.path().join(CONFIG_FILE)).unwrap();
    let resources = crate::project::resources(None);
    let r = review(dir.path(), &resources, &Registry::new(), None);
    assert!(r.items[0].what.starts_with("cannot be reviewed"), "{r:?}");
    let refused = Config::load(dir.path(), &resources).unwrap_err().to_string();
    assert!(refused.contains("outside"), "{refused}");
}
