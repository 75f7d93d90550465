//! Every compile error: its message, its `file:line:col`, its fix hint, and
//! that one compile reports all of a file's problems at once.

mod engine_util;

use engine::diagnostic::Diagnostic;
use engine::io::Limits;
use engine::{CallContext, Compiler, ParamLayers, Reach, Registry};
use engine_util::Project;
use serde_json::Value;

fn registry() -> Registry {
    let mut r = Registry::new();
    r.function("text.upper", Reach::NONE, "upper-cases", |a: Value, _: &CallContext| {
        Ok(a)
    });
    r.builtin("text.classify", "labels", |a: Value, _: &CallContext| Ok(a));
    r
}

/// Compile pipeline `x` (written from `yaml`) and return its diagnostics.
fn errors_of(p: &Project, yaml: &str) -> Vec<Diagnostic> {
    p.pipeline("x", yaml);
    match p.compile("x", &registry()) {
        Ok(_) => panic!("expected compile errors for:\n{yaml}"),
        Err(d) => d.0,
    }
}

/// The one diagnostic whose message contains `needle`, checked to sit at
/// `file_suffix:line:col`.
#[track_caller]
fn expect<'a>(
    errors: &'a [Diagnostic],
    needle: &str,
    file_suffix: &str,
    at: impl Into<Option<(usize, usize)>>,
) -> &'a Diagnostic {
    let found: Vec<&Diagnostic> = errors.iter().filter(|d| d.message.contains(needle)).collect();
    let [d] = found[..] else {
        panic!("expected one error containing {needle:?}, got:\n{}", list(errors))
    };
    assert!(d.file.ends_with(file_suffix), "{d} should be in {file_suffix}");
    assert_eq!(d.at, at.into(), "position of: {d}");
    d
}

fn list(errors: &[Diagnostic]) -> String {
    errors.iter().map(|d| format!("  {d}\n")).collect()
}

#[track_caller]
fn expect_help(d: &Diagnostic, help: &str) {
    assert!(
        d.help.as_deref().is_some_and(|h| h.contains(help)),
        "{d} should help with {help:?}"
    );
}

const PIPE: &str = "pipelines/x.yaml";

#[test]
fn yaml_syntax_error_points_at_the_problem() {
    let p = Project::new();
    let errors = errors_of(&p, "pipeline: x\nstages:\n  a:\n    emit: [unclosed\n  b: {emit: y}\n");
    assert_eq!(errors.len(), 1, "{}", list(&errors));
    let d = &errors[0];
    assert!(d.message.starts_with("invalid YAML"), "{d}");
    assert!(d.file.ends_with(PIPE) && d.at.is_some_and(|(line, _)| line >= 4), "{d}");
}

#[test]
fn unknown_top_level_key_suggests_the_right_one() {
    let p = Project::new();
    let errors = errors_of(&p, "pipeline: x\nsumary: oops\nstages:\n  a: {emit: y}\n");
    expect_help(
        expect(&errors, "unknown key `sumary`", PIPE, (2, 1)),
        "did you mean `summary`?",
    );
}

#[test]
fn unknown_stage_key_suggests_the_right_one() {
    let p = Project::new();
    let errors = errors_of(
        &p,
        "pipeline: x\nstages:\n  a:\n    emit: y\n    neds: [b]\n  b: {emit: z}\n",
    );
    expect_help(
        expect(&errors, "unknown stage kind or key `neds` in stage `a`", PIPE, (5, 5)),
        "did you mean `needs`?",
    );
}

#[test]
fn unknown_stage_kind_is_named() {
    let p = Project::new();
    let errors = errors_of(&p, "pipeline: x\nstages:\n  a:\n    shell: ls\n");
    expect(&errors, "unknown stage kind or key `shell` in stage `a`", PIPE, (4, 5));
}

#[test]
fn a_stage_without_an_action_lists_the_actions() {
    let p = Project::new();
    let errors = errors_of(&p, "pipeline: x\nstages:\n  a:\n    when: \"{{ true }}\"\n");
    expect(&errors, "stage `a` has no action; add one of: fn, llm,", PIPE, (3, 3));
}

