//! Where a run's user-facing lines go.
//!
//! Stages that print (`emit`, `ask`, native functions with progress lines)
//! write through this handle, so the CLI sends them to stdout while tests
//! capture them and compare the exact bytes.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// A shared handle to where user-facing lines go; clones write to the same place.
#[derive(Clone)]
pub struct Output {
    sink: Arc<Mutex<Sink>>,
}

enum Sink {
    Stdout,
    Stderr,
    Buffer(Vec<u8>),
}

impl Output {
    /// Lines to stdout.
    pub fn stdout() -> Self {
        Self {
            sink: Arc::new(Mutex::new(Sink::Stdout)),
        }
    }

    /// Lines to stderr: for runs whose stdout carries a JSON document.
    pub fn stderr() -> Self {
        Self {
            sink: Arc::new(Mutex::new(Sink::Stderr)),
        }
    }

    /// A capturing sink; read it back with [`Output::captured`].
    pub fn buffer() -> Self {
        Self {
            sink: Arc::new(Mutex::new(Sink::Buffer(Vec::new()))),
        }
    }

    /// Print one line (a newline is added). Lines from concurrent stages
    /// never interleave mid-line.
    pub fn line(&self, text: &str) {
        let text = &escape_controls(text);
        let mut sink = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *sink {
            Sink::Stdout => {
                let mut out = std::io::stdout().lock();
                // A closed pipe (`| head`) is not an error worth failing a run for.
                let _ = writeln!(out, "{text}");
                let _ = out.flush();
            }
            Sink::Stderr => {
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "{text}");
            }
            Sink::Buffer(buf) => {
                buf.extend_from_slice(text.as_bytes());
                buf.push(b'\n');
            }
        }
    }

    /// Everything captured so far (empty for stdout and stderr).
    pub fn captured(&self) -> String {
        match &*self.sink.lock().unwrap_or_else(|e| e.into_inner()) {
            Sink::Stdout | Sink::Stderr => String::new(),
            Sink::Buffer(buf) => String::from_utf8_lossy(buf).into_owned(),
        }
    }
}

/// Terminal control characters (ESC, BEL, CR, …) as visible escapes: a file
/// name or model answer printed in a line must not drive the terminal.
/// Newlines and tabs are layout and stay.
fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() && c != '\n' && c != '\t' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

impl Default for Output {
    fn default() -> Self {
        Self::stdout()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_layout_kept() {
        let out = Output::buffer();
        out.line("Assets/\u{1b}]0;pwned\u{7}Evil\r.prefab\n\tnext ✓");
        assert_eq!(out.captured(), "Assets/\\u{1b}]0;pwned\\u{7}Evil\\r.prefab\n\tnext ✓\n");
    }
}
