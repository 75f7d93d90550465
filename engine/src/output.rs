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
    /// What the door the lines are shown in changes in each (see [`Output::rewriting`]).
    rewrite: Option<Rewrite>,
}

/// A change every line goes through before it is written.
pub type Rewrite = Arc<dyn Fn(&str) -> String + Send + Sync>;

enum Sink {
    Stdout,
    Stderr,
    Buffer(Vec<u8>),
    Discard,
}

impl Output {
    /// Lines to stdout.
    pub fn stdout() -> Self {
        Self {
            sink: Arc::new(Mutex::new(Sink::Stdout)),
            rewrite: None,
        }
    }

    /// Lines to stderr: for runs whose stdout carries a JSON document.
    pub fn stderr() -> Self {
        Self {
            sink: Arc::new(Mutex::new(Sink::Stderr)),
            rewrite: None,
        }
    }

    /// Nowhere: for a run whose reader wants its document alone.
    pub fn discard() -> Self {
        Self {
            sink: Arc::new(Mutex::new(Sink::Discard)),
            rewrite: None,
        }
    }

    /// A capturing sink; read it back with [`Output::captured`].
    pub fn buffer() -> Self {
        Self {
            sink: Arc::new(Mutex::new(Sink::Buffer(Vec::new()))),
            rewrite: None,
        }
    }

    /// The same place, every line first passed through `rewrite` — how a
    /// product makes the commands its lines suggest runnable where they are
    /// shown (a project folder named in them, say).
    pub fn rewriting(self, rewrite: Rewrite) -> Self {
        Self {
            rewrite: Some(rewrite),
            ..self
        }
    }

    /// Print one line (a newline is added). Lines from concurrent stages
    /// never interleave mid-line.
    pub fn line(&self, text: &str) {
        let rewritten = self.rewrite.as_ref().map(|r| r(text));
        let text = &escape_controls(rewritten.as_deref().unwrap_or(text));
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
            Sink::Discard => {}
        }
    }

    /// Everything captured so far (empty for stdout and stderr).
    pub fn captured(&self) -> String {
        match &*self.sink.lock().unwrap_or_else(|e| e.into_inner()) {
            Sink::Stdout | Sink::Stderr | Sink::Discard => String::new(),
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

    #[test]
    fn a_rewrite_changes_every_line_of_every_clone() {
        let out = Output::buffer().rewriting(Arc::new(|line: &str| line.replace("run x", "run x --here")));
        out.clone().line("next: run x");
        out.line("done");
        assert_eq!(out.captured(), "next: run x --here\ndone\n");
    }
}
