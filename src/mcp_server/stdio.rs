//! The stdio transport: one JSON-RPC message per line. Unlike rmcp's, a
//! line that is not JSON (or nested deeper than serde_json's 128 levels) is
//! answered with -32700 (parse error) and a line that is JSON but no
//! message, a batch, or longer than [`MAX_LINE_BYTES`], with -32600 (invalid
//! request), as JSON-RPC 2.0 asks; a client that sent garbage then learns it
//! instead of waiting forever. The HTTP transport answers with the same
//! [`parse`].

use std::future::Future;
use std::sync::Arc;

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The longest message read, a line here and a request body over HTTP: a
/// call with a 10 MB argument is still read, so its answer names the input
/// that is too long.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

pub struct LineTransport<R, W> {
    read: BufReader<R>,
    write: Arc<Mutex<W>>,
    /// The line read so far: kept here, as `receive` may be dropped
    /// between two reads and resumed.
    line: Vec<u8>,
    /// The line is over the limit: its bytes are dropped up to its end.
    too_long: bool,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> LineTransport<R, W> {
    pub fn new(read: R, write: W) -> Self {
        Self {
            read: BufReader::new(read),
            write: Arc::new(Mutex::new(write)),
            line: vec![],
            too_long: false,
        }
    }
}

/// What one line held.
enum Read {
    Line(Vec<u8>),
    TooLong,
    Closed,
}

impl<R: AsyncRead + Unpin + Send, W: AsyncWrite + Unpin + Send> LineTransport<R, W> {
    /// The next line, never holding more than [`MAX_LINE_BYTES`] of it.
    /// Each await happens before bytes are taken, so a dropped call loses nothing.
    async fn next_line(&mut self) -> std::io::Result<Read> {
        loop {
            let buf = self.read.fill_buf().await?;
            if buf.is_empty() {
                return Ok(Read::Closed);
            }
            let (chunk, ended) = match buf.iter().position(|&b| b == b'\n') {
                Some(end) => (&buf[..end], true),
                None => (buf, false),
            };
            if !self.too_long && self.line.len() + chunk.len() > MAX_LINE_BYTES {
                self.too_long = true;
                self.line = vec![];
            }
            if !self.too_long {
                self.line.extend_from_slice(chunk);
            }
            let used = chunk.len() + usize::from(ended);
            self.read.consume(used);
            if ended {
                let too_long = std::mem::take(&mut self.too_long);
                let line = std::mem::take(&mut self.line);
                return Ok(if too_long { Read::TooLong } else { Read::Line(line) });
            }
        }
    }
}

/// A message, or the error to answer a line with (`None`: ignore the line).
/// serde_json stops at 128 levels of nesting, so no line overflows the stack.
pub(super) fn parse(line: &[u8]) -> Result<RxJsonRpcMessage<RoleServer>, Option<Value>> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Err(None);
    }
    let value: Value = serde_json::from_slice(line)
        .map_err(|e| Some(error(Value::Null, PARSE_ERROR, &format!("Parse error: {e}"))))?;
    if value.is_array() {
        return Err(Some(error(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: batches are not supported in this MCP protocol version; send each message on its own",
        )));
    }
    serde_json::from_value(value.clone()).map_err(|e| {
        let id = value.get("id").filter(|id| id.is_string() || id.is_number()).cloned();
        let invalid = |id| Some(error(id, INVALID_REQUEST, &format!("Invalid Request: {e}")));
        match id {
            Some(id) => invalid(id),
            // A notification we do not know needs no answer.
            None if value.get("method").is_some() => None,
            None => invalid(Value::Null),
        }
    })
}

/// A JSON-RPC error answer.
fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The answer to a message over [`MAX_LINE_BYTES`].
pub(super) fn too_long() -> Value {
    error(
        Value::Null,
        INVALID_REQUEST,
        &format!("Invalid Request: a message may have at most {MAX_LINE_BYTES} bytes"),
    )
}

async fn write_line<W: AsyncWrite + Unpin>(write: &Mutex<W>, message: &impl serde::Serialize) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    let mut write = write.lock().await;
    write.write_all(&line).await?;
    write.flush().await
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move { write_line(&write, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let reply = match self.next_line().await {
                Ok(Read::Line(line)) => match parse(&line) {
                    Ok(message) => return Some(message),
                    Err(reply) => reply,
                },
                Ok(Read::TooLong) => Some(too_long()),
                Ok(Read::Closed) => return None,
                Err(e) => {
                    tracing::error!("cannot read stdin: {e}");
                    return None;
                }
            };
            if let Some(reply) = reply {
                if write_line(&self.write, &reply).await.is_err() {
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(line: &[u8]) -> Value {
        parse(line).err().flatten().expect("an error answer")["error"]["code"].clone()
    }

    #[test]
    fn batches_and_deep_nesting_are_answered_without_recursing() {
        assert_eq!(
            code(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            json!(INVALID_REQUEST)
        );
        assert_eq!(code(b"[]"), json!(INVALID_REQUEST));
        for deep in [
            format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
            format!("{}1{}", r#"{"a":"#.repeat(100_000), "}".repeat(100_000)),
        ] {
            assert_eq!(code(deep.as_bytes()), json!(PARSE_ERROR));
        }
    }
}