#[test]
fn two_actions_are_rejected() {
    let p = Project::new();
    let errors = errors_of(&p, "pipeline: x\nstages:\n  both:\n    emit: y\n    exit: {code: 1}\n");
    expect(
        &errors,
        "stage `both` has 2 actions (emit, exit); give it exactly one",
        PIPE,
        (3, 3),
    );
}

#[test]
fn unknown_need_suggests_a_stage() {
    let p = Project::new();
    let errors = errors_of(
        &p,
        "pipeline: x\nstages:\n  first: {emit: a}\n  second:\n    needs: [frist]\n    emit: b\n",
    );
    expect_help(
        expect(
            &errors,
            "stage `second` needs `frist`, which is not a stage of this pipeline",
            PIPE,
            (5, 13),
        ),
        "did you mean `first`?",
    );
}

#[test]
fn a_cycle_names_every_stage_on_it() {
    let p = Project::new();
    let errors = errors_of(
        &p,
        "pipeline: x\nstages:\n  a:\n    needs: [c]\n    emit: a\n  b:\n    needs: [a]\n    emit: b\n  c:\n    needs: [b]\n    emit: c\n  free: {emit: f}\n",
    );
    let cycles: Vec<&Diagnostic> = errors
        .iter()
        .filter(|d| d.message.starts_with("cycle in `needs`"))
        .collect();
    assert_eq!(cycles.len(), 1, "{}", list(&errors));
    let path = cycles[0].message.trim_start_matches("cycle in `needs`: ");
    let mut on_cycle: Vec<&str> = path.split(" → ").collect();
    assert_eq!(on_cycle.first(), on_cycle.last(), "the path closes: {path}");
    on_cycle.pop();
    on_cycle.sort();
    assert_eq!(on_cycle, vec!["a", "b", "c"]);
    assert!(
        cycles[0].file.ends_with(PIPE) && cycles[0].at.is_some_and(|(line, _)| [4, 7, 10].contains(&line)),
        "{}",
        cycles[0]
    );
}

#[test]
fn reading_a_stage_that_is_not_upstream_is_an_error() {
    let p = Project::new();
    let errors = errors_of(
        &p,
        "pipeline: x\nstages:\n  a: {emit: a}\n  b:\n    emit: \"{{ a }}\"\n",
    );
    expect_help(
        expect(
            &errors,
            "stage `b` reads stage `a`, which is not upstream of it",
            PIPE,
            (5, 11),
        ),
        "add `a` (or a stage after it) to `needs:`",
    );
}

#[test]
fn unknown_template_variable_is_named() {
    let p = Project::new();
    let errors = errors_of(
        &p,
        "pipeline: x\nstages:\n  first: {emit: a}\n  b:\n    needs: [first]\n    emit: \"{{ frist }}\"\n",
    );
    expect_help(
        expect(&errors, "stage `b` reads unknown name `frist`", PIPE, (6, 11)),
        "did you mean `first`?",
    );
}

#[test]
fn undeclared_inputs_and_params_are_errors() {
    let p = Project::new();
    let errors = errors_of(
        &p,
        "pipeline: x\ninputs:\n  query: {type: string}\nparams:\n  top_k: 5\nstages:\n  a:\n    emit: \"{{ inputs.qeury }}\"\n  b:\n    emit: \"{{ params.topk }}\"\n",
    );
    expect_help(
        expect(
            &errors,
            "stage `a` reads `inputs.qeury`, which is not declared under `inputs:`",
            PIPE,
            (8, 11),
        ),
        "did you mean `query`?",
    );
    expect_help(
        expect(
            &errors,
            "stage `b` reads `params.topk`, which is not declared under `params:`",
            PIPE,
            (10, 11),
        ),
        "did you mean `top_k`?",
    );
}

#[test]
fn template_syntax_error_is_positioned() {
    let p = Project::new();
    let errors = errors_of(&p, "pipeline: x\nstages:\n  a:\n    emit: \"{{ 1 + }}\"\n");
    expect(&errors, "template syntax error", PIPE, (4, 11));
}

