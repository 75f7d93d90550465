//! Every stage kind run end to end from YAML fixtures: outputs, skips, the
//! schema gates with repair and fallbacks, and what the run report counts.

mod engine_util;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::llm::{LlmError, LlmReply, LlmRequest, Provider, Tier, Usage};
use engine::{CallContext, Reach, Registry};
use engine::{Ending, RunStatus, StageFailure, StageStatus};
use engine_util::{failure, stage, value_of, Project};
use futures::future::BoxFuture;
use serde_json::{json, Value};
use test_support::llm_server::{LlmServer, Recorded, Reply};

const LABEL_SCHEMA: &str =
    r#"{"type": "object", "properties": {"label": {"type": "string", "enum": ["cat", "dog"]}}, "required": ["label"]}"#;

/// `t.double`: `{n}` → `n * 2`; `t.echo`: returns its arguments; the
/// builtin `t.classify`: `{text}` → a label by keyword.
fn registry() -> Registry {
    let mut r = Registry::new();
    r.function("t.double", Reach::NONE, "doubles n", |a: Value, _: &CallContext| {
        Ok(a["n"].as_i64().unwrap_or_default() * 2)
    });
    r.function(
        "t.echo",
        Reach::NONE,
        "returns its arguments",
        |a: Value, _: &CallContext| Ok(a),
    );
    r.builtin("t.classify", "labels by keyword", |a: Value, _: &CallContext| {
        let text = a["text"].as_str().unwrap_or_default();
        Ok(json!({"label": if text.contains("meow") { "cat" } else { "dog" }}))
    });
    r
}

#[tokio::test]
async fn fn_stage_returns_the_native_result() {
    let p = Project::new();
    p.pipeline("calc", "pipeline: calc\ninputs:\n  n: {type: integer}\noutput: \"{{ double }}\"\nstages:\n  double:\n    fn: t.double\n    with: {n: \"{{ inputs.n }}\"}\n");
    let (outcome, _) = p.run("calc", &registry(), json!({"n": "21"}), None).await;
    assert_eq!(value_of(&outcome), json!(42));
    assert_eq!(outcome.report.status, RunStatus::Ok);
    assert_eq!(stage(&outcome, "double").status, StageStatus::Ok);
}

fn llm_project(repair: u32, on_invalid: &str) -> Project {
    let p = Project::new();
    p.file(
        "prompts/classify.j2",
        "{% block system %}You label pets.{% endblock %}{% block user %}Label: {{ text }}{% endblock %}",
    );
    p.file("schemas/label.schema.json", LABEL_SCHEMA);
    p.pipeline(
        "label",
        &format!("pipeline: label\ninputs:\n  text: {{type: string}}\noutput: \"{{{{ classify }}}}\"\nstages:\n  classify:\n    llm: {{prompt: classify.j2, builtin: t.classify, repair: {repair}}}\n    with: {{text: \"{{{{ inputs.text }}}}\"}}\n    output: label.schema.json\n{on_invalid}"),
    );
    p
}

#[tokio::test]
async fn llm_stage_runs_its_builtin_offline() {
    let p = llm_project(0, "");
    let (outcome, _) = p.run("label", &registry(), json!({"text": "it says meow"}), None).await;
    assert_eq!(value_of(&outcome), json!({"label": "cat"}));
    let s = stage(&outcome, "classify");
    assert_eq!((s.status, s.calls, s.repairs), (StageStatus::Ok, 1, 0));
}

/// A model that answers from a script, recording every request it gets.
struct ScriptedModel {
    answers: Mutex<Vec<Value>>,
    requests: Mutex<Vec<LlmRequest>>,
}

impl ScriptedModel {
    fn new(answers: Vec<Value>) -> Arc<Self> {
        Arc::new(Self {
            answers: Mutex::new(answers),
            requests: Mutex::new(vec![]),
        })
    }
}

