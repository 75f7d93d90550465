//! `websearch.fetch`: one page of the `detailed` format over HTTP, within a
//! size and a time limit, as plain text. Every way it can fail is one clear
//! reason (too large, too slow, not HTML, a broken encoding), so the other
//! pages are still summarised.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
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
    /// `web_search.allow_private_addresses`: fetch pages on loopback,
    /// link-local and private networks too.
    pub allow_private_addresses: bool,
}

/// Redirects followed per page, each one checked like the first address.
const MAX_REDIRECTS: usize = 10;

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

/// The page's answer, each hop's address resolved and checked before it
/// is connected to (and connected to only at the checked addresses, so a
/// second DNS answer cannot swap in another), redirects followed by hand.
async fn get(url: &str, limits: &Limits) -> Result<reqwest::Response, String> {
    let mut url = reqwest::Url::parse(url).map_err(|e| format!("not a URL ({e})"))?;
    for _ in 0..=MAX_REDIRECTS {
        let addrs = checked_addresses(&url, limits.allow_private_addresses).await?;
        let mut client = reqwest::Client::builder()
            .user_agent(concat!("unity-assets/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::none());
        if let (None, Some(domain)) = (ip_literal(&url), url.host_str()) {
            client = client.resolve_to_addrs(domain, &addrs);
        }
        let client = client.build().map_err(|e| e.to_string())?;
        let resp = client.get(url.clone()).send().await.map_err(|e| {
            if e.is_connect() {
                "cannot connect".to_owned()
            } else {
                e.without_url().to_string()
            }
        })?;
        if !resp.status().is_redirection() {
            return Ok(resp);
        }
        let location = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| format!("HTTP {} without a Location", resp.status().as_u16()))?;
        url = url
            .join(location)
            .map_err(|e| format!("a redirect to an invalid URL ({e})"))?;
    }
    Err(format!("more than {MAX_REDIRECTS} redirects"))
}

/// The addresses `url`'s host resolves to, all of them public unless
/// `allow_private`: a result or a redirect pointing at this machine, the
/// cloud metadata service or the private network is refused.
async fn checked_addresses(url: &reqwest::Url, allow_private: bool) -> Result<Vec<SocketAddr>, String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("not an http(s) address ({})", url.scheme()));
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs: Vec<SocketAddr> = match (ip_literal(url), url.host_str()) {
        (Some(ip), _) => vec![SocketAddr::new(ip, port)],
        (None, Some(domain)) => tokio::net::lookup_host((domain, port))
            .await
            .map_err(|e| format!("cannot resolve {domain}: {e}"))?
            .collect(),
        (None, None) => return Err("no host".into()),
    };
    if addrs.is_empty() {
        return Err("the host resolves to no address".into());
    }
    if let Some(private) = addrs.iter().find(|a| is_private(a.ip())).filter(|_| !allow_private) {
        return Err(format!(
            "refused: {} is a loopback, link-local or private address ({}); \
             set web_search.allow_private_addresses: true to fetch pages on your own network",
            url.host_str().unwrap_or_default(),
            private.ip()
        ));
    }
    Ok(addrs)
}

/// The host when it is written as an address (`127.0.0.1`, `[::1]`).
fn ip_literal(url: &reqwest::Url) -> Option<IpAddr> {
    url.host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// Loopback, unspecified, link-local (169.254/16 holds cloud metadata),
/// private (10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10), shared
/// (100.64/10), broadcast and multicast addresses; an IPv6 address that
/// carries an IPv4 one (see [`embedded_ipv4`]) is judged by that, and
/// local-use NAT64 (64:ff9b:1::/48, where the IPv4 one may sit anywhere) is private.
fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_ipv4(v6) {
                return is_private(IpAddr::V4(v4));
            }
            let [first, second, third, ..] = v6.segments();
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || (first & 0xffc0) == 0xfec0
                || (first, second, third) == (0x64, 0xff9b, 1)
        }
    }
}

