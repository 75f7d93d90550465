//! Hostile clients and servers around the binary's own servers and
//! downloads (issue 41): a flood of MCP sessions, JSON-RPC batches and
//! nesting 100,000 deep, a `graph` call naming a file outside the project,
//! a package index that never stops sending, and `--from` a FIFO. Every
//! run has a bound, so a hang fails instead of blocking the suite; all
//! traffic stays on 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use test_support::cli::{self, Run};
use test_support::project::Project;

const BIN: &str = env!("CARGO_BIN_EXE_unity-assets");
/// The HTTP server's session bound (src/mcp_server/sessions.rs).
const MAX_SESSIONS: usize = 64;
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

/// JSON nested `depth` arrays deep.
fn deep(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// A server started by a test, killed when the test ends (passed or not).
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `mcp --http 0` on `project`, and its URL.
fn http_server(project: &Path) -> (Server, String) {
    let mut child = cli::command(Path::new(BIN), project)
        .args(["mcp", "--http", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the HTTP server");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    // Keep reading, so the server's later log lines never meet a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let url = line.split_whitespace().last().unwrap_or_default().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{line}");
    (Server(child), url)
}

/// POST `body` to the MCP endpoint (in `session`): status, session id, body.
async fn post(url: &str, session: Option<&str>, body: String) -> (u16, Option<String>, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .timeout(Duration::from_secs(30))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(body);
    if let Some(id) = session {
        request = request.header("Mcp-Session-Id", id);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let id = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (status, id, response.text().await.unwrap_or_default())
}

#[tokio::test]
async fn http_sessions_stay_at_the_bound_and_the_least_recently_used_go_first() {
    let project = Project::generated(BIN, 5);
    let (_server, url) = http_server(project.path());
    let mut sessions = vec![];
    for _ in 0..3 * MAX_SESSIONS {
        let (status, id, body) = post(&url, None, INITIALIZE.into()).await;
        assert_eq!(status, 200, "{body}");
        let id = id.expect("a session id");
        assert_eq!(post(&url, Some(&id), INITIALIZED.into()).await.0, 202);
        sessions.push(id);
    }
    let (closed, open) = sessions.split_at(sessions.len() - MAX_SESSIONS);
    for id in open {
        assert_eq!(post(&url, Some(id), PING.into()).await.0, 200, "a recent session {id}");
    }
    for id in closed {
        assert_eq!(post(&url, Some(id), PING.into()).await.0, 404, "an old session {id}");
    }
}

/// `mcp` over stdio on `project`: the answers to initialize and to `lines`,
/// collected for at most a minute.
fn stdio_answers(project: &Path, lines: &[String]) -> Vec<Value> {
    let mut child = cli::command(Path::new(BIN), project)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the stdio server");
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    let server = Server(child);
    let (sender, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    for line in [INITIALIZE, INITIALIZED]
        .into_iter()
        .chain(lines.iter().map(String::as_str))
    {
        writeln!(stdin, "{line}").expect("the server reads");
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut answers = vec![];
    while answers.len() < lines.len() + 1 {
        let Ok(line) = received.recv_timeout(deadline.saturating_duration_since(Instant::now())) else {
            break;
        };
        answers.push(serde_json::from_str::<Value>(&line).expect("each answer is JSON"));
    }
    drop(stdin);
    drop(server);
    answers
}

#[tokio::test]
async fn a_batch_and_json_nested_100000_deep_are_answered_over_stdio_and_http() {
    let project = Project::generated(BIN, 5);
    let answers = stdio_answers(
        project.path(),
        &[format!("[{PING}]"), deep(100_000), PING.replace("\"id\":1", "\"id\":2")],
    );
    let errors: Vec<&Value> = answers.iter().filter(|a| a["id"].is_null()).collect();
    assert_eq!(errors.len(), 2, "{answers:?}");
    assert_eq!(errors[0]["error"]["code"], -32600, "{answers:?}");
    let batch = errors[0]["error"]["message"].as_str().unwrap();
    assert!(batch.contains("batches are not supported"), "{batch}");
    assert_eq!(errors[1]["error"]["code"], -32700, "{answers:?}");
    // The server lived on to answer the next message.
    assert!(
        answers.iter().any(|a| a["id"] == 2 && a["result"].is_object()),
        "{answers:?}"
    );

    let (_server, url) = http_server(project.path());
    for (body, code) in [(format!("[{INITIALIZE}]"), -32600), (deep(100_000), -32700)] {
        let (status, _, answer) = post(&url, None, body).await;
        assert_eq!(status, 400, "{answer}");
        let answer: Value = serde_json::from_str(&answer).expect("a JSON-RPC answer");
        assert_eq!(
            (answer["id"].clone(), answer["error"]["code"].clone()),
            (Value::Null, json!(code))
        );
    }
    assert_eq!(post(&url, None, INITIALIZE.into()).await.0, 200);
}

/// A pipeline byte-identical to the embedded one, as `eject` writes it.
const PICK: &str = include_str!("../pipelines/pick.yaml");

#[cfg(unix)]
#[test]
fn graph_reads_pipelines_and_override_files_only_and_echoes_nothing_of_other_files() {
    let project = Project::generated(BIN, 5);
    project.override_file("pipelines/pick.yaml", PICK);
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("credentials.yaml");
    std::fs::write(&secret, "api_key: sk-live-0123456789\npassword: hunter2\n").unwrap();
    // The project and `outside` are siblings in the temp folder.
    let up = format!(
        "../{}/credentials.yaml",
        outside.path().file_name().unwrap().to_str().unwrap()
    );
    let names = [
        secret.display().to_string(),
        up.clone(),
        format!(".claude/unity-assets/pipelines/../../../{up}"),
        "/etc/hostname.yml".to_owned(),
    ];
    let call = |id: usize, name: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "graph", "arguments": {"name": name}}})
        .to_string()
    };
    let mut lines: Vec<String> = names.iter().enumerate().map(|(i, n)| call(10 + i, n)).collect();
    lines.push(
        json!({"jsonrpc": "2.0", "id": 20, "method": "resources/read",
               "params": {"uri": format!("unity-assets://graph/{}", secret.display())}})
        .to_string(),
    );
    lines.push(call(30, ".claude/unity-assets/pipelines/pick.yaml"));
    lines.push(call(
        31,
        &project
            .path()
            .join(".claude/unity-assets/pipelines/pick.yaml")
            .display()
            .to_string(),
    ));
    lines.push(call(32, "pick"));
    let answers = stdio_answers(project.path(), &lines);
    let answer = |answers: &[Value], id: usize| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("no answer {id} in {answers:?}"))
            .to_string()
    };
    let leaks = |text: &str| {
        ["api_key", "sk-live", "password", "hunter2"]
            .into_iter()
            .find(|s| text.contains(s))
    };
    for id in (10..10 + names.len()).chain([20]) {
        let text = answer(&answers, id);
        assert_eq!(leaks(&text), None, "answer {id}: {text}");
        assert!(text.contains("`name`"), "answer {id} names the argument: {text}");
        assert!(text.contains("list_pipelines"), "answer {id} names the fix: {text}");
    }
    for id in [30, 31, 32] {
        assert!(
            answer(&answers, id).contains("flowchart TD"),
            "{}",
            answer(&answers, id)
        );
    }

    // An override file that links out is not read either.
    std::os::unix::fs::symlink(&secret, project.path().join(".claude/unity-assets/pipelines/leak.yaml")).unwrap();
    let answers = stdio_answers(
        project.path(),
        &[call(40, ".claude/unity-assets/pipelines/leak.yaml"), call(41, "leak")],
    );
    for id in [40, 41] {
        let text = answer(&answers, id);
        assert_eq!(leaks(&text), None, "answer {id}: {text}");
    }
}