impl Provider for ScriptedModel {
    fn name(&self) -> &str {
        "scripted"
    }
    fn model(&self, _: Tier) -> String {
        "scripted-1".into()
    }
    fn complete<'a>(&'a self, request: &'a LlmRequest) -> BoxFuture<'a, Result<LlmReply, LlmError>> {
        self.requests.lock().unwrap().push(request.clone());
        let mut answers = self.answers.lock().unwrap();
        // The last answer repeats once the script runs out.
        let value = if answers.len() > 1 {
            answers.remove(0)
        } else {
            answers[0].clone()
        };
        let usage = Usage {
            input_tokens: 100,
            output_tokens: 10,
            ..Usage::default()
        };
        Box::pin(async move {
            Ok(LlmReply {
                value,
                usage,
                retries: 0,
                model: "scripted-1".into(),
            })
        })
    }
}

#[tokio::test]
async fn llm_stage_repairs_an_invalid_answer() {
    let p = llm_project(2, "");
    let model = ScriptedModel::new(vec![json!({"label": "parrot"}), json!({"label": "dog"})]);
    let (outcome, _) = p
        .run("label", &registry(), json!({"text": "woof"}), Some(model.clone()))
        .await;
    assert_eq!(value_of(&outcome), json!({"label": "dog"}));
    let s = stage(&outcome, "classify");
    assert_eq!(
        (s.calls, s.repairs, s.tokens.input_tokens, s.tokens.output_tokens),
        (2, 1, 200, 20)
    );
    let requests = model.requests.lock().unwrap();
    assert_eq!(requests[0].system.as_deref(), Some("You label pets."));
    assert_eq!(requests[0].user, "Label: woof");
    assert!(
        requests[1].user.contains("parrot") && requests[1].user.contains("/label"),
        "the repair quotes the answer and the error: {}",
        requests[1].user
    );
}

#[tokio::test]
async fn llm_stage_falls_back_to_on_invalid_output() {
    let p = llm_project(
        1,
        "    on_invalid: {output: {label: unknown, text: \"{{ inputs.text }}\"}}\n",
    );
    let model = ScriptedModel::new(vec![json!({"label": "parrot"})]);
    let (outcome, _) = p
        .run("label", &registry(), json!({"text": "squawk"}), Some(model))
        .await;
    assert_eq!(value_of(&outcome), json!({"label": "unknown", "text": "squawk"}));
    let s = stage(&outcome, "classify");
    assert_eq!((s.status, s.calls, s.repairs), (StageStatus::Ok, 2, 1));
}

#[tokio::test]
async fn llm_stage_fails_when_answers_stay_invalid() {
    let p = llm_project(1, "");
    let model = ScriptedModel::new(vec![json!({"label": 7})]);
    let (outcome, _) = p.run("label", &registry(), json!({"text": "?"}), Some(model)).await;
    let message = failure(&outcome);
    assert!(
        message.contains("stage `classify`") && message.contains("schemas/label.schema.json"),
        "{message}"
    );
    assert_eq!(outcome.report.status, RunStatus::Failed);
    assert_eq!(outcome.exit_code(), 1);
    let s = stage(&outcome, "classify");
    assert_eq!((s.status, s.calls, s.repairs), (StageStatus::Failed, 2, 1));
}

#[tokio::test]
async fn run_stage_returns_the_sub_pipeline_output() {
    let p = Project::new();
    p.pipeline("twice", "pipeline: twice\ninputs:\n  n: {type: integer}\noutput: {twice: \"{{ d }}\"}\nstages:\n  d:\n    fn: t.double\n    with: {n: \"{{ inputs.n }}\"}\n");
    p.pipeline(
        "outer",
        "pipeline: outer\noutput: \"{{ sub.twice }}\"\nstages:\n  sub:\n    run: twice\n    with: {n: 5}\n",
    );
    let (outcome, _) = p.run("outer", &registry(), json!({}), None).await;
    assert_eq!(value_of(&outcome), json!(10));
    let s = stage(&outcome, "sub");
    assert_eq!(s.runs.len(), 1);
    assert_eq!(s.runs[0].pipeline, "twice");
}

