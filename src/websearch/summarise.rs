//! `websearch.summarise`, the builtin of the `summarise` llm stage: an
//! extractive summary — the sentences of a text that share the most words
//! with the query, in the text's order. A configured model replaces it.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// Sentences shorter than this are headings or crumbs, not content.
const MIN_CHARS: usize = 20;
/// A sentence longer than this is cut.
const MAX_CHARS: usize = 300;

#[derive(Debug, Deserialize)]
pub struct SummariseArgs {
    pub query: String,
    pub text: String,
    /// Sentences in the summary; the next best become the points.
    #[serde(default = "two")]
    pub sentences: usize,
    #[serde(default = "three")]
    pub points: usize,
}

fn two() -> usize {
    2
}

fn three() -> usize {
    3
}

#[derive(Debug, PartialEq, Serialize)]
pub struct Summary {
    pub summary: String,
    pub points: Vec<String>,
}

pub fn summarise(a: &SummariseArgs) -> Summary {
    let query = words(&a.query);
    let sentences = split_sentences(&a.text);
    let mut scored: Vec<(usize, f64)> = sentences
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let w = words(s);
            let shared = query.intersection(&w).count() as f64;
            // Earlier sentences win ties: pages state their point first.
            (i, shared - i as f64 * 1e-6)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    let pick = |range: std::ops::Range<usize>| -> Vec<String> {
        let mut chosen: Vec<usize> = scored
            .iter()
            .skip(range.start)
            .take(range.len())
            .map(|(i, _)| *i)
            .collect();
        chosen.sort_unstable();
        chosen.into_iter().map(|i| sentences[i].clone()).collect()
    };
    Summary {
        summary: pick(0..a.sentences).join(" "),
        points: pick(a.sentences..a.sentences + a.points),
    }
}

/// Lower-cased words of two or more characters.
fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .map(str::to_lowercase)
        .collect()
}

/// Sentences ending at `.`, `!`, `?`, `。` or a line break, trimmed and cut to
/// a readable length; crumbs dropped.
fn split_sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let end =
            c == '\n' || matches!(c, '!' | '?' | '。') || (c == '.' && chars.peek().is_none_or(|n| n.is_whitespace()));
        if c != '\n' {
            current.push(c);
        }
        if end {
            push(&mut out, &current);
            current.clear();
        }
    }
    push(&mut out, &current);
    out
}

fn push(out: &mut Vec<String>, sentence: &str) {
    let s = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() < MIN_CHARS {
        return;
    }
    out.push(if s.chars().count() > MAX_CHARS {
        format!("{}…", s.chars().take(MAX_CHARS - 1).collect::<String>().trim_end())
    } else {
        s
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_query_relevant_sentences_in_order() {
        let text = "Welcome to our documentation site.\nMenu\nHooks let you use state in function components. \
            Unrelated news about the weather today. The useState hook returns a state value and a setter. \
            Effects run after render with useEffect hooks. Contact us for more information today.";
        let s = summarise(&SummariseArgs {
            query: "react hooks state".into(),
            text: text.into(),
            sentences: 2,
            points: 1,
        });
        assert_eq!(
            s.summary,
            "Hooks let you use state in function components. The useState hook returns a state value and a setter."
        );
        assert_eq!(s.points, ["Effects run after render with useEffect hooks."]);
    }

    #[test]
    fn empty_text_gives_an_empty_summary() {
        let s = summarise(&SummariseArgs {
            query: "x".into(),
            text: "".into(),
            sentences: 2,
            points: 3,
        });
        assert_eq!(
            s,
            Summary {
                summary: String::new(),
                points: vec![]
            }
        );
    }
}
