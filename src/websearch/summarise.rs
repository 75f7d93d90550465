//! `websearch.summarise`, the builtin of the `summarise` llm stage: an
//! extractive summary — the sentences of a text that share the most words
//! with the query, in the text's order. A configured model replaces it.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// Sentences shorter than this are headings or crumbs, not content.
const MIN_CHARS: usize = 20;
/// An unpunctuated line of fewer words is a heading.
const HEADING_WORDS: usize = 6;
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
    let mut relevant: Vec<(usize, usize)> = sentences
        .iter()
        .enumerate()
        .map(|(i, s)| (i, query.intersection(&words(s)).count()))
        .filter(|(_, shared)| *shared > 0)
        .collect();
    // Most shared words first; earlier sentences win ties (pages state their point first).
    relevant.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let in_order = |mut picked: Vec<usize>| -> Vec<String> {
        picked.sort_unstable();
        picked.into_iter().map(|i| sentences[i].clone()).collect()
    };
    let ranked: Vec<usize> = relevant.iter().map(|(i, _)| *i).collect();
    // A text that never mentions the query still has a lead.
    let summary = if ranked.is_empty() {
        sentences.iter().take(a.sentences).cloned().collect()
    } else {
        in_order(ranked.iter().copied().take(a.sentences).collect())
    };
    Summary {
        summary: summary.join(" "),
        points: in_order(ranked.iter().copied().skip(a.sentences).take(a.points).collect()),
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

/// Keeps a sentence, not a heading or a crumb: headings are short and end
/// without punctuation.
fn push(out: &mut Vec<String>, sentence: &str) {
    let s = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
    let ends = s.ends_with(['.', '!', '?', '。']);
    if s.chars().count() < MIN_CHARS || (!ends && s.split_whitespace().count() < HEADING_WORDS) {
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
    fn no_relevant_sentence_gives_the_lead_and_no_points() {
        let s = summarise(&SummariseArgs {
            query: "quantum".into(),
            text: "A Heading Here\nThe first real sentence of the page. The second real sentence here.".into(),
            sentences: 1,
            points: 3,
        });
        assert_eq!(s.summary, "The first real sentence of the page.");
        assert!(s.points.is_empty());
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