#[test]
fn missing_prompt_file_suggests_an_existing_one() {
    let p = Project::new();
    p.file("prompts/route.j2", "{{ q }}").file("schemas/o.json", "{}");
    let errors = errors_of(&p, "pipeline: x\nstages:\n  a:\n    llm: {prompt: rout.j2, builtin: text.classify}\n    with: {q: hi}\n    output: o.json\n");
    expect_help(
        expect(&errors, "prompt file `prompts/rout.j2` not found", PIPE, (4, 19)),
        "did you mean `route.j2`?",
    );
}

#[test]
fn prompt_reading_a_name_not_passed_in_with_points_into_the_prompt() {
    let p = Project::new();
    p.file("prompts/route.j2", "Route this.\nQuery: {{ qurey }}\n")
        .file("schemas/o.json", "{}");
    let errors = errors_of(&p, "pipeline: x\nstages:\n  a:\n    llm: {prompt: route.j2, builtin: text.classify}\n    with: {query: hi}\n    output: o.json\n");
    expect_help(
        expect(
            &errors,
            "template reads `qurey`, which stage `a` does not pass in `with:`",
            "prompts/route.j2",
            (2, 11),
        ),
        "did you mean `query`?",
    );
}

#[test]
fn schema_files_must_exist_and_be_valid() {
    let p = Project::new();
    p.file("schemas/broken.json", "{\"type\": \"object\",\n  \"properties\": }")
        .file("schemas/wrong.json", "{\"type\": \"nonsense\"}");
    let errors = errors_of(
        &p,
        "pipeline: x\nstages:\n  a:\n    emit: a\n    output: mising.json\n  b:\n    emit: b\n    output: broken.json\n  c:\n    emit: c\n    output: wrong.json\n",
    );
    expect(&errors, "schema file `schemas/mising.json` not found", PIPE, (5, 13));
    expect(&errors, "schema is not valid JSON", "schemas/broken.json", (2, 17));
    expect(&errors, "not a valid JSON Schema", "schemas/wrong.json", None);
}

#[test]
fn unknown_function_suggests_a_registered_one() {
    let p = Project::new();
    let errors = errors_of(&p, "pipeline: x\nstages:\n  a:\n    fn: text.uper\n");
    expect_help(
        expect(&errors, "no native function named `text.uper`", PIPE, (4, 9)),
        "did you mean `text.upper`?",
    );
}

#[test]
fn llm_without_builtin_cannot_run_offline() {
    let p = Project::new();
    p.file("prompts/p.j2", "{{ q }}").file("schemas/o.json", "{}");
    let yaml = "pipeline: x\nstages:\n  ask-model:\n    llm: {prompt: p.j2}\n    with: {q: hi}\n    output: o.json\n";
    let errors = errors_of(&p, yaml);
    expect_help(
        expect(&errors, "llm stage `ask-model` has no `builtin:`", PIPE, (4, 10)),
        "--provider",
    );
    // With a model provider the same stage compiles.
    p.compile_with("x", &registry(), &ParamLayers::default(), false)
        .unwrap_or_else(|d| panic!("{d}"));
}

#[test]
fn set_of_an_unknown_param_suggests_the_right_one() {
    let p = Project::new();
    p.pipeline(
        "x",
        "pipeline: x\nparams:\n  top_k: 5\n  threshold: {auto: 0.7}\nstages:\n  a: {emit: \"{{ params.top_k }}\"}\n",
    );
    let layers = ParamLayers {
        config: None,
        sets: vec![ParamLayers::parse_set("threshold.atuo=0.9").unwrap()],
    };
    let Err(errors) = p.compile_with("x", &registry(), &layers, true) else {
        panic!("an unknown --set key must not compile")
    };
    let errors = errors.0;
    let d = expect(
        &errors,
        "`threshold.atuo` is not a param of",
        "--set threshold.atuo",
        None,
    );
    expect_help(d, "did you mean `threshold.auto`?");

    let layers = ParamLayers {
        config: None,
        sets: vec![ParamLayers::parse_set("top_k=9").unwrap()],
    };
    let pipeline = p
        .compile_with("x", &registry(), &layers, true)
        .unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(pipeline.params()["top_k"], 9);
}

