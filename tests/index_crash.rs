//! `kill -9` in the middle of an index run with a slow model tagger, then a
//! rerun: the rerun resumes from `assets.jsonl.partial` (finished batches
//! are not asked again) and ends with the same files as a run that was never
//! interrupted.
//!
//! The tagger is an OpenAI-compatible server on 127.0.0.1 that answers each
//! batch after a delay with one row per guid the prompt names.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");
const ASSETS: usize = 24;
const BATCH: usize = 3;

/// A slow tagger: counts requests, answers each after `delay`.
struct SlowTagger {
    port: u16,
    requests: Arc<AtomicUsize>,
}

impl SlowTagger {
    fn start(delay: Duration) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("address").port();
        let requests = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let counter = Arc::clone(&counter);
                std::thread::spawn(move || serve(stream, &counter, delay));
            }
        });
        Self { port, requests }
    }

    fn count(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Answer keep-alive requests on one connection until the client closes it.
fn serve(stream: TcpStream, counter: &AtomicUsize, delay: Duration) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut writer = stream;
    loop {
        let mut length = 0;
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        counter.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(delay);
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let answer = json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "slow-tagger",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": tags_for(&request).to_string()}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        })
        .to_string();
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            answer.len()
        );
        if writer
            .write_all(head.as_bytes())
            .and_then(|()| writer.write_all(answer.as_bytes()))
            .is_err()
        {
            return;
        }
    }
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
fn project(dir: &Path, port: u16) {
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
    let config = format!(
        "batch_size: {BATCH}\nparallel_subagents: 1\nllm:\n  provider: openai\n  base_url: http://127.0.0.1:{port}/v1\n  retries: 0\n  timeout_s: 20\n"
    );
    std::fs::create_dir_all(dir.join(".claude")).expect("create .claude");
    std::fs::write(dir.join(".claude/unity-assets.yml"), config).expect("write config");
}

fn index_dir(dir: &Path) -> PathBuf {
    dir.join(".claude/unity-asset-index")
}

fn reindex(dir: &Path) -> std::process::Output {
    Command::new(BIN)
        .args(["--project", dir.to_str().expect("utf-8 path"), "reindex"])
        .env_remove("OPENAI_API_KEY")
        // The project names its (local) model server: its user trusts it.
        .env("UNITY_ASSETS_TRUST", "1")
        .output()
        .expect("run unity-assets")
}

fn partial_lines(dir: &Path) -> usize {
    std::fs::read_to_string(index_dir(dir).join("assets.jsonl.partial"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[test]
fn killed_run_resumes_to_the_same_files() {
    let tagger = SlowTagger::start(Duration::from_millis(250));
    let batches = ASSETS.div_ceil(BATCH);

    // An uninterrupted run, for reference.
    let whole = tempfile::tempdir().expect("temp dir");
    project(whole.path(), tagger.port);
    let out = reindex(whole.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(tagger.count(), batches, "one call per batch when every row is good");
    let expected = std::fs::read(index_dir(whole.path()).join("assets.jsonl")).expect("assets.jsonl");
    assert!(
        String::from_utf8_lossy(&expected).contains("slow-tagger"),
        "rows come from the model"
    );

    // The same project, killed once a few batches are checkpointed.
    let crashed = tempfile::tempdir().expect("temp dir");
    project(crashed.path(), tagger.port);
    let before = tagger.count();
    let mut child = Command::new(BIN)
        .args(["--project", crashed.path().to_str().expect("utf-8 path"), "reindex"])
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

    let asked_before_resume = tagger.count();
    let out = reindex(crashed.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let asked_on_resume = tagger.count() - asked_before_resume;
    assert!(asked_on_resume <= batches - done_at_kill, "finished batches were asked again: {asked_on_resume} calls on resume, {done_at_kill} of {batches} batches were done");
    assert!(asked_before_resume > before, "the killed run had asked the tagger");

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
