//! A scripted HTTP/1.1 server on 127.0.0.1 that stands in for an LLM vendor
//! (and, in the product's tests, for web search APIs and web pages).
//!
//! It records every request (method, path, headers, JSON body) and answers
//! them from a script, in order; the last reply answers every request after
//! the script runs out. Replies can come late ([`Reply::after`]) and
//! misbehave the way real servers and proxies do: never answer, or break off
//! mid-body. Hand-rolled on tokio so tests control the raw bytes.
//!
//! ```ignore
//! let ok = Reply::anthropic_tool("out", json!({"ok": true}), json!({"input_tokens": 3, "output_tokens": 1}));
//! let server = LlmServer::start(vec![Reply::error(500, "overloaded"), ok]).await;
//! // point a provider at server.url(), call it, then inspect server.requests()
//! ```

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A complete response.
    Respond {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Reads the request and never answers, so the client's timeout fires.
    Silence,
    /// Announces twice the body's length, sends the body, and closes.
    Truncated { body: String },
    /// A 200 JSON body sent without a length, ended by closing the
    /// connection, so a client learns its size only by reading it.
    Unsized { body: String },
    /// A complete response whose body is raw bytes (not necessarily UTF-8).
    Bytes {
        status: u16,
        content_type: String,
        body: Vec<u8>,
    },
    /// `reply`, sent once `delay` has passed (a slow model).
    Delayed { delay: Duration, reply: Box<Reply> },
}

impl Reply {
    /// A JSON response.
    pub fn json(status: u16, body: Value) -> Self {
        Self::text(status, "application/json", &body.to_string())
    }

    /// A response with any content type.
    pub fn text(status: u16, content_type: &str, body: &str) -> Self {
        Reply::Respond {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body: body.into(),
        }
    }

    /// An error response in the shape both vendors use.
    pub fn error(status: u16, message: &str) -> Self {
        Self::json(
            status,
            json!({"type": "error", "error": {"type": "api_error", "message": message}}),
        )
    }

    /// This reply, sent `delay` after the request arrived.
    pub fn after(self, delay: Duration) -> Self {
        Reply::Delayed {
            delay,
            reply: Box::new(self),
        }
    }

    pub fn with_header(self, name: &str, value: &str) -> Self {
        match self {
            Reply::Respond {
                status,
                mut headers,
                body,
            } => {
                headers.push((name.into(), value.into()));
                Reply::Respond { status, headers, body }
            }
            other => other,
        }
    }

    /// An Anthropic Messages answer holding one `tool_use` block.
    pub fn anthropic_tool(tool: &str, input: Value, usage: Value) -> Self {
        Self::anthropic(
            json!([{"type": "tool_use", "id": "toolu_01", "name": tool, "input": input}]),
            "tool_use",
            usage,
        )
    }

    /// An Anthropic Messages answer holding one text block.
    pub fn anthropic_text(text: &str, stop_reason: &str) -> Self {
        Self::anthropic(
            json!([{"type": "text", "text": text}]),
            stop_reason,
            json!({"input_tokens": 10, "output_tokens": 5}),
        )
    }

    fn anthropic(content: Value, stop_reason: &str, usage: Value) -> Self {
        Self::json(
            200,
            json!({
                "id": "msg_01", "type": "message", "role": "assistant",
                "model": "claude-test-served", "content": content,
                "stop_reason": stop_reason, "usage": usage,
            }),
        )
    }

