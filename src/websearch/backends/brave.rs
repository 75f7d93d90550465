//! The Brave Search API: `GET {url}?q=…&count=N` with the key in
//! `X-Subscription-Token`; results under `web.results`.

use serde_json::Value;

use super::{result, Api};
use crate::websearch::result::WebResult;

/// Brave answers at most 20 results a request.
const MAX_COUNT: usize = 20;

pub(super) async fn search(
    client: &reqwest::Client,
    api: &Api,
    query: &str,
    max: usize,
) -> Result<Vec<WebResult>, String> {
    let key = api.key.as_ref().ok_or("no key")?;
    let request = client
        .get(&api.url)
        .query(&[("q", query), ("count", &max.clamp(1, MAX_COUNT).to_string())])
        .header("accept", "application/json")
        .header("x-subscription-token", key.header("")?);
    let body = api.json(request).await?;
    if body.get("type").and_then(Value::as_str) != Some("search") {
        return Err("not a Brave Search answer (no `\"type\": \"search\"`)".into());
    }
    // Brave leaves `web` out when nothing was found.
    let rows = body.pointer("/web/results").and_then(Value::as_array);
    Ok(rows
        .into_iter()
        .flatten()
        .filter_map(|r| result(r.get("title"), r.get("url"), r.get("description"), r.get("page_age")))
        .take(max)
        .collect())
}