/// `t.slow`: sleeps longer for earlier items, tracking how many run at once.
fn slow_registry(in_flight: Arc<AtomicUsize>, peak: Arc<AtomicUsize>) -> Registry {
    let mut r = registry();
    r.async_function(
        "t.slow",
        Reach::NONE,
        "sleeps, then returns its item",
        move |a: Value, _: CallContext| {
            let (in_flight, peak) = (Arc::clone(&in_flight), Arc::clone(&peak));
            async move {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                let i = a["i"].as_u64().unwrap_or_default();
                tokio::time::sleep(Duration::from_millis(5 * (12 - i.min(12)))).await;
                in_flight.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, engine::registry::BoxError>(json!({"i": i}))
            }
        },
    );
    r
}

#[tokio::test]
async fn for_each_keeps_input_order_and_bounds_concurrency() {
    let p = Project::new();
    p.pipeline("fan", "pipeline: fan\noutput: \"{{ each }}\"\nstages:\n  each:\n    for_each: {items: \"{{ range(12) | list }}\", as: n, concurrency: 3}\n    fn: t.slow\n    with: {i: \"{{ n }}\"}\n");
    let (in_flight, peak) = (Arc::default(), Arc::new(AtomicUsize::new(0)));
    let (outcome, _) = p
        .run("fan", &slow_registry(in_flight, Arc::clone(&peak)), json!({}), None)
        .await;
    let expected: Vec<Value> = (0..12).map(|i| json!({"i": i})).collect();
    assert_eq!(value_of(&outcome), Value::Array(expected));
    assert_eq!(
        peak.load(Ordering::SeqCst),
        3,
        "at most `concurrency` items run at once, and that many do"
    );
    assert_eq!(stage(&outcome, "each").kind, "for_each(fn)");
}