    /// An OpenAI Chat Completions answer whose message content is `content`.
    pub fn openai_content(content: &str, usage: Value) -> Self {
        Self::json(
            200,
            json!({
                "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test-served",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": usage,
            }),
        )
    }
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Value::String` when it was not JSON).
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Answers a request from its content (a model that reads the prompt).
pub type Responder = Arc<dyn Fn(&Recorded) -> Reply + Send + Sync>;

/// The running server; it stops with the test's runtime. Its replies come
/// from a responder, or, for a server started with [`LlmServer::routed`],
/// from the route whose path the request's path (without its query)
/// equals, or else from the script in order.
pub struct LlmServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl LlmServer {
    pub async fn start(script: Vec<Reply>) -> Self {
        assert!(!script.is_empty(), "a script needs at least one reply");
        Self::serve(script, None, vec![]).await
    }

    /// A server answering each path with its own reply (404 for others),
    /// whatever order concurrent requests arrive in.
    pub async fn routed(routes: Vec<(&str, Reply)>) -> Self {
        let routes = routes.into_iter().map(|(p, r)| (p.to_owned(), r)).collect();
        Self::serve(vec![Reply::text(404, "text/plain", "not found")], None, routes).await
    }

    /// A server whose every answer `responder` computes from the request.
    pub async fn respond_with(responder: Responder) -> Self {
        Self::serve(vec![], Some(responder), vec![]).await
    }

    async fn serve(script: Vec<Reply>, responder: Option<Responder>, routes: Vec<(String, Reply)>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let state = Arc::new(Script {
            replies: script,
            responder,
            routes,
            next: AtomicUsize::new(0),
            requests: requests.clone(),
        });
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, state.clone()));
            }
        });
        Self { addr, requests }
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().expect("request log").clone()
    }
}

struct Script {
    replies: Vec<Reply>,
    responder: Option<Responder>,
    routes: Vec<(String, Reply)>,
    next: AtomicUsize,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Script {
    fn reply_to(&self, request: &Recorded) -> Reply {
        if let Some(responder) = &self.responder {
            return responder(request);
        }
        let path = request.path.split('?').next().unwrap_or(&request.path);
        if let Some((_, reply)) = self.routes.iter().find(|(p, _)| p == path) {
            return reply.clone();
        }
        let index = self.next.fetch_add(1, Ordering::SeqCst);
        self.replies[index.min(self.replies.len() - 1)].clone()
    }
}

/// Serves one keep-alive connection until the client closes it.
async fn serve(stream: TcpStream, script: Arc<Script>) {
    let mut stream = BufReader::new(stream);
    while let Some(request) = read_request(&mut stream).await {
        let mut reply = script.reply_to(&request);
        script.requests.lock().expect("request log").push(request);
        while let Reply::Delayed { delay, reply: late } = reply {
            tokio::time::sleep(delay).await;
            reply = *late;
        }
        let bytes = match &reply {
            Reply::Respond { status, headers, body } => response(*status, headers, body.len(), body),
            Reply::Bytes {
                status,
                content_type,
                body,
            } => {
                let headers = [("content-type".to_owned(), content_type.clone())];
                let mut bytes = response(*status, &headers, body.len(), "");
                bytes.extend_from_slice(body);
                bytes
            }
            Reply::Delayed { .. } => unreachable!("delays are waited out above"),
            Reply::Silence => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return;
            }
            Reply::Unsized { body } => {
                let head = "HTTP/1.1 200 Scripted\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n";
                let _ = stream.get_mut().write_all(head.as_bytes()).await;
                let _ = stream.get_mut().write_all(body.as_bytes()).await;
                return;
            }
            Reply::Truncated { body } => {
                let headers = [("content-type".to_owned(), "application/json".to_owned())];
                let bytes = response(200, &headers, body.len() * 2, body);
                let _ = stream.get_mut().write_all(&bytes).await;
                return;
            }
        };
        if stream.get_mut().write_all(&bytes).await.is_err() {
            return;
        }
    }
}

fn response(status: u16, headers: &[(String, String)], content_length: usize, body: &str) -> Vec<u8> {
    let mut head = format!("HTTP/1.1 {status} Scripted\r\ncontent-length: {content_length}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    bytes
}

async fn read_request(stream: &mut BufReader<TcpStream>) -> Option<Recorded> {
    let mut line = String::new();
    stream.read_line(&mut line).await.ok().filter(|&n| n > 0)?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        stream.read_line(&mut line).await.ok().filter(|&n| n > 0)?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await.ok()?;
    let body =
        serde_json::from_slice(&body).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    Some(Recorded {
        method,
        path,
        headers,
        body,
    })
}
