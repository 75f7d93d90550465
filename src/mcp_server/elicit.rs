//! A pipeline's `ask` stages (build's confirm dialog) as MCP elicitation: a
//! client that can show its user a form is asked there, one request per
//! question, instead of getting the open questions back as choices.

use std::sync::Arc;

use engine::Asker;
use futures::future::BoxFuture;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema, EnumSchema, ProtocolVersion};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::{Map, Value};

/// The form's one field.
const CHOICE: &str = "choice";

pub struct Elicitor {
    peer: Peer<RoleServer>,
}

impl Elicitor {
    /// An asker for this call when its client declared form elicitation and
    /// the call did not answer already (`choose`, `yes`, `non_interactive`).
    /// A session that may not send requests ([`may_request`]) keeps
    /// returning the choices.
    pub fn for_call(context: &RequestContext<RoleServer>, args: &Map<String, Value>) -> Option<Arc<dyn Asker>> {
        let elicitation = context.client_capabilities()?.elicitation?;
        let form = elicitation.form.is_some() || elicitation.url.is_none();
        let may_request = may_request(context);
        let answered = ["choose", "yes", "non_interactive"]
            .iter()
            .any(|k| args.get(*k).is_some_and(given));
        (form && may_request && !answered).then(|| {
            Arc::new(Self {
                peer: context.peer.clone(),
            }) as Arc<dyn Asker>
        })
    }
}

/// Whether the server may send the client requests of its own (elicitation,
/// `roots/list`): no longer from protocol 2026-07-28.
pub fn may_request(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_none_or(|v| v < ProtocolVersion::V_2026_07_28)
}

/// An answer the caller actually gave (the inputs' defaults are `[]` and `false`).
fn given(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => false,
        Value::Array(a) => !a.is_empty(),
        _ => true,
    }
}

impl Asker for Elicitor {
    fn ask<'a>(&'a self, prompt: &'a str, choices: &'a [Value]) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            let labels: Vec<String> = choices
                .iter()
                .map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_owned))
                .collect();
            let schema = ElicitationSchema::builder()
                .required_enum_schema(CHOICE, EnumSchema::builder(labels.clone()).build())
                .build()
                .map_err(|e| format!("cannot ask the client: {e}"))?;
            let answer = self
                .peer
                .create_elicitation(ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: prompt.to_owned(),
                    requested_schema: schema,
                })
                .await
                .map_err(|e| format!("cannot ask the client: {e}"))?;
            if answer.action != ElicitationAction::Accept {
                return Ok(None);
            }
            // The chosen label, as its index: `ask` reads a number as a position.
            let label = answer
                .content
                .as_ref()
                .and_then(|c| c.get(CHOICE))
                .and_then(Value::as_str);
            match label.and_then(|l| labels.iter().position(|x| x == l)) {
                Some(i) => Ok(Some(Value::from(i))),
                None => Err(format!(
                    "the client answered {:?}, not one of the choices",
                    answer.content
                )),
            }
        })
    }
}
