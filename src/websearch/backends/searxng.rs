//! SearXNG's JSON API: `GET {url}/search?q=…&format=json` (the instance must
//! list `json` under `search.formats` in its settings.yml).

use serde_json::Value;

use super::{result, Api};
use crate::websearch::result::WebResult;

pub(super) async fn search(
    client: &reqwest::Client,
    api: &Api,
    query: &str,
    max: usize,
) -> Result<Vec<WebResult>, String> {
    let request = client
        .get(format!("{}/search", api.url))
        .query(&[("q", query), ("format", "json")]);
    let body = api.json(request).await.map_err(|e| {
        if e.starts_with("HTTP 403") {
            format!("{e} (is `json` in search.formats of the instance's settings.yml?)")
        } else {
            e
        }
    })?;
    let rows = body
        .get("results")
        .and_then(Value::as_array)
        .ok_or("not a SearXNG answer (no `results` list)")?;
    Ok(rows
        .iter()
        .filter_map(|r| result(r.get("title"), r.get("url"), r.get("content"), r.get("publishedDate")))
        .take(max)
        .collect())
}
