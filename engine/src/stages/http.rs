//! `http:` — GET or POST JSON (web search backends and the like).

use std::time::Duration;

use serde_json::{json, Value};

use super::{Flow, StageFailure};
use crate::io::HTTP_KEY;
use crate::template::Scope;

use super::StageCx;
use crate::compile::ActionSite;
use crate::spec::HttpSpec;
use crate::template::Tmpl;

/// `http:` — one HTTP request.
pub struct HttpStage {
    pub method: String,
    pub url: Tmpl,
    pub headers: Option<Tmpl>,
    pub query: Option<Tmpl>,
    pub body: Option<Tmpl>,
    pub timeout_s: Option<u64>,
}

pub(super) fn compile(h: &HttpSpec, site: &mut ActionSite) -> HttpStage {
    HttpStage {
        method: h.method.to_uppercase(),
        url: site.value(&h.url, "http.url"),
        headers: h.headers.as_ref().map(|v| site.value(v, "http.headers")),
        query: h.query.as_ref().map(|v| site.value(v, "http.query")),
        body: h.body.as_ref().map(|v| site.value(v, "http.body")),
        timeout_s: h.timeout_s,
    }
}

pub async fn run(cx: &StageCx<'_>, scope: &Scope, http: &HttpStage) -> Result<Flow, StageFailure> {
    let HttpStage {
        method,
        url,
        headers,
        query,
        body,
        timeout_s,
    } = http;
    let url = cx.eval(url, scope)?;
    let url = url.as_str().ok_or("`http.url` must be a string")?;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(timeout_s.unwrap_or(30)))
        .build()
        .map_err(|e| StageFailure::io("cannot set up an HTTP client", e))?;
    let mut req = match method.as_str() {
        "GET" => client.get(url),
        "POST" => client.post(url),
        other => return Err(format!("`http.method` {other} is not supported; use GET or POST").into()),
    };
    if let Some(h) = headers {
        for (k, v) in cx.eval(h, scope)?.as_object().into_iter().flatten() {
            req = req.header(k, v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()));
        }
    }
    if let Some(q) = query {
        let pairs: Vec<(String, String)> = cx
            .eval(q, scope)?
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| {
                (
                    k.clone(),
                    v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()),
                )
            })
            .collect();
        req = req.query(&pairs);
    }
    if let Some(b) = body {
        req = req.json(&cx.eval(b, scope)?);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| StageFailure::io(format!("{method} {url}"), e.without_url()))?;
    let status = resp.status().as_u16();
    let limit = cx.rt.limits.http_bytes;
    let mut resp = resp;
    let mut bytes = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| StageFailure::io(format!("{method} {url}"), e.without_url()))?
    {
        if (bytes.len() + chunk.len()) as u64 > limit {
            return Err(StageFailure::io(
                format!("{method} {url}"),
                format!(
                    "the answer is larger than {limit} bytes ({})",
                    cx.rt.product.raise_limit(HTTP_KEY, "answer")
                ),
            ));
        }
        bytes.extend_from_slice(&chunk);
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let body = serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text));
    Ok(Flow::Value(json!({"status": status, "body": body})))
}