#[test]
fn every_shape_error_of_a_file_comes_back_at_once() {
    let p = Project::new();
    let errors = errors_of(&p, "pipeline: x\nsumary: s\nstages:\n  a:\n    emit: a\n    neds: [b]\n  b:\n    shell: ls\n  c:\n    emit: c\n    exit: {code: 1}\n");
    assert_eq!(errors.len(), 4, "{}", list(&errors));
    let lines: Vec<usize> = errors.iter().filter_map(|d| d.at).map(|(line, _)| line).collect();
    assert_eq!(lines, vec![2, 6, 8, 9], "in file order");
}

#[test]
fn every_reference_error_of_a_file_comes_back_at_once() {
    let p = Project::new();
    let errors = errors_of(
        &p,
        "pipeline: x\ninputs:\n  q: {type: string}\nstages:\n  a:\n    fn: text.uper\n  b:\n    needs: [nope]\n    emit: \"{{ inputs.z }}\"\n  c:\n    emit: \"{{ a }}\"\n    output: gone.json\n",
    );
    for needle in [
        "no native function named `text.uper`",
        "needs `nope`",
        "`inputs.z`",
        "reads stage `a`",
        "schemas/gone.json",
    ] {
        assert!(
            errors.iter().any(|d| d.message.contains(needle)),
            "missing {needle:?} in:\n{}",
            list(&errors)
        );
    }
    assert_eq!(errors.len(), 5, "{}", list(&errors));
}

/// Shape errors (parse) and reference errors (compile) in one file: a
/// single `validate` should show both kinds.
#[test]
fn shape_and_reference_errors_come_back_together() {
    let p = Project::new();
    let errors = errors_of(&p, "pipeline: x\nsumary: s\nstages:\n  a:\n    fn: text.uper\n");
    assert!(
        errors.iter().any(|d| d.message.contains("unknown key `sumary`")),
        "{}",
        list(&errors)
    );
    assert!(
        errors.iter().any(|d| d.message.contains("text.uper")),
        "{}",
        list(&errors)
    );
}

#[test]
fn an_unknown_input_type_or_surface_is_an_error_with_a_suggestion() {
    let p = Project::new();
    let errors = errors_of(
        &p,
        "pipeline: x\nexpose: mpc\ninputs:\n  q: {type: strng}\nstages:\n  a: {emit: \"{{ inputs.q }}\"}\n",
    );
    let d = expect(&errors, "unknown input type `strng`", PIPE, (4, 13));
    expect_help(d, "string");
    let d = expect(&errors, "unknown surface `mpc`", PIPE, (2, 9));
    expect_help(d, "mcp");
}

/// A pipeline file given by path, and the sibling files its `run:` stages
/// read, are read within the run's `limits.file_mb`, not the defaults.
#[test]
fn pipeline_files_are_read_within_the_configured_limits() {
    let p = Project::new();
    let main = "pipeline: main\nstages:\n  s: {run: sub}\n";
    p.file("own/main.yaml", main);
    p.file(
        "own/sub.yaml",
        &format!("pipeline: sub\nstages:\n  a: {{emit: 1}}\n#{}\n", "-".repeat(200)),
    );
    let path = p.path("own/main.yaml");
    let compile = |file_bytes: u64| {
        let limits = Limits {
            file_bytes,
            ..Limits::default()
        };
        Compiler::new(&p.resources(), &registry(), &ParamLayers::default(), true)
            .with_limits(limits)
            .compile(path.to_str().unwrap())
            .map(|_| ())
            .map_err(|d| list(&d.0))
    };
    compile(Limits::default().file_bytes).unwrap();
    let sub_too_big = compile(main.len() as u64).unwrap_err();
    assert!(
        sub_too_big.contains("sub.yaml") && sub_too_big.contains("limits.file_mb"),
        "{sub_too_big}"
    );
    let main_too_big = compile(8).unwrap_err();
    assert!(
        main_too_big.contains("main.yaml") && main_too_big.contains("limits.file_mb"),
        "{main_too_big}"
    );
}