#[tokio::test]
async fn map_reduce_chunks_sorts_and_keeps_top_k() {
    let p = Project::new();
    p.pipeline(
        "rank",
        "pipeline: rank\ninputs:\n  rows: {type: array}\noutput: \"{{ best }}\"\nstages:\n  best:\n    map_reduce:\n      items: \"{{ inputs.rows }}\"\n      chunk_size: 3\n      as: rows\n      concurrency: 2\n      reduce: {sort_by: score, top_k: 4}\n    fn: t.echo\n    with: {chunk: \"{{ rows }}\", index: \"{{ position }}\"}\n",
    );
    let mut r = registry();
    r.function(
        "t.echo",
        Reach::NONE,
        "tags each row with its chunk",
        |a: Value, _: &CallContext| {
            let index = a["index"].clone();
            let rows: Vec<Value> = a["chunk"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|mut row| {
                    row["chunk"] = index.clone();
                    row
                })
                .collect();
            Ok(rows)
        },
    );
    let scores = [3, 9, 1, 9, 4, 7, 2, 9, 5, 8];
    let rows: Vec<Value> = scores
        .iter()
        .enumerate()
        .map(|(id, s)| json!({"id": id, "score": s}))
        .collect();
    let (outcome, _) = p.run("rank", &r, json!({"rows": rows}), None).await;
    let out = value_of(&outcome);
    assert_eq!(out["chunks"], json!(4));
    let ids: Vec<u64> = out["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_u64().unwrap())
        .collect();
    // Ties (score 9: ids 1, 3, 7) keep input order; then 8 (id 9).
    assert_eq!(ids, vec![1, 3, 7, 9]);
    assert_eq!(out["items"][2]["chunk"], json!(2));
}

#[tokio::test]
async fn repeat_over_stops_when_until_holds() {
    let p = Project::new();
    p.pipeline("grow", "pipeline: grow\noutput: \"{{ grow }}\"\nstages:\n  grow:\n    repeat: {over: [1, 2, 3, 4, 5], as: n, until: \"{{ result >= 6 }}\"}\n    fn: t.counted\n    with: {n: \"{{ n }}\"}\n");
    let calls = Arc::new(AtomicUsize::new(0));
    let mut r = registry();
    let seen = Arc::clone(&calls);
    r.function(
        "t.counted",
        Reach::NONE,
        "doubles and counts",
        move |a: Value, _: &CallContext| {
            seen.fetch_add(1, Ordering::SeqCst);
            Ok(a["n"].as_i64().unwrap_or_default() * 2)
        },
    );
    let (outcome, _) = p.run("grow", &r, json!({}), None).await;
    assert_eq!(value_of(&outcome), json!(6));
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn repeat_times_runs_that_many_iterations() {
    let p = Project::new();
    p.pipeline("five", "pipeline: five\noutput: \"{{ last }}\"\nstages:\n  last:\n    repeat: {times: 5}\n    fn: t.echo\n    with: {value: \"{{ value }}\", iteration: \"{{ iteration }}\"}\n");
    let (outcome, _) = p.run("five", &registry(), json!({}), None).await;
    assert_eq!(value_of(&outcome), json!({"value": 4, "iteration": 4}));
}

#[tokio::test]
async fn skips_propagate_through_needs() {
    let p = Project::new();
    p.pipeline(
        "skips",
        "pipeline: skips\ninputs:\n  go: {type: boolean, default: false}\nstages:\n  maybe:\n    when: \"{{ inputs.go }}\"\n    fn: t.double\n    with: {n: 1}\n  after-maybe:\n    needs: [maybe]\n    fn: t.echo\n    with: {saw: \"{{ maybe }}\"}\n  always:\n    fn: t.double\n    with: {n: 2}\n  joined:\n    needs: [maybe, always]\n    fn: t.echo\n    with: {maybe: \"{{ maybe }}\", always: \"{{ always }}\"}\n",
    );
    let (outcome, _) = p.run("skips", &registry(), json!({}), None).await;
    assert_eq!(outcome.report.status, RunStatus::Ok);
    let status: Vec<(&str, StageStatus)> = outcome
        .report
        .stages
        .iter()
        .map(|s| (s.name.as_str(), s.status))
        .collect();
    for (name, want) in [
        ("maybe", StageStatus::Skipped),
        ("after-maybe", StageStatus::Skipped),
        ("always", StageStatus::Ok),
        ("joined", StageStatus::Ok),
    ] {
        assert!(status.contains(&(name, want)), "{name} should be {want:?}: {status:?}");
    }
    assert_eq!(*outcome.outputs["maybe"], Value::Null);
    assert_eq!(*outcome.outputs["after-maybe"], Value::Null);
    assert_eq!(*outcome.outputs["joined"], json!({"maybe": null, "always": 4}));

    let (ran, _) = p.run("skips", &registry(), json!({"go": "true"}), None).await;
    assert_eq!(*ran.outputs["after-maybe"], json!({"saw": 2}));
}

#[tokio::test]
async fn a_releasing_run_drops_outputs_once_their_readers_started() {
    let p = Project::new();
    p.pipeline(
        "chain",
        "pipeline: chain\noutput: \"{{ last }} {{ first }}\"\nstages:\n  first:\n    fn: t.double\n    with: {n: 1}\n  middle:\n    needs: [first]\n    fn: t.double\n    with: {n: \"{{ first }}\"}\n  last:\n    needs: [middle]\n    fn: t.double\n    with: {n: \"{{ middle }}\"}\n  unread:\n    needs: [middle]\n    fn: t.double\n    with: {n: 5}\n",
    );
    let pipeline = p.compile_with("chain", &registry(), &Default::default(), true).unwrap();
    let run = |release: bool| {
        let rt = p.runtime(None).releasing_outputs(release);
        let pipeline = pipeline.clone();
        async move { engine::run(&pipeline, Default::default(), &rt).await }
    };
    let released = run(true).await;
    assert_eq!(value_of(&released), json!("8 2"), "the output reads what it names");
    assert_eq!(*released.outputs["middle"], Value::Null, "read by `last`, then dropped");
    assert_eq!(*released.outputs["unread"], Value::Null, "read by none");
    assert_eq!(*released.outputs["first"], json!(2), "the output reads it");
    let kept = run(false).await;
    assert_eq!(*kept.outputs["middle"], json!(4));
    assert_eq!(*kept.outputs["unread"], json!(10));
}

const ROW_SCHEMA: &str = r#"{"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}"#;

fn read_project(read: &str) -> Project {
    let p = Project::new();
    p.file("schemas/row.schema.json", ROW_SCHEMA);
    p.pipeline(
        "load",
        &format!("pipeline: load\noutput: \"{{{{ load }}}}\"\nstages:\n  load:\n    read: {read}\n"),
    );
    p
}

#[tokio::test]
async fn read_parses_json_and_yaml() {
    let p = read_project("{path: data/doc.json}");
    p.file("data/doc.json", r#"{"a": [1, 2]}"#);
    let (outcome, _) = p.run("load", &registry(), json!({}), None).await;
    assert_eq!(value_of(&outcome), json!({"value": {"a": [1, 2]}, "bad_rows": []}));

    let p = read_project("{path: data/doc.txt, format: yaml}");
    p.file("data/doc.txt", "a:\n  - 1\n  - two\n");
    let (outcome, _) = p.run("load", &registry(), json!({}), None).await;
    assert_eq!(value_of(&outcome)["value"], json!({"a": [1, "two"]}));
}

#[tokio::test]
async fn read_jsonl_reports_bad_rows_with_line_numbers() {
    let p = read_project("{path: data/rows.jsonl, schema: row.schema.json}");
    p.file(
        "data/rows.jsonl",
        "{\"id\": 1}\n{\"id\": \"two\"}\n\nnot json\n{\"id\": 5}\n",
    );
    let (outcome, _) = p.run("load", &registry(), json!({}), None).await;
    let out = value_of(&outcome);
    assert_eq!(out["value"], json!([{"id": 1}, {"id": 5}]));
    let lines: Vec<u64> = out["bad_rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, vec![2, 4]);

    let p = read_project("{path: data/rows.jsonl, schema: row.schema.json, bad_rows: fail}");
    p.file("data/rows.jsonl", "{\"id\": 1}\n{\"id\": \"two\"}\n");
    let (outcome, _) = p.run("load", &registry(), json!({}), None).await;
    let message = failure(&outcome);
    assert!(message.contains("rows.jsonl:2: bad row"), "{message}");
}

#[tokio::test]
async fn read_of_a_missing_file_is_null_or_an_error() {
    let p = read_project("{path: data/absent.json, missing: \"null\"}");
    let (outcome, _) = p.run("load", &registry(), json!({}), None).await;
    assert_eq!(value_of(&outcome), json!({"value": null, "bad_rows": []}));

    let p = read_project("{path: data/absent.json}");
    let (outcome, _) = p.run("load", &registry(), json!({}), None).await;
    assert!(failure(&outcome).contains("cannot read"), "{}", failure(&outcome));
}

#[tokio::test]
async fn write_replaces_the_file_atomically() {
    let p = Project::new();
    p.pipeline("save", "pipeline: save\ninputs:\n  v: {type: object}\noutput: \"{{ save }}\"\nstages:\n  save:\n    write: {path: out/result.json, value: \"{{ inputs.v }}\"}\n  note:\n    write: {path: out/note.txt, value: \"hello {{ inputs.v.name }}\", format: text}\n");
    p.file("out/result.json", "old contents");
    let (outcome, _) = p
        .run("save", &registry(), json!({"v": {"name": "Ann", "n": 1}}), None)
        .await;
    let written = std::fs::read_to_string(p.path("out/result.json")).unwrap();
    assert_eq!(written, "{\n  \"name\": \"Ann\",\n  \"n\": 1\n}\n");
    assert_eq!(value_of(&outcome)["bytes"], json!(written.len()));
    assert_eq!(std::fs::read_to_string(p.path("out/note.txt")).unwrap(), "hello Ann\n");
    let mut names: Vec<String> = std::fs::read_dir(p.path("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, vec!["note.txt", "result.json"], "no temp file is left behind");
}

#[tokio::test]
async fn append_adds_lines_and_reports_a_held_lock() {
    let p = Project::new();
    let yaml = |fallback: &str| {
        format!("pipeline: log\ninputs:\n  n: {{type: integer}}\nstages:\n  log:\n    append: {{path: logs/events.jsonl, value: {{n: \"{{{{ inputs.n }}}}\"}}}}\n{fallback}")
    };
    p.pipeline("log", &yaml(""));
    for n in 1..=2 {
        let (outcome, _) = p.run("log", &registry(), json!({"n": n}), None).await;
        assert_eq!(outcome.outputs["log"]["locked"], json!(false));
    }
    assert_eq!(
        std::fs::read_to_string(p.path("logs/events.jsonl")).unwrap(),
        "{\"n\":1}\n{\"n\":2}\n"
    );

    p.file("logs/events.jsonl.lock", "");
    let (outcome, _) = p.run("log", &registry(), json!({"n": 3}), None).await;
    assert!(failure(&outcome).contains("locked"), "{}", failure(&outcome));
    p.pipeline("log", &yaml("    on_locked: {output: {locked: true}}\n"));
    let (outcome, _) = p.run("log", &registry(), json!({"n": 4}), None).await;
    assert_eq!(*outcome.outputs["log"], json!({"locked": true}));
    assert_eq!(
        std::fs::read_to_string(p.path("logs/events.jsonl"))
            .unwrap()
            .lines()
            .count(),
        2
    );
}

#[tokio::test]
async fn emit_prints_exact_lines() {
    let p = Project::new();
    p.pipeline("hello", "pipeline: hello\ninputs:\n  who: {type: array}\nstages:\n  greet:\n    emit: \"hello {{ inputs.who | join(', ') }}\"\n  list:\n    needs: [greet]\n    emit: \"{% for w in inputs.who %}- {{ w }}\\n{% endfor %}\"\n");
    let (outcome, output) = p.run("hello", &registry(), json!({"who": ["Ann", "Bo"]}), None).await;
    assert_eq!(outcome.report.status, RunStatus::Ok);
    assert_eq!(output.captured(), "hello Ann, Bo\n- Ann\n- Bo\n");
}

#[tokio::test]
async fn exit_ends_the_run_with_its_code() {
    let p = Project::new();
    p.pipeline("stop", "pipeline: stop\noutput: \"{{ {'later_ran': later is not none} }}\"\nstages:\n  first:\n    emit: before\n  stop:\n    needs: [first]\n    exit: {code: 3, status: no_match}\n  later:\n    needs: [stop]\n    emit: after\n");
    let (outcome, output) = p.run("stop", &registry(), json!({}), None).await;
    assert!(
        matches!(&outcome.result, Ok(Ending::Exited { code: 3, status: Some(s), output: Some(o) })
            if s == "no_match" && *o == json!({"later_ran": false})),
        "the output is evaluated over what ran: {:?}",
        outcome.result
    );
    assert_eq!(outcome.exit_code(), 3);
    assert_eq!(outcome.report.status, RunStatus::Exited);
    assert_eq!(stage(&outcome, "stop").status, StageStatus::Exited);
    assert_eq!(stage(&outcome, "later").status, StageStatus::NotRun);
    assert_eq!(output.captured(), "before\n");
}

/// A server answering every HTTP request with a JSON echo of it.
async fn echo_server() -> LlmServer {
    LlmServer::respond_with(Arc::new(|request: &Recorded| {
        let body = match &request.body {
            Value::String(_) => Value::Null, // empty or not JSON
            json => json.clone(),
        };
        Reply::json(
            201,
            json!({"method": request.method, "target": request.path, "body": body}),
        )
    }))
    .await
}

#[tokio::test]
async fn http_gets_and_posts_json() {
    let server = echo_server().await;
    let base = server.url();
    let p = Project::new();
    p.pipeline(
        "web",
        &format!("pipeline: web\nstages:\n  get:\n    http: {{url: \"{base}/search\", query: {{q: zombie}}}}\n  post:\n    http: {{method: post, url: \"{base}/items\", body: {{n: 1}}}}\n"),
    );
    let (outcome, _) = p.run("web", &registry(), json!({}), None).await;
    assert_eq!(
        *outcome.outputs["get"],
        json!({"status": 201, "body": {"method": "GET", "target": "/search?q=zombie", "body": null}})
    );
    assert_eq!(
        *outcome.outputs["post"],
        json!({"status": 201, "body": {"method": "POST", "target": "/items", "body": {"n": 1}}})
    );
}

#[tokio::test]
async fn exec_runs_a_command_with_stdin() {
    let p = Project::new();
    p.pipeline("sh", "pipeline: sh\nstages:\n  echo:\n    exec: {command: [echo, hi there]}\n  cat:\n    exec: {command: [cat], stdin: \"piped {{ 1 + 1 }}\"}\n  fails:\n    exec: {command: [sh, -c, \"echo oops >&2; exit 4\"]}\n");
    let (outcome, _) = p.run("sh", &registry(), json!({}), None).await;
    assert_eq!(
        *outcome.outputs["echo"],
        json!({"code": 0, "stdout": "hi there\n", "stderr": ""})
    );
    assert_eq!(
        *outcome.outputs["cat"],
        json!({"code": 0, "stdout": "piped 2", "stderr": ""})
    );
    assert_eq!(
        *outcome.outputs["fails"],
        json!({"code": 4, "stdout": "", "stderr": "oops\n"})
    );
}

#[tokio::test]
async fn schema_gate_on_fn_output_fails_or_falls_back() {
    let p = Project::new();
    p.file("schemas/label.schema.json", LABEL_SCHEMA);
    let yaml = |fallback: &str| {
        format!("pipeline: gate\nstages:\n  guess:\n    fn: t.echo\n    with: {{label: bird}}\n    output: label.schema.json\n{fallback}")
    };
    p.pipeline("gate", &yaml(""));
    let (outcome, _) = p.run("gate", &registry(), json!({}), None).await;
    let message = failure(&outcome);
    assert!(
        message.contains("stage `guess`")
            && message.contains("output fails schemas/label.schema.json")
            && message.contains("/label"),
        "{message}"
    );
    assert_eq!(stage(&outcome, "guess").status, StageStatus::Failed);
    // The failure is typed: a caller can tell a gate from a lock or an outage.
    let Err(error) = &outcome.result else { unreachable!() };
    assert!(
        matches!(&*error.cause, StageFailure::Gate { file, errors, .. }
            if file == "schemas/label.schema.json" && errors.iter().any(|e| e.starts_with("/label"))),
        "{:?}",
        error.cause
    );

    p.pipeline("gate", &yaml("    on_invalid: {output: {label: cat}}\n"));
    let (outcome, _) = p.run("gate", &registry(), json!({}), None).await;
    assert_eq!(*outcome.outputs["guess"], json!({"label": "cat"}));
}

/// A failure deep in the graph keeps its type all the way up: a native
/// function's own error inside a `for_each` inside a sub-pipeline, and a path
/// refused by a `read` there, are still told apart by the caller.
#[tokio::test]
async fn failures_keep_their_type_through_iterations_and_sub_pipelines() {
    let mut registry = registry();
    registry.function(
        "t.open",
        Reach::NONE,
        "opens a file that is not there",
        |_: Value, _: &CallContext| std::fs::read("no-such-file").map(|_| Value::Null).map_err(Into::into),
    );
    let p = Project::new();
    p.pipeline(
        "inner",
        "pipeline: inner\nstages:\n  each:\n    for_each: {items: [1, 2], as: n}\n    fn: t.open\n",
    );
    p.pipeline(
        "outside",
        "pipeline: outside\nstages:\n  peek:\n    read: {path: ../secret.json}\n",
    );
    let outer = |sub: &str| format!("pipeline: outer\nstages:\n  sub:\n    run: {sub}\n");

    p.pipeline("outer", &outer("inner"));
    let (outcome, _) = p.run("outer", &registry, json!({}), None).await;
    let Err(error) = &outcome.result else {
        panic!("the run did not fail")
    };
    let StageFailure::SubPipeline(inner) = &*error.cause else {
        panic!("{:?}", error.cause)
    };
    assert_eq!((inner.pipeline.as_str(), inner.stage.as_str()), ("inner", "each"));
    let StageFailure::Iteration { at, source } = &*inner.cause else {
        panic!("{:?}", inner.cause)
    };
    assert_eq!(at, "item 0");
    let StageFailure::Native(engine::registry::NativeError::Failed { function, source }) = &**source else {
        panic!("{source:?}")
    };
    assert_eq!(&**function, "t.open");
    let io = source
        .downcast_ref::<std::io::Error>()
        .expect("the function's own error");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);

    p.pipeline("outer", &outer("outside"));
    let (outcome, _) = p.run("outer", &registry, json!({}), None).await;
    let Err(error) = &outcome.result else {
        panic!("the run did not fail")
    };
    let StageFailure::SubPipeline(inner) = &*error.cause else {
        panic!("{:?}", error.cause)
    };
    assert!(matches!(&*inner.cause, StageFailure::Path(_)), "{:?}", inner.cause);
    assert!(failure(&outcome).contains("../secret.json"), "{}", failure(&outcome));
}

/// A product's functions may fail with `anyhow` errors carrying context:
/// the stage's message shows the whole chain, outermost first.
#[tokio::test]
async fn a_native_errors_context_chain_reaches_the_message() {
    use anyhow::Context;
    let mut registry = registry();
    registry.function(
        "t.load",
        Reach::NONE,
        "fails with context",
        |_: Value, _: &CallContext| {
            let inner: anyhow::Result<Value> = Err(anyhow::anyhow!("disk full"));
            Ok(inner.context("cannot write the index")?)
        },
    );
    let p = Project::new();
    p.pipeline("load", "pipeline: load\nstages:\n  load:\n    fn: t.load\n");
    let (outcome, _) = p.run("load", &registry, json!({}), None).await;
    let message = failure(&outcome);
    assert!(message.ends_with("cannot write the index: disk full"), "{message}");
}

/// The language says "an input with a default is optional"; `default: null`
/// is a default (ENGINE BUG: serde reads it as no default).
#[tokio::test]
async fn an_input_defaulting_to_null_is_optional() {
    let p = Project::new();
    p.pipeline("opt", "pipeline: opt\ninputs:\n  answer: {type: any, default: null}\noutput: \"{{ inputs.answer }}\"\nstages:\n  noop:\n    emit: x\n");
    let (outcome, _) = p.run("opt", &registry(), json!({}), None).await;
    assert_eq!(value_of(&outcome), Value::Null);
}

/// A cancelled run (Ctrl+C, a cancelled MCP call) starts no further stage.
#[tokio::test]
async fn a_cancelled_run_starts_no_stage() {
    let p = Project::new();
    p.pipeline(
        "calc",
        "pipeline: calc\nstages:\n  double:\n    fn: t.double\n    with: {n: 2}\n",
    );
    let pipeline = p.compile("calc", &registry()).unwrap_or_else(|d| panic!("{d}"));
    let rt = p.runtime(None);
    rt.cancel().cancel();
    let outcome = engine::run(&pipeline, pipeline.bind_inputs(Default::default()).unwrap(), &rt).await;
    let error = outcome.result.as_ref().unwrap_err();
    assert!(matches!(*error.cause, StageFailure::Cancelled), "{error}");
    assert_eq!(stage(&outcome, "double").status, StageStatus::NotRun);
}