/// A package index whose listing never ends (bounded here at 64 MiB): how
/// many bytes it sent before the client hung up.
fn endless_index() -> (String, mpsc::Receiver<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (sent, count) = mpsc::channel();
    std::thread::spawn(move || {
        let Ok((mut stream, _)) = listener.accept() else { return };
        let mut request = [0; 4096];
        let _ = stream.read(&mut request);
        let mut total = 0;
        if stream
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.pypi.simple.v1+json\r\nConnection: close\r\n\r\n{\"files\": [")
            .is_ok()
        {
            let chunk = "{\"filename\": \"x\"},".repeat(4096);
            while total < 64 << 20 && stream.write_all(chunk.as_bytes()).is_ok() {
                total += chunk.len();
            }
        }
        let _ = sent.send(total);
    });
    (url, count)
}

#[test]
fn model_install_bounds_the_package_listing() {
    let project = Project::generated(BIN, 1);
    let (url, sent) = endless_index();
    let run = Run::within(
        cli::command(Path::new(BIN), project.path())
            .args(["model", "install", "--index-url", &url])
            .env("XDG_CACHE_HOME", project.path().join("cache")),
        Duration::from_secs(120),
    )
    .expect("model install ends");
    assert_ne!(run.code, 0, "{}", run.output());
    assert!(run.stderr.contains("sends more than 8.00 MiB"), "{}", run.output());
    assert!(run.stderr.contains("--index-url"), "{}", run.output());
    let sent = sent.recv_timeout(Duration::from_secs(30)).unwrap();
    assert!(sent < 32 << 20, "the client read {sent} bytes");
}

#[cfg(unix)]
#[test]
fn model_install_from_a_fifo_is_refused_without_hanging() {
    let project = Project::generated(BIN, 1);
    let fifo = project.path().join("wheel.whl");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let run = Run::within(
        cli::command(Path::new(BIN), project.path())
            .args([
                "model",
                "install",
                "--from",
                fifo.to_str().unwrap(),
                "--index-url",
                "http://127.0.0.1:9",
            ])
            .env("XDG_CACHE_HOME", project.path().join("cache")),
        Duration::from_secs(30),
    )
    .expect("model install does not hang on a FIFO");
    assert_eq!(run.code, 2, "{}", run.output());
    assert!(run.stderr.contains("is a FIFO, not a regular file"), "{}", run.output());
    assert!(run.stderr.contains("--from"), "{}", run.output());
}
