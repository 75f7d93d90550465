//! `gate:` — JSON Schemas from `schemas/`, compiled once per file.

use std::sync::Arc;

use serde_json::Value;

use super::{resource_error, Compiler, Gate};
use crate::diagnostic::{Diagnostic, Diagnostics};

impl Compiler<'_> {
    /// Load and compile a JSON Schema from `schemas/`, once per file (an
    /// invalid schema is reported once, in the schema file). `at`: where the
    /// stage names it, asked only when the file is missing.
    pub(super) fn gate(
        &mut self,
        name: &str,
        file: &str,
        at: impl FnOnce() -> (usize, usize),
        errors: &mut Diagnostics,
    ) -> Option<Gate> {
        if let Some(g) = self.gates.get(name) {
            return g.clone();
        }
        let rel = format!("schemas/{name}");
        let gate = match self.resources.get(&rel) {
            Err(e) => {
                errors.push(resource_error(e));
                return None;
            }
            Ok(None) => {
                errors.push(self.not_found("schema", "schemas", name, file, at()));
                // Not cached: every stage naming it gets its own message.
                return None;
            }
            Ok(Some(res)) => match serde_json::from_str::<Value>(&res.text) {
                Err(e) => {
                    errors.push(Diagnostic::new(
                        &res.origin,
                        (e.line(), e.column()),
                        format!("schema is not valid JSON: {e}"),
                    ));
                    None
                }
                Ok(schema) => match jsonschema::validator_for(&schema) {
                    Err(e) => {
                        errors.push(
                            Diagnostic::about(&res.origin, format!("not a valid JSON Schema: {e}"))
                                .help(format!("at {}", e.instance_path())),
                        );
                        None
                    }
                    Ok(v) => Some(Gate {
                        file: rel,
                        schema: Arc::new(schema),
                        validator: Arc::new(v),
                    }),
                },
            },
        };
        self.gates.insert(name.to_owned(), gate.clone());
        gate
    }
}
