//! `unused`: the assets nothing a player build starts from reaches.
//!
//! Roots ([`super::roots`]) are walked forward through the graph; what stays
//! unreached is unused — except what the graph cannot judge, which is
//! counted but never listed: scripts, assembly definitions and plugins
//! (code uses them without a reference in any asset), assets of editor-only
//! folders (never in a build), and assets of `Packages/` (not the
//! project's to delete).

use std::path::Path;

use engine::io::Limits;
use serde_json::json;

use super::roots::{self, Roots};
use super::walk::{by_type, count, reached_from};
use super::{AssetRef, Outcome};
use crate::index::graph::ReferenceGraph;

/// Readable lines list at most this many assets; `--json` has them all.
const SHOWN: usize = 100;

/// Types code uses by name, or that are code: never listed.
const CODE_TYPES: &[&str] = &["MonoScript", "AssemblyDefinition", "Plugin"];

/// Why an unreached asset is not listed, if it is not.
fn not_judged(path: &str, asset_type: &str) -> Option<&'static str> {
    if CODE_TYPES.contains(&asset_type) {
        Some("code")
    } else if roots::is_editor_only(path) {
        Some("editor")
    } else if !path.starts_with("Assets/") {
        Some("packages")
    } else {
        None
    }
}

pub fn unused(project: &Path, limits: &Limits, graph: &ReferenceGraph, extra: &[String]) -> anyhow::Result<Outcome> {
    let roots = roots::find(project, limits, graph);
    let mut added = vec![];
    for root in extra {
        let prefix = root.trim().trim_end_matches('/').replace('\\', "/");
        if let Err(e) = engine::io::confine(project, &prefix) {
            return Ok(Outcome::refused(
                "unused",
                crate::exit::INVALID,
                "outside_project",
                root,
                format!("--roots {root}: {e}"),
                "name a file or folder inside the project, relative to its folder (Assets/…)",
            ));
        }
        let under = format!("{prefix}/");
        let matched: Vec<u32> = (0..graph.nodes.len() as u32)
            .filter(|&i| {
                let path = &graph.node(i).path;
                *path == prefix || path.starts_with(&under)
            })
            .collect();
        if matched.is_empty() {
            return Ok(Outcome::refused(
                "unused",
                crate::exit::INVALID,
                "unknown_asset",
                root,
                format!("--roots {root}: no asset of the index is at or under this path"),
                "name an indexed file or a folder holding some (run `unity-assets index` after adding assets)",
            ));
        }
        added.extend(matched);
    }

    let reached = reached_from(graph, roots.all().chain(added.iter().copied()));
    let (mut listed, mut code, mut editor, mut packages) = (vec![], 0, 0, 0);
    for (i, node) in graph.nodes.iter().enumerate() {
        if reached[i] {
            continue;
        }
        match not_judged(&node.path, &node.asset_type) {
            Some("code") => code += 1,
            Some("editor") => editor += 1,
            Some(_) => packages += 1,
            None => listed.push(AssetRef::of(graph, i as u32)),
        }
    }
    listed.sort_by(|a, b| a.path.cmp(&b.path));
    let reached_count = reached.iter().filter(|r| **r).count();
    let empty_scenes: Vec<&str> = (roots.scenes.iter())
        .map(|&i| graph.node(i))
        .filter(|scene| scene.uses.is_empty() && scene.missing.is_empty())
        .map(|scene| scene.path.as_str())
        .collect();
    let summary = summary_lines(
        &roots,
        &empty_scenes,
        added.len(),
        graph.nodes.len(),
        reached_count,
        &listed,
        [code, editor, packages],
    );
    let scene_paths: Vec<&str> = roots.scenes.iter().map(|&i| graph.node(i).path.as_str()).collect();
    Ok(Outcome {
        ok: true,
        code: crate::exit::OK,
        status: "ok".into(),
        line: summary,
        help: None,
        notes: vec![],
        asset: None,
        found_by: None,
        document: json!({
            "status": "ok",
            "roots": {
                "build_settings": roots.build_settings,
                "scenes": scene_paths,
                "missing_scenes": roots.missing_scenes,
                "config_objects": roots.config.len(),
                "resources": roots.resources.len(),
                "streaming_assets": roots.streaming.len(),
                "addressables": roots.addressables.len(),
                "added": extra,
            },
            "assets": graph.nodes.len(),
            "reached": reached_count,
            "count": listed.len(),
            "by_type": listed.iter().fold(serde_json::Map::new(), |mut m, a| {
                let n = m.get(&a.asset_type).and_then(|v| v.as_u64()).unwrap_or(0);
                m.insert(a.asset_type.clone(), json!(n + 1));
                m
            }),
            "unused": listed,
            "not_listed": {"code": code, "editor_only": editor, "packages": packages},
        }),
    })
}

fn summary_lines(
    roots: &Roots,
    empty_scenes: &[&str],
    added: usize,
    total: usize,
    reached: usize,
    listed: &[AssetRef],
    [code, editor, packages]: [usize; 3],
) -> String {
    let scenes = if roots.build_settings {
        format!("{} of the build settings", count(roots.scenes.len(), "scene"))
    } else {
        format!(
            "{} (no {}: every scene counts)",
            count(roots.scenes.len(), "scene"),
            roots::BUILD_SETTINGS
        )
    };
    let mut lines = format!(
        "[unity-assets:unused] roots: {scenes}, {} in Resources/, {} Addressables {}{}{}; {reached} of {total} assets reached",
        count(roots.resources.len(), "asset"),
        roots.addressables.len(),
        if roots.addressables.len() == 1 { "entry" } else { "entries" },
        if roots.streaming.is_empty() {
            String::new()
        } else {
            format!(", {} in StreamingAssets/", roots.streaming.len())
        },
        if added == 0 {
            String::new()
        } else {
            format!(", {} from --roots", count(added, "asset"))
        },
    );
    for missing in &roots.missing_scenes {
        lines.push_str(&format!(
            "\n[unity-assets:unused] warning: build-settings scene {missing} is not in the index"
        ));
    }
    // A scene that uses nothing starts no walk: what only it would reach is listed as unused.
    if roots.scenes.is_empty() {
        lines.push_str("\n[unity-assets:unused] warning: no scene to start from, so only Resources/, Addressables and --roots reach anything");
    }
    for scene in empty_scenes {
        lines.push_str(&format!(
            "\n[unity-assets:unused] warning: scene {scene} references no asset (empty, or saved in a form the index cannot read), so it reaches nothing; assets it should use are listed below"
        ));
    }

    if listed.is_empty() {
        lines.push_str("\n[unity-assets:unused] every asset that can be judged is reached");
    } else {
        lines.push_str(&format!(
            "\n[unity-assets:unused] {} nothing reaches ({}):",
            count(listed.len(), "asset"),
            by_type(listed.iter().map(|a| a.asset_type.as_str()))
        ));
        for a in listed.iter().take(SHOWN) {
            lines.push_str(&format!("\n  {}  {}", a.path, a.asset_type));
        }
        if listed.len() > SHOWN {
            lines.push_str(&format!(
                "\n  … and {} more (--json lists them all)",
                listed.len() - SHOWN
            ));
        }
    }
    lines.push_str(&format!(
        "\n[unity-assets:unused] not listed: {code} scripts/assemblies/plugins (code uses them unseen), {editor} in editor-only folders, {packages} in packages"
    ));
    lines
}