/// The IPv4 address an IPv6 one reaches through a translator or tunnel:
/// mapped `::ffff:0:0/96`, compatible `::/96` (`::` and `::1` included:
/// 0.0.0.0 and 0.0.0.1 are private too), SIIT `::ffff:0:0:0/96`, NAT64
/// `64:ff9b::/96`, 6to4 `2002::/16` and Teredo `2001::/32` (its client,
/// stored inverted). A connect to one of them reaches that IPv4 host.
fn embedded_ipv4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let last = Ipv4Addr::from(v6.to_bits() as u32);
    match v6.segments() {
        [0, 0, 0, 0, 0, 0 | 0xffff, _, _] | [0, 0, 0, 0, 0xffff, 0, _, _] | [0x64, 0xff9b, 0, 0, 0, 0, _, _] => {
            Some(last)
        }
        [0x2002, high, low, ..] => Some(Ipv4Addr::from((u32::from(high) << 16) | u32::from(low))),
        [0x2001, 0, ..] => Some(Ipv4Addr::from(!last.to_bits())),
        _ => None,
    }
}

async fn read(url: &str, limits: &Limits) -> Result<String, String> {
    let mut resp = get(url, limits).await?;
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
    fn private_addresses_are_recognised() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "172.32.0.1", "8.8.8.8", "2606:4700::1111"] {
            assert!(!is_private(ip.parse().unwrap()), "{ip}");
        }
    }

    /// `v4` written in one of the IPv6 forms that carry an IPv4 address.
    fn carrying(form: &str, v4: Ipv4Addr) -> IpAddr {
        let [a, b, c, d] = v4.octets();
        let [e, f, g, h] = (!v4.to_bits()).to_be_bytes();
        let text = match form {
            "mapped" => format!("::ffff:{v4}"),
            "compatible" => format!("::{v4}"),
            "SIIT" => format!("::ffff:0:{v4}"),
            "NAT64" => format!("64:ff9b::{v4}"),
            "6to4" => format!("2002:{a:02x}{b:02x}:{c:02x}{d:02x}::1"),
            "Teredo" => format!("2001:0:4136:e378:8000:63bf:{e:02x}{f:02x}:{g:02x}{h:02x}"),
            other => panic!("no form {other}"),
        };
        text.parse().unwrap()
    }

    #[test]
    fn ipv6_forms_carrying_an_ipv4_address_are_judged_by_it() {
        // Each form with loopback, cloud metadata and private addresses inside, then a public one.
        for form in ["mapped", "compatible", "SIIT", "NAT64", "6to4", "Teredo"] {
            for v4 in ["127.0.0.1", "169.254.169.254", "10.0.0.1", "192.168.1.1", "0.0.0.0"] {
                let ip = carrying(form, v4.parse().unwrap());
                assert!(is_private(ip), "{form} {ip} carries {v4}");
            }
            let ip = carrying(form, "93.184.216.34".parse().unwrap());
            assert!(!is_private(ip), "{form} {ip} carries a public address");
        }
        for ip in ["64:ff9b:1::7f00:1", "64:ff9b:1:abcd::1", "fec0::1"] {
            assert!(is_private(ip.parse().unwrap()), "{ip}");
        }
    }

    #[tokio::test]
    async fn names_and_literals_are_checked_after_resolving() {
        for url in [
            "http://localhost:9/",
            "http://127.0.0.1:9/",
            "http://[::1]:9/",
            "http://169.254.169.254/",
            "http://[64:ff9b::7f00:1]:9/",
            "http://[::127.0.0.1]:9/",
            "http://[2002:7f00:1::1]:9/",
            "http://[::ffff:0:7f00:1]:9/",
        ] {
            let url = reqwest::Url::parse(url).unwrap();
            let refused = checked_addresses(&url, false).await.unwrap_err();
            assert!(refused.starts_with("refused:"), "{url}: {refused}");
            assert!(checked_addresses(&url, true).await.is_ok(), "{url}");
        }
        let file = reqwest::Url::parse("file:///etc/passwd").unwrap();
        assert!(checked_addresses(&file, true).await.is_err());
    }

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
