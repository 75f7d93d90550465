//! The two hint blocks of the routing prompt: `--- Aliases hint ---` for the
//! query's Korean words, then `--- Past picks hint ---` from the last rows of
//! `feedback.jsonl`, each left out when empty (`docs/contracts.md#routing-hints`);
//! and the past-pick boost the builtin ranker derives from the same rows.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::query::Query;
use super::vocab::Vocabulary;

/// `--- Aliases hint ---` for the Korean words of `query`, or `None` when
/// no word matched (the block is then omitted, never sent empty).
pub fn aliases_block(query: &Query) -> Option<String> {
    if query.alias_matches.is_empty() {
        return None;
    }
    let mut lines = vec!["--- Aliases hint ---".to_owned()];
    let mut seen = HashSet::new();
    for (key, aliases) in &query.alias_matches {
        if seen.insert(key) {
            lines.push(format!("{key}: [{}]", aliases.join(", ")));
        }
    }
    lines.push("---".to_owned());
    Some(lines.join("\n"))
}

/// Recency decay of a pick: the newest counts 1, the one before 0.85, ….
const DECAY: f32 = 0.85;
/// The most confidence past picks can add (a pick records before + 0.10).
const MAX_BOOST: f32 = 0.10;
/// How alike two sub-intents must be (Jaccard of their words) to share picks.
const MIN_SIMILARITY: f32 = 0.5;

/// The frequent picks of one sub-intent, most weighted first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PastPickGroup {
    pub sub_intent: String,
    pub picks: Vec<PastPick>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PastPick {
    pub guid: String,
    /// Recency-decayed pick count.
    pub weight: f32,
}

/// What the feedback log holds for the next search.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PastPicks {
    /// The `--- Past picks hint ---` block, absent when there are no picks.
    pub block: Option<String>,
    pub groups: Vec<PastPickGroup>,
    /// Line number of the last bad row, for the one "feedback row skipped" line.
    pub skipped_line: Option<usize>,
    /// Why that row was skipped (its first 200 characters), for the line after it.
    pub skipped_why: Option<String>,
}

/// The feedback-row schema, compiled once.
fn feedback_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value = serde_json::from_str(include_str!("../../schemas/feedback-row.schema.json"))
            .expect("schemas/feedback-row.schema.json is JSON (tested)");
        jsonschema::validator_for(&schema).expect("schemas/feedback-row.schema.json is a valid schema (tested)")
    })
}

/// Check one feedback row against `schemas/feedback-row.schema.json`.
pub fn check_feedback_row(row: &Value) -> Result<(), String> {
    feedback_validator().validate(row).map_err(|e| e.to_string())
}

/// Read `feedback.jsonl` (a missing file means no picks; the file and each
/// row are bounded by `limits`): keep the last `limit` schema-valid rows,
/// and per sub-intent the `top` guids by recency-decayed pick count.
pub fn past_picks(path: &Path, limit: usize, top: usize, limits: &engine::io::Limits) -> anyhow::Result<PastPicks> {
    // Line by line: one line too long or not UTF-8 is one bad row, skipped.
    let records = match engine::io::read_row_lines(path, limits, &crate::PRODUCT) {
        Ok(lines) => engine::io::jsonl_records(lines.iter(), &check_feedback_row),
        Err(e) if e.is_not_found() => return Ok(PastPicks::default()),
        Err(e) => return Err(e.into()),
    };
    let last_bad = records.bad_rows.iter().max_by_key(|b| b.line);
    let skipped_line = last_bad.map(|b| b.line);
    let skipped_why = last_bad.map(|b| b.reason.chars().take(200).collect());
    let rows = records.value.as_array().cloned().unwrap_or_default();
    let recent = &rows[rows.len().saturating_sub(limit)..];

    // sub-intent → guid → weight, and the age of each sub-intent's newest pick.
    let mut weights: BTreeMap<&str, HashMap<&str, f32>> = BTreeMap::new();
    let mut newest: HashMap<&str, usize> = HashMap::new();
    for (age, row) in recent.iter().rev().enumerate() {
        let (Some(intent), Some(guid)) = (row["sub_intent_id"].as_str(), row["picked_guid"].as_str()) else {
            continue;
        };
        *weights.entry(intent).or_default().entry(guid).or_default() += DECAY.powi(age as i32);
        newest.entry(intent).or_insert(age);
    }
    let mut groups: Vec<PastPickGroup> = weights
        .into_iter()
        .map(|(intent, guids)| {
            let mut picks: Vec<PastPick> = guids
                .into_iter()
                .map(|(guid, weight)| PastPick {
                    guid: guid.to_owned(),
                    weight,
                })
                .collect();
            picks.sort_by(|a, b| b.weight.total_cmp(&a.weight).then_with(|| a.guid.cmp(&b.guid)));
            picks.truncate(top);
            PastPickGroup {
                sub_intent: intent.to_owned(),
                picks,
            }
        })
        .collect();
    groups.sort_by_key(|g| newest[g.sub_intent.as_str()]);
    let block = (!groups.is_empty()).then(|| {
        let mut lines = vec!["--- Past picks hint ---".to_owned()];
        for g in &groups {
            let guids: Vec<&str> = g.picks.iter().map(|p| p.guid.as_str()).collect();
            lines.push(format!("sub_intent=\"{}\": [{}]", g.sub_intent, guids.join(", ")));
        }
        lines.push("---".to_owned());
        lines.join("\n")
    });
    Ok(PastPicks {
        block,
        groups,
        skipped_line,
        skipped_why,
    })
}

