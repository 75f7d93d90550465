//! Where each key and value of a YAML document sits, by path.
//!
//! serde gives values without positions, so the document is also run through
//! a marked event parser; every mapping key and scalar is recorded under its
//! dotted path (`stages.route.llm.prompt`, `stages.route.needs.0`). That
//! second parse happens on the first lookup: only a diagnostic asks, and it
//! was an eighth of compiling the search pipelines.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

use super::Pos;

/// The positions of a YAML document's keys and values, by dotted path.
#[derive(Debug, Default, Clone)]
pub struct SourceMap {
    text: Arc<str>,
    /// Shared by clones, so the document is parsed once.
    positions: Arc<OnceLock<Positions>>,
}

#[derive(Debug, Default, Clone)]
struct Positions {
    keys: HashMap<String, Pos>,
    values: HashMap<String, Pos>,
}

impl SourceMap {
    /// The positions of `text`, recorded when first asked for. Never fails:
    /// a document that does not parse keeps what was recorded before the
    /// error.
    pub fn new(text: &str) -> Self {
        Self {
            text: text.into(),
            positions: Arc::default(),
        }
    }

    fn positions(&self) -> &Positions {
        self.positions.get_or_init(|| {
            let mut builder = Builder::default();
            let mut parser = Parser::new_from_str(&self.text);
            // Syntax errors are reported by serde with their own position.
            let _ = parser.load(&mut builder, false);
            builder.map
        })
    }

    /// The position of the key naming `path`, else of its value, else of the
    /// nearest ancestor that has one.
    pub fn key(&self, path: &str) -> Pos {
        self.lookup(path, true)
    }

    /// The position of the value at `path` (falling back like [`Self::key`]).
    pub fn value(&self, path: &str) -> Pos {
        self.lookup(path, false)
    }

    fn lookup(&self, path: &str, key_first: bool) -> Pos {
        let Positions { keys, values } = self.positions();
        let mut p = path;
        loop {
            let (first, second) = if key_first { (keys, values) } else { (values, keys) };
            if let Some(pos) = first.get(p).or_else(|| second.get(p)) {
                return *pos;
            }
            match p.rfind('.') {
                Some(i) => p = &p[..i],
                None => return (1, 1),
            }
        }
    }
}

enum Frame {
    Map { path: String, pending_key: Option<String> },
    Seq { path: String, index: usize },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    map: Positions,
}

impl Builder {
    /// The path of the node that starts now, consuming the parent's slot.
    fn next_path(&mut self) -> Option<String> {
        match self.stack.last_mut() {
            None => Some(String::new()),
            Some(Frame::Seq { path, index }) => {
                let p = join(path, &index.to_string());
                *index += 1;
                Some(p)
            }
            Some(Frame::Map { path, pending_key }) => pending_key.take().map(|k| join(path, &k)),
        }
    }
}

fn join(base: &str, part: &str) -> String {
    if base.is_empty() {
        part.to_owned()
    } else {
        format!("{base}.{part}")
    }
}

fn pos(mark: Marker) -> Pos {
    (mark.line(), mark.col() + 1)
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        match ev {
            Event::Scalar(text, ..) => {
                // A scalar in a map with no pending key *is* the key.
                if let Some(Frame::Map { path, pending_key }) = self.stack.last_mut() {
                    if pending_key.is_none() {
                        self.map.keys.insert(join(path, &text), pos(mark));
                        *pending_key = Some(text);
                        return;
                    }
                }
                if let Some(p) = self.next_path() {
                    self.map.values.insert(p, pos(mark));
                }
            }
            Event::MappingStart(..) => {
                let path = self.next_path().unwrap_or_default();
                self.map.values.entry(path.clone()).or_insert(pos(mark));
                self.stack.push(Frame::Map {
                    path,
                    pending_key: None,
                });
            }
            Event::SequenceStart(..) => {
                let path = self.next_path().unwrap_or_default();
                self.map.values.entry(path.clone()).or_insert(pos(mark));
                self.stack.push(Frame::Seq { path, index: 0 });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
            }
            Event::Alias(_) => {
                let _ = self.next_path();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_keys_values_and_items() {
        let map = SourceMap::new("a:\n  b: 1\n  c: [x, y]\nd:\n  - e: 2\n");
        assert_eq!(map.key("a.b"), (2, 3));
        assert_eq!(map.value("a.b"), (2, 6));
        assert_eq!(map.value("a.c.1"), (3, 10));
        assert_eq!(map.key("d.0.e"), (5, 5));
        assert_eq!(map.key("a.zzz"), (1, 1));
    }
}
