//! `websearch.fetch`: one page of the `detailed` format over HTTP, within a
//! size and a time limit, as plain text. Every way it can fail is one clear
//! reason (too large, too slow, not HTML, a broken encoding), so the other
//! pages are still summarised.

use std::time::Duration;

use serde::Serialize;

use super::html;

#[derive(Debug, Serialize)]
pub struct Page {
    pub url: String,
    pub title: String,
    pub ok: bool,
    /// The page's text (empty when it failed).
    pub text: String,
    /// Why the page could not be used.
    pub error: Option<String>,
}

/// Text kept of a page: what the summarise stage (and a model's context) reads.
const MAX_TEXT_CHARS: usize = 20_000;

pub struct Limits {
    pub max_bytes: u64,
    pub timeout: Duration,
}

pub async fn fetch(url: &str, title: &str, limits: &Limits) -> Page {
    let outcome = tokio::time::timeout(limits.timeout, read(url, limits)).await;
    let result = match outcome {
        Ok(r) => r,
        Err(_) => Err(format!("no answer within {}s", limits.timeout.as_secs())),
    };
    match result {
        Ok(text) => Page {
            url: url.to_owned(),
            title: title.to_owned(),
            ok: true,
            text,
            error: None,
        },
        Err(e) => Page {
            url: url.to_owned(),
            title: title.to_owned(),
            ok: false,
            text: String::new(),
            error: Some(e),
        },
    }
}

async fn read(url: &str, limits: &Limits) -> Result<String, String> {
    let client = reqwest::Client::builder()
        .user_agent(concat!("unity-assets/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| e.to_string())?;
    let mut resp = client.get(url).send().await.map_err(|e| {
        if e.is_connect() {
            "cannot connect".to_owned()
        } else {
            e.without_url().to_string()
        }
    })?;
    if !resp.status().is_success() {
        return Err(format!("HTTP {}", resp.status().as_u16()));
    }
    let content_type = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mime = content_type.split(';').next().unwrap_or("").trim().to_owned();
    if !matches!(mime.as_str(), "text/html" | "application/xhtml+xml" | "text/plain" | "") {
        return Err(format!("not HTML ({mime})"));
    }
    let too_big = || {
        format!(
            "larger than the {} byte limit (web_search.fetch.max_bytes)",
            limits.max_bytes
        )
    };
    if resp.content_length().is_some_and(|n| n > limits.max_bytes) {
        return Err(too_big());
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| e.without_url().to_string())? {
        body.extend_from_slice(&chunk);
        if body.len() as u64 > limits.max_bytes {
            return Err(too_big());
        }
    }
    let text = decode(&body, charset(&content_type, &body))?;
    let text = if mime == "text/plain" {
        text
    } else {
        html::to_text(&text)
    };
    Ok(text.chars().take(MAX_TEXT_CHARS).collect())
}

/// The charset the header names, else a `<meta charset>` in the first bytes, else UTF-8.
fn charset(content_type: &str, body: &[u8]) -> String {
    let from = |s: &str| {
        s.split("charset=")
            .nth(1)
            .map(|c| {
                c.trim_start_matches(['"', '\''])
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
                    .collect::<String>()
            })
            .filter(|c| !c.is_empty())
    };
    let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    from(&content_type.to_ascii_lowercase())
        .or_else(|| from(&head))
        .unwrap_or_else(|| "utf-8".into())
}

/// The body in its charset; a byte sequence that is not valid in it is an error.
fn decode(body: &[u8], charset: String) -> Result<String, String> {
    let encoding = encoding_rs::Encoding::for_label(charset.as_bytes())
        .ok_or_else(|| format!("unknown character encoding `{charset}`"))?;
    let (text, had_errors) = encoding.decode_with_bom_removal(body);
    if had_errors {
        return Err(format!("broken encoding: not valid {}", encoding.name()));
    }
    Ok(text.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charsets_from_the_header_or_the_page() {
        assert_eq!(charset("text/html; charset=EUC-KR", b""), "euc-kr");
        assert_eq!(charset("text/html", b"<meta charset=\"shift_jis\">"), "shift_jis");
        assert_eq!(charset("text/html", b"<p>hi"), "utf-8");
    }

    #[test]
    fn decoding_rejects_broken_bytes() {
        assert_eq!(decode("한글".as_bytes(), "utf-8".into()).unwrap(), "한글");
        let euc_kr = [0xc7, 0xd1, 0xb1, 0xdb];
        assert_eq!(decode(&euc_kr, "euc-kr".into()).unwrap(), "한글");
        assert_eq!(
            decode(&[0x66, 0xff, 0xfe, 0x66], "utf-8".into()).unwrap_err(),
            "broken encoding: not valid UTF-8"
        );
        assert!(decode(b"x", "klingon".into())
            .unwrap_err()
            .contains("unknown character encoding"));
    }
}