/// Extra confidence per guid for a sub-intent: picks made for a similar
/// sub-intent (Jaccard of words ≥ 0.5) add `0.10 × min(1, weight) × similarity`,
/// capped at 0.10 in total — the same +0.10 a pick records as
/// `confidence_after`, fading with age and dissimilarity.
pub fn past_pick_boosts(intent: &Query, groups: &[PastPickGroup], vocab: &Vocabulary) -> HashMap<String, f32> {
    let mut boosts: HashMap<String, f32> = HashMap::new();
    for group in groups {
        let other = Query::analyze(&group.sub_intent, vocab);
        let union = intent.words.union(&other.words).count();
        let similarity = if union == 0 {
            0.0
        } else {
            intent.words.intersection(&other.words).count() as f32 / union as f32
        };
        if similarity < MIN_SIMILARITY {
            continue;
        }
        for pick in &group.picks {
            let boost = boosts.entry(pick.guid.clone()).or_default();
            *boost = (*boost + MAX_BOOST * pick.weight.min(1.0) * similarity).min(MAX_BOOST);
        }
    }
    boosts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(intent: &str, guid: &str) -> String {
        serde_json::json!({
            "ts": "2026-05-24T13:45:01Z", "query": intent, "sub_intent_id": intent, "picked_guid": guid,
            "candidate_guids": [guid], "confidence_before": 0.5, "confidence_after": 0.6, "source": "pick"
        })
        .to_string()
    }

    #[test]
    fn aliases_block_lists_matched_keys_or_nothing() {
        let v = Vocabulary::embedded();
        let block = aliases_block(&Query::analyze("좀비 메뉴와 음악", &v)).unwrap();
        assert_eq!(
            block,
            "--- Aliases hint ---\n좀비: [zombie, undead]\n메뉴: [menu]\n음악: [music, bgm, soundtrack]\n---"
        );
        assert!(aliases_block(&Query::analyze("zombie", &v)).is_none());
    }

    #[test]
    fn past_picks_keep_valid_rows_and_report_the_last_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("feedback.jsonl");
        let lines = [
            row("좀비 적", "g1"),
            "garbage".into(),
            row("좀비 적", "g2"),
            row("좀비 적", "g1"),
            "{}".into(),
            row("메뉴", "m"),
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let picks = past_picks(&path, 20, 3, &engine::io::Limits::default()).unwrap();
        assert_eq!(picks.skipped_line, Some(5));
        assert_eq!(picks.groups[0].sub_intent, "메뉴");
        let zombie: Vec<_> = picks.groups[1].picks.iter().map(|p| p.guid.as_str()).collect();
        assert_eq!(zombie, ["g1", "g2"]);
        assert_eq!(
            picks.block.unwrap(),
            "--- Past picks hint ---\nsub_intent=\"메뉴\": [m]\nsub_intent=\"좀비 적\": [g1, g2]\n---"
        );
        assert!(
            past_picks(&dir.path().join("none.jsonl"), 20, 3, &engine::io::Limits::default())
                .unwrap()
                .block
                .is_none()
        );
    }

    #[test]
    fn only_the_last_rows_count() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("feedback.jsonl");
        let mut lines: Vec<String> = (0..5).map(|_| row("좀비", "old")).collect();
        lines.extend((0..20).map(|_| row("좀비", "new")));
        std::fs::write(&path, lines.join("\n")).unwrap();
        let picks = past_picks(&path, 20, 3, &engine::io::Limits::default()).unwrap();
        assert_eq!(picks.groups[0].picks.len(), 1);
        assert_eq!(picks.groups[0].picks[0].guid, "new");
    }

    /// A line over the line limit or not UTF-8 is one skipped row, never a
    /// failed search.
    #[test]
    fn a_feedback_row_over_the_line_limit_or_not_utf8_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("feedback.jsonl");
        let mut bytes = format!("{}\n{}\n", row("좀비", "g"), "x".repeat(4096)).into_bytes();
        bytes.extend(b"\xff\xfe\n");
        std::fs::write(&path, bytes).unwrap();
        let limits = engine::io::Limits::from_config(None, None, Some(2));
        let picks = past_picks(&path, 20, 3, &limits).unwrap();
        assert_eq!(picks.skipped_line, Some(3));
        assert!(picks.skipped_why.unwrap().contains("not UTF-8"));
        assert_eq!(picks.groups[0].picks[0].guid, "g");
    }

    #[test]
    fn boosts_need_similar_intents_and_are_capped() {
        let v = Vocabulary::embedded();
        let groups = vec![PastPickGroup {
            sub_intent: "좀비 적 캐릭터".into(),
            picks: vec![PastPick {
                guid: "g".into(),
                weight: 3.0,
            }],
        }];
        let near = past_pick_boosts(&Query::analyze("좀비 적 캐릭터", &v), &groups, &v);
        assert!((near["g"] - MAX_BOOST).abs() < 1e-6);
        assert!(past_pick_boosts(&Query::analyze("메인 메뉴", &v), &groups, &v).is_empty());
    }
}
