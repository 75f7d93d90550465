//! The reasoning of a ranked record: which query concepts it matched and
//! where — a field name, or for a content fact the value that matched
//! ("has component LockedDoor", "child 'Imp'").

use super::super::query::{Concept, Query};
use super::super::text::{for_each_term, Scratch};
use super::{Document, Field, Scored};

/// The value of `field` in `record` that best shows why `concept` matched:
/// of the values holding one of its terms, the one touching most of the
/// query's concepts (`PlayerController` rather than `CharacterController`
/// for "player controller"), the first on a tie. Shortened to one short
/// phrase: it is shown inside the reasoning's first sentence, which a ". "
/// would end.
fn matched_value(record: &dyn Document, field: Field, concept: &Concept, query: &Query) -> Option<String> {
    const SHOWN_CHARS: usize = 40;
    let mut scratch = Scratch::default();
    let mut best: Option<(usize, String)> = None;
    let has_term = |c: &Concept, term: &str| c.terms.iter().any(|(t, _)| t == term);
    record.visit(&mut |f, text| {
        if f != field {
            return;
        }
        let mut touched = vec![false; query.concepts.len()];
        let mut hit = false;
        for_each_term(text, &mut scratch, |term| {
            hit |= has_term(concept, term);
            for (seen, c) in touched.iter_mut().zip(&query.concepts) {
                *seen |= has_term(c, term);
            }
        });
        let touched = touched.iter().filter(|t| **t).count();
        if hit && best.as_ref().is_none_or(|(n, _)| touched > *n) {
            let shown = text
                .split(". ")
                .next()
                .unwrap_or(text)
                .chars()
                .take(SHOWN_CHARS)
                .collect();
            best = Some((touched, shown));
        }
    });
    best.map(|(_, value)| value)
}

/// "Matches 2 of 3 query concepts: zombie (name, tags); 문 (door) (has
/// component LockedDoor); …; not found: …."
pub(super) fn explain(record: &dyn Document, query: &Query, scored: &Scored) -> String {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for (concept, &mask) in query.concepts.iter().zip(&scored.found_in) {
        if mask == 0 {
            missing.push(concept.label.clone());
        } else {
            let fields: Vec<String> = Field::ALL
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, &field)| match field.is_content_fact() {
                    true => matched_value(record, field, concept, query)
                        .map_or_else(|| field.label().to_owned(), |value| field.evidence(&value)),
                    false => field.label().to_owned(),
                })
                .collect();
            found.push(format!("{} ({})", concept.label, fields.join(", ")));
        }
    }
    // The missing concepts stay in the first sentence: it is the one the
    // search lines show.
    let total = scored.found_in.len();
    let matched = found.len();
    if !missing.is_empty() {
        found.push(format!("not found: {}", missing.join(", ")));
    }
    format!("Matches {matched} of {total} query concepts: {}.", found.join("; "))
}
