//! HTML to plain text, enough for summarising a page and cleaning snippets:
//! drops scripts, styles and comments, breaks lines at block elements,
//! decodes the common entities and collapses whitespace.

/// Elements whose content is never text.
const SKIPPED: [&str; 6] = ["script", "style", "noscript", "template", "svg", "head"];
/// Elements that end a line of text.
const BLOCKS: [&str; 22] = [
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "tr",
    "td",
    "th",
    "section",
    "article",
    "header",
    "footer",
    "pre",
    "blockquote",
    "title",
];

/// The text of an HTML document (or fragment), one line per block.
pub fn to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        push_text(&mut out, &rest[..lt]);
        rest = &rest[lt..];
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |i| &after[i + 3..]);
            continue;
        }
        let Some(gt) = rest.find('>') else {
            rest = "";
            break;
        };
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if !tag.starts_with('/') && SKIPPED.contains(&name.as_str()) && !tag.ends_with('/') {
            // Skip to the matching close tag (case-insensitive).
            let close = format!("</{name}");
            let lower = rest.to_ascii_lowercase();
            rest = match lower.find(&close) {
                Some(i) => rest[i..].find('>').map_or("", |j| &rest[i + j + 1..]),
                None => "",
            };
            if name == "head" {
                out.push('\n');
            }
            continue;
        }
        if BLOCKS.contains(&name.as_str()) {
            out.push('\n');
        } else {
            out.push(' ');
        }
    }
    push_text(&mut out, rest);
    out.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Text between tags: its line breaks are spaces (only blocks break lines).
fn push_text(out: &mut String, text: &str) {
    out.push_str(&decode_entities(&text.replace(['\n', '\r'], " ")));
}

/// A snippet as one line: tags dropped, entities decoded, at most `max` characters.
pub fn snippet(text: &str, max: usize) -> String {
    let flat = to_text(text).split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{}…", cut.trim_end())
    }
}

fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest[1..].find(';').map(|i| i + 1).filter(|&i| i <= 10);
        let decoded = end.and_then(|i| entity(&rest[1..i]).map(|c| (c, i)));
        match decoded {
            Some((c, i)) => {
                out.push(c);
                rest = &rest[i + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    if let Some(num) = name.strip_prefix('#') {
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse().ok()?,
        };
        return char::from_u32(code);
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "mdash" => '—',
        "ndash" => '–',
        "hellip" => '…',
        "rsquo" => '’',
        "lsquo" => '‘',
        "rdquo" => '”',
        "ldquo" => '“',
        "copy" => '©',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_of_a_page() {
        let html = "<html><head><title>T</title><style>p{}</style></head><body>\
            <script>var x = '<p>';</script><h1>Hooks</h1><!-- note --><p>Use &amp; reuse\n  state.</p>\
            <p>Second &#8212; &#x41;&nbsp;b &unknown; x</p></body></html>";
        assert_eq!(to_text(html), "Hooks\nUse & reuse state.\nSecond — A b &unknown; x");
    }

    #[test]
    fn snippets_are_one_short_line() {
        assert_eq!(snippet("A <strong>bold</strong>\n move", 100), "A bold move");
        assert_eq!(snippet("abcdefghij", 5), "abcd…");
    }
}
