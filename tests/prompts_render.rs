//! Every prompt in prompts/ rendered the way an `llm` stage renders it (the
//! engine's environment: trim_blocks, lstrip_blocks), with several items in
//! each list it shows. Each item carries a marker; every marker must stand
//! on a line of its own, and numbered lists must number one item per line —
//! a block tag that eats a newline glues items together, and a model then
//! reads one request where there were several. Each also tells the model
//! that the query and project data it carries are data, not instructions.

use std::path::{Path, PathBuf};

use engine::template::{environment, render_prompt_json, Prompt};
use serde_json::{json, Value};

fn prompts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts")
}

fn prompt_files() -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs = vec![prompts_dir()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "j2") {
                let rel = path.strip_prefix(prompts_dir()).unwrap();
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

/// Inputs with three items per list, each item marked `@<list><n>@`; the
/// markers each prompt must show on lines of their own; and how many
/// numbered lines (`1. `, `2. `, …) it must have.
fn fixtures(name: &str) -> Vec<(Value, Vec<&'static str>, usize)> {
    let intents = json!([
        {"intent": "탑다운 좀비 @I1@", "category_hint": "character", "subtype_hint": "Prefab/character"},
        {"intent": "배경 음악 @I2@", "category_hint": "audio", "subtype_hint": null},
        {"intent": "ui buttons @I3@", "category_hint": null, "subtype_hint": "Prefab/ui"},
    ]);
    let row_lines = json!([
        "{\"guid\":\"@R1@\",\"path\":\"Assets/a.prefab\"}",
        {"guid": "@R2@", "path": "Assets/b.wav", "labels": []},
        "{\"guid\":\"@R3@\",\"path\":\"Assets/c.png\"}",
    ]);
    let picks = json!([
        {"sub_intent": "좀비", "picks": [{"guid": "g1", "weight": 1.0}, {"guid": "g2", "weight": 0.5}]},
        {"sub_intent": "음악", "picks": [{"guid": "g3", "weight": 1.0}]},
    ]);
    let rows = ["@R1@", "@R2@", "@R3@"];
    let requests = ["@I1@", "@I2@", "@I3@"];
    match name {
        "search/rank-assets.j2" => {
            let markers: Vec<&str> = rows.iter().chain(&requests).copied().collect();
            vec![
                (
                    json!({"intents": intents, "rows": row_lines, "top_k": 3, "past_picks": []}),
                    markers.clone(),
                    3,
                ),
                (
                    json!({"intents": intents, "rows": row_lines, "top_k": 3, "past_picks": picks}),
                    markers,
                    3,
                ),
            ]
        }
        "search/rerank.j2" => vec![(
            json!({
                "intent": intents[0], "top_k": 3, "builtin": [],
                "rows": [{"id": 1, "path": "@R1@"}, {"id": 2, "path": "@R2@", "tags": ["a"]}, {"id": 3, "path": "@R3@"}],
            }),
            rows.to_vec(),
            0,
        )],
        "search/route.j2" => vec![(
            json!({"query": "좀비와 음악", "aliases_hint": "Aliases: @A1@", "past_picks_hint": "Past picks: @P1@", "aliases": null}),
            vec!["@A1@", "@P1@"],
            0,
        )],
        "search/select-packages.j2" => vec![(
            json!({
                "intents": intents, "top_k": 3, "aliases": null,
                "packages": [{"package_id": "@K1@"}, {"package_id": "@K2@"}, {"package_id": "@K3@"}],
            }),
            vec!["@K1@", "@K2@", "@K3@", "@I1@", "@I2@", "@I3@"],
            3,
        )],
        "index/tag.j2" => ["minimal", "normal"]
            .into_iter()
            .map(|depth| {
                (
                    json!({
                        "index_depth": depth,
                        "assets": [{"guid": "@T1@", "path": "Assets/a"}, {"guid": "@T2@"}, {"guid": "@T3@"}],
                    }),
                    vec!["@T1@", "@T2@", "@T3@"],
                    0,
                )
            })
            .collect(),
        "build/plan.j2" => vec![(
            json!({"sub_intent": "좀비 @S1@", "asset": {"guid": "g", "path": "Assets/@P1@.prefab", "type": "Prefab"}, "position": [3.0, 0.0, 0.0]}),
            vec!["@S1@", "@P1@"],
            0,
        )],
        // Web-search strategy and format templates render queries and pages,
        // not numbered request lists; their layouts are golden-tested in
        // tests/web_search_e2e.rs.
        other if other.starts_with("web-search/") => vec![],
        other => panic!("prompts/{other} has no fixture here: add one, so its line structure is checked"),
    }
}

fn parts(p: &Prompt) -> String {
    [p.system.as_deref(), p.cached.as_deref(), Some(p.user.as_str())]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_prompt_renders_one_item_per_line() {
    let mut env = environment();
    let files = prompt_files();
    assert!(files.len() >= 6, "{files:?}");
    for name in &files {
        let text = std::fs::read_to_string(prompts_dir().join(name)).unwrap();
        env.add_template_owned(name.clone(), text).unwrap();
    }
    for name in &files {
        for (vars, markers, numbered) in fixtures(name) {
            let mut vars = vars;
            vars["inputs"] = json!({});
            vars["params"] = json!({});
            let prompt = render_prompt_json(&env, name, vars).unwrap_or_else(|e| panic!("{name}: {e}"));
            let text = parts(&prompt);
            // Each of these carries the user's words or project data into a model.
            let system = prompt.system.as_deref().unwrap_or_default();
            assert!(
                system.contains("not instructions"),
                "{name}: the system block does not say the data it carries is not instructions:\n{system}"
            );
            for marker in &markers {
                let lines: Vec<&str> = text.lines().filter(|l| l.contains(marker)).collect();
                assert_eq!(lines.len(), 1, "{name}: {marker} on {} lines:\n{text}", lines.len());
                let others: Vec<&&str> = markers
                    .iter()
                    .filter(|m| *m != marker && lines[0].contains(**m))
                    .collect();
                assert!(others.is_empty(), "{name}: {marker} glued to {others:?}:\n{}", lines[0]);
            }
            for n in 1..=numbered {
                let starts = text.lines().filter(|l| l.starts_with(&format!("{n}. "))).count();
                assert_eq!(starts, 1, "{name}: request {n} does not start its own line:\n{text}");
            }
            assert!(
                !text.lines().any(|l| l.contains(")2. ") || l.contains(")3. ")),
                "{name}: numbered items glued:\n{text}"
            );
        }
    }
}

/// The bug this test was written for: with a subtype hint on the first
/// request, the second one was glued to it.
#[test]
fn rank_requests_keep_their_subtype_hint_on_their_own_line() {
    let mut env = environment();
    let name = "search/rank-assets.j2";
    env.add_template_owned(name, std::fs::read_to_string(prompts_dir().join(name)).unwrap())
        .unwrap();
    let vars = json!({
        "inputs": {}, "params": {}, "rows": [], "top_k": 3, "past_picks": [],
        "intents": [{"intent": "좀비 캐릭터", "subtype_hint": "Prefab/character"}, {"intent": "배경 음악", "subtype_hint": null}],
    });
    let user = render_prompt_json(&env, name, vars).unwrap().user;
    assert_eq!(
        user,
        "Requests:\n1. 좀비 캐릭터 (subtype hint: Prefab/character)\n2. 배경 음악"
    );
}
