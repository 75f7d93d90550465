//! The Tavily search API: `POST {url}` with a JSON body and the key as a
//! bearer token; results under `results`.

use serde_json::{json, Value};

use super::{result, Api};
use crate::websearch::result::WebResult;

/// Tavily answers at most 20 results a request.
const MAX_RESULTS: usize = 20;

pub(super) async fn search(
    client: &reqwest::Client,
    api: &Api,
    query: &str,
    max: usize,
) -> Result<Vec<WebResult>, String> {
    let key = api.key.as_ref().ok_or("no key")?;
    let request = client
        .post(&api.url)
        .header("authorization", key.header("Bearer ")?)
        .json(&json!({"query": query, "max_results": max.clamp(1, MAX_RESULTS), "search_depth": "basic"}));
    let body = api.json(request).await?;
    let rows = body
        .get("results")
        .and_then(Value::as_array)
        .ok_or("not a Tavily answer (no `results` list)")?;
    Ok(rows
        .iter()
        .filter_map(|r| result(r.get("title"), r.get("url"), r.get("content"), r.get("published_date")))
        .take(max)
        .collect())
}
