//! Finding the JSON value in a model's text answer.
//!
//! Models asked for JSON in plain text often wrap it: in a fenced code block,
//! or in a sentence before and after. This takes, in order: the whole answer
//! when it parses; the first fenced block that parses (```json blocks
//! first); the first balanced `{…}` or `[…]` in the text that parses.

use serde_json::Value;

/// The JSON value in `text`, if it holds one.
pub fn extract_json(text: &str) -> Option<Value> {
    let text = text.trim();
    parse(text)
        .or_else(|| fenced_blocks(text).find_map(parse))
        .or_else(|| balanced_candidates(text).find_map(parse))
}

fn parse(text: &str) -> Option<Value> {
    serde_json::from_str(text.trim()).ok()
}

/// The contents of fenced blocks, those labelled `json` first.
fn fenced_blocks(text: &str) -> impl Iterator<Item = &str> {
    let mut labelled = Vec::new();
    let mut others = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after_fence = &rest[open + 3..];
        let (info, body) = after_fence.split_once('\n').unwrap_or((after_fence, ""));
        let Some(close) = body.find("```") else { break };
        let block = &body[..close];
        if info.trim().eq_ignore_ascii_case("json") {
            labelled.push(block);
        } else {
            others.push(block);
        }
        rest = &body[close + 3..];
    }
    labelled.into_iter().chain(others)
}

/// Every balanced `{…}` / `[…]` span, by start position; brackets inside
/// JSON strings do not count.
fn balanced_candidates(text: &str) -> impl Iterator<Item = &str> {
    text.char_indices()
        .filter(|&(_, c)| c == '{' || c == '[')
        .filter_map(move |(start, _)| balanced_end(&text[start..]).map(|end| &text[start..start + end]))
}

/// The byte length of the balanced span `text` starts with.
fn balanced_end(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_bare_answer_parses_as_is() {
        assert_eq!(extract_json(" {\"ok\": true}\n"), Some(json!({"ok": true})));
        assert_eq!(extract_json("[1, 2]"), Some(json!([1, 2])));
    }

    #[test]
    fn fenced_json_blocks_win_over_other_fences() {
        let text = "Here:\n```\nnot json\n```\nand\n```json\n{\"a\": 1}\n```\nthanks";
        assert_eq!(extract_json(text), Some(json!({"a": 1})));
        assert_eq!(extract_json("```\n{\"b\": 2}\n```"), Some(json!({"b": 2})));
    }

    #[test]
    fn prose_wrapped_answers_yield_the_first_balanced_value_that_parses() {
        let text = "I think {this} is it: {\"k\": \"a } in a string\", \"n\": [1]} — done.";
        assert_eq!(extract_json(text), Some(json!({"k": "a } in a string", "n": [1]})));
    }

    #[test]
    fn text_without_json_yields_nothing() {
        assert_eq!(extract_json("no value here {unclosed"), None);
        assert_eq!(extract_json(""), None);
    }
}
