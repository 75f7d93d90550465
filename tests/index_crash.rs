//! `kill -9` in the middle of an index run with a slow model tagger, then a
//! rerun: the rerun resumes from `assets.jsonl.partial` (finished batches
//! are not asked again) and ends with the same files as a run that was never
//! interrupted.
//!
//! The tagger is an OpenAI-compatible server on 127.0.0.1 that answers each
//! batch after a delay with one row per guid the prompt names. The rerun asks
//! a server of its own: the killed run's last request can reach the first
//! server after the kill, and would count as the rerun's.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use test_support::cli::{self, Run};
use test_support::llm_server::{LlmServer, Recorded, Reply};

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");
const ASSETS: usize = 24;
const BATCH: usize = 3;

/// A slow tagger: answers each batch after `delay` with a row per guid.
async fn slow_tagger(delay: Duration) -> LlmServer {
    LlmServer::respond_with(Arc::new(move |request: &Recorded| {
        let answer = json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "slow-tagger",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": tags_for(&request.body).to_string()}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        });
        Reply::json(200, answer).after(delay)
    }))
    .await
}

/// One row per distinct guid named in the request's messages.
fn tags_for(request: &Value) -> Value {
    let text = request["messages"].to_string();
    let mut guids: Vec<&str> = text
        .as_bytes()
        .windows(32)
        .enumerate()
        .filter(|(_, w)| w.iter().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b)))
        .map(|(i, _)| &text[i..i + 32])
        .collect();
    guids.sort_unstable();
    guids.dedup();
    let rows: Vec<Value> = guids
        .iter()
        .map(|g| json!({"guid": g, "llm_tags": ["scripted", "slow-tagger"], "llm_summary": format!("A scripted summary of asset {}.", &g[..8])}))
        .collect();
    json!({"rows": rows})
}

/// A project of `ASSETS` prefabs under two vendor folders, with a config
/// pointing the model provider at the tagger.
fn project(dir: &Path, tagger: &LlmServer) {
    for i in 0..ASSETS {
        let vendor = if i % 2 == 0 { "ZombieKit" } else { "NatureForest" };
        let folder = dir.join(format!("Assets/{vendor}/Prefabs"));
        std::fs::create_dir_all(&folder).expect("create folder");
        let name = format!("Thing_{i:02}.prefab");
        std::fs::write(folder.join(&name), "%YAML 1.1\n").expect("write asset");
        let guid = format!("{:032x}", 0xabc000 + i);
        std::fs::write(
            folder.join(format!("{name}.meta")),
            format!("fileFormatVersion: 2\nguid: {guid}\nPrefabImporter:\n  userData: \n"),
        )
        .expect("write meta");
    }
    use_tagger(dir, tagger);
}

/// Point the project's model provider at `tagger`, at minimal depth: rows
/// without mtimes, so two projects made seconds apart give the same bytes.
fn use_tagger(dir: &Path, tagger: &LlmServer) {
    let config = format!(
        "index_depth: minimal\nbatch_size: {BATCH}\nparallel_subagents: 1\nllm:\n  provider: openai\n  base_url: {}/v1\n  retries: 0\n  timeout_s: 20\n",
        tagger.url()
    );
    std::fs::create_dir_all(dir.join(".claude")).expect("create .claude");
    std::fs::write(dir.join(".claude/unity-assets.yml"), config).expect("write config");
}

fn index_dir(dir: &Path) -> PathBuf {
    dir.join(".claude/unity-asset-index")
}

fn reindex(dir: &Path) -> Run {
    Run::of(
        cli::command(Path::new(BIN), dir)
            .arg("reindex")
            .env_remove("OPENAI_API_KEY")
            // The project names its (local) model server: its user trusts it.
            .env("UNITY_ASSETS_TRUST", "1"),
    )
}

fn partial_lines(dir: &Path) -> usize {
    std::fs::read_to_string(index_dir(dir).join("assets.jsonl.partial"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_run_resumes_to_the_same_files() {
    let tagger = slow_tagger(Duration::from_millis(250)).await;
    let resume_tagger = slow_tagger(Duration::from_millis(250)).await;
    // The runs below block; the servers answer on the runtime's other worker.
    tokio::task::block_in_place(|| killed_run_resumes(&tagger, &resume_tagger));
}

fn killed_run_resumes(tagger: &LlmServer, resume_tagger: &LlmServer) {
    let batches = ASSETS.div_ceil(BATCH);

    // An uninterrupted run, for reference.
    let whole = tempfile::tempdir().expect("temp dir");
    project(whole.path(), tagger);
    let out = reindex(whole.path());
    assert!(out.code == 0, "{}", out.stderr);
    assert_eq!(
        tagger.requests().len(),
        batches,
        "one call per batch when every row is good"
    );
    let expected = std::fs::read(index_dir(whole.path()).join("assets.jsonl")).expect("assets.jsonl");
    assert!(
        String::from_utf8_lossy(&expected).contains("slow-tagger"),
        "rows come from the model"
    );

    // The same project, killed once a few batches are checkpointed.
    let crashed = tempfile::tempdir().expect("temp dir");
    project(crashed.path(), tagger);
    let before = tagger.requests().len();
    let mut child = cli::command(Path::new(BIN), crashed.path())
        .arg("reindex")
        .env("UNITY_ASSETS_TRUST", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start unity-assets");
    let started = Instant::now();
    while partial_lines(crashed.path()) < 2 * BATCH {
        assert!(started.elapsed() < Duration::from_secs(60), "no batch was checkpointed");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    let done_at_kill = partial_lines(crashed.path()) / BATCH;
    assert!(done_at_kill < batches, "the run was killed before it finished");
    assert!(
        !index_dir(crashed.path()).join("assets.jsonl").exists(),
        "no final file from a killed run"
    );

    assert!(tagger.requests().len() > before, "the killed run had asked the tagger");

    use_tagger(crashed.path(), resume_tagger);
    let out = reindex(crashed.path());
    assert!(out.code == 0, "{}", out.stderr);
    let asked_on_resume = resume_tagger.requests().len();
    assert!(asked_on_resume <= batches - done_at_kill, "finished batches were asked again: {asked_on_resume} calls on resume, {done_at_kill} of {batches} batches were done");

    eprintln!("killed after {done_at_kill} of {batches} batches; the rerun asked {asked_on_resume} times");
    let got = std::fs::read(index_dir(crashed.path()).join("assets.jsonl")).expect("assets.jsonl");
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&expected));
    {
        let file = "packages.jsonl";
        assert_eq!(
            std::fs::read(index_dir(crashed.path()).join(file)).expect("file"),
            std::fs::read(index_dir(whole.path()).join(file)).expect("file"),
            "{file} differs"
        );
    }
    assert!(
        !index_dir(crashed.path()).join("assets.jsonl.partial").exists(),
        "the partial is gone after a finished run"
    );
}
