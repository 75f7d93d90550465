//! Whatever a user writes, parsing and compiling answer with diagnostics,
//! never a panic: arbitrary text, YAML-shaped noise, and random pipelines
//! built from real stage kinds, references, templates and edges.

mod engine_util;

use engine::Reach;
use engine::{CallContext, Registry};
use engine_util::Project;
use proptest::prelude::*;
use serde_json::Value;

/// Fragments users really type, so random text reaches deep into the parser.
fn yamlish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("pipeline: p\n".to_owned()),
        Just("stages:\n".to_owned()),
        Just("  a:\n".to_owned()),
        Just("    fn: f.id\n".to_owned()),
        Just("    needs: [a, b]\n".to_owned()),
        Just("    emit: \"{{ a }}\"\n".to_owned()),
        Just("    for_each: {items: [1], as: x}\n".to_owned()),
        Just("    repeat: {times: 2}\n".to_owned()),
        Just("    llm: {prompt: p.j2}\n".to_owned()),
        Just("inputs:\n  q: {type: string}\n".to_owned()),
        Just("params: {k: 1}\n".to_owned()),
        Just("{{ %}".to_owned()),
        Just(": - [ { ! & * |\n".to_owned()),
        "[ -~\n]{0,20}",
    ];
    proptest::collection::vec(piece, 0..12).prop_map(|v| v.concat())
}

fn registry() -> Registry {
    let mut r = Registry::new();
    r.function("f.id", Reach::NONE, "identity", |a: Value, _: &CallContext| Ok(a));
    r.builtin("f.llm", "identity", |a: Value, _: &CallContext| Ok(a));
    r
}

/// One stage of a random pipeline: an action, maybe a modifier, needs on
/// any stage (cycles and unknown names included) and a template reading a
/// random name.
fn stage(i: usize, n: usize) -> impl Strategy<Value = String> {
    let action = prop_oneof![
        Just("fn: f.id".to_owned()),
        Just("fn: f.nope".to_owned()),
        Just("emit: \"{{ REF }}\"".to_owned()),
        Just("llm: {prompt: p.j2, builtin: f.llm}\n    output: s.json".to_owned()),
        Just("llm: {prompt: missing.j2}".to_owned()),
        Just("exit: {code: \"{{ REF }}\"}".to_owned()),
        Just("write: {path: out.json, value: \"{{ REF }}\"}".to_owned()),
        Just("read: {path: \"{{ REF }}\", schema: bad.json}".to_owned()),
        Just("run: p".to_owned()),
        Just("run: other".to_owned()),
    ];
    let modifier = prop_oneof![
        Just(String::new()),
        Just("    for_each: {items: \"{{ REF }}\", concurrency: 0}\n".to_owned()),
        Just("    map_reduce: {items: [1], chunk_size: \"{{ REF }}\", reduce: {sort_by: x, top_k: 2}}\n".to_owned()),
        Just("    repeat: {over: [1], times: 3, until: \"{{ result }}\"}\n".to_owned()),
    ];
    let reference = prop_oneof![
        Just("inputs.q".to_owned()),
        Just("inputs.zz".to_owned()),
        Just("params.k.deep".to_owned()),
        Just("item".to_owned()),
        Just("nobody".to_owned()),
        Just("1 +".to_owned()),
        (0..n).prop_map(|j| format!("s{j}")),
    ];
    let needs = proptest::collection::vec(0..n + 1, 0..3);
    (action, modifier, reference, needs).prop_map(move |(action, modifier, reference, needs)| {
        let needs: Vec<String> = needs
            .iter()
            .map(|j| if *j == n { "ghost".to_owned() } else { format!("s{j}") })
            .collect();
        format!(
            "  s{i}:\n    {}\n{modifier}    needs: [{}]\n    with: {{v: \"{{{{ {reference} }}}}\"}}\n",
            action.replace("REF", &reference),
            needs.join(", ")
        )
    })
}

fn pipeline() -> impl Strategy<Value = String> {
    (1..8usize).prop_flat_map(|n| {
        let stages: Vec<_> = (0..n).map(|i| stage(i, n)).collect();
        stages.prop_map(|s| {
            format!(
                "pipeline: p\ninputs:\n  q: {{type: string}}\nparams:\n  k: 1\nstages:\n{}",
                s.concat()
            )
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn parse_never_panics_on_any_text(text in "\\PC{0,200}") {
        let _ = engine::parse_spec_for_fuzzing("f.yaml", &text);
    }

    #[test]
    fn parse_never_panics_on_yaml_shaped_text(text in yamlish()) {
        let _ = engine::parse_spec_for_fuzzing("f.yaml", &text);
    }

    #[test]
    fn compile_never_panics_on_random_pipelines(yaml in pipeline()) {
        let p = Project::new();
        p.file("prompts/p.j2", "{{ v }} {{ nope }}").file("schemas/s.json", "{}").file("schemas/bad.json", "{\"type\": 5}");
        p.pipeline("p", &yaml);
        // Every error in the pipeline file must carry a position inside it
        // (a schema file that is no JSON Schema is about that whole file).
        if let Err(d) = p.compile("p", &registry()) {
            prop_assert!(!d.is_empty());
            for e in d.0.iter().filter(|e| !e.file.ends_with(".json")) {
                prop_assert!(e.at.is_some_and(|(line, col)| line >= 1 && col >= 1), "{}", e);
            }
        }
    }
}
