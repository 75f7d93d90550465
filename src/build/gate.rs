//! The confidence gate per sub-intent group (`docs/contracts.md#confidence-gate`).
//!
//! `max_confidence ≥ auto` → the top candidate is applied; `≥ confirm` → the
//! user chooses (`--choose GROUP=N`, `--yes` for the top, an interactive
//! `ask`, or the group stays unconfirmed with `--non-interactive`); below
//! `confirm` → rejected, with the closest candidates for the summary.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::search::result::shown_confidence;

/// One candidate as search-result.json holds it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Candidate {
    pub guid: String,
    pub path: String,
    pub confidence: f64,
    #[serde(default)]
    pub reasoning: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Group {
    pub sub_intent: String,
    #[serde(default)]
    pub candidates: Vec<Candidate>,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
pub struct Thresholds {
    pub auto: f64,
    pub confirm: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Branch {
    Auto,
    Confirm,
    Reject,
}

/// Where a group stands after the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    /// Auto branch: the top candidate.
    Auto,
    /// Confirm branch, chosen by `--choose`, `--yes` or the `ask` answer.
    Confirmed,
    /// Confirm branch on a terminal with no flag: the `ask` stage decides.
    Pending,
    /// Confirm branch under `--plan`: the top candidate is shown as what
    /// `--yes` would place; a real build asks first.
    Proposed,
    /// Confirm branch, not interactive and no answer given.
    Unconfirmed,
    /// The user answered `abort`.
    Aborted,
    /// Reject branch: no fitting candidate.
    NoFit,
}

/// The gate's decision for one group (1-based `group` as shown to users).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Decision {
    pub group: usize,
    pub sub_intent: String,
    pub max_confidence: f64,
    pub choice: Choice,
    pub chosen: Option<Candidate>,
    /// Candidates by confidence, highest first (the dialog and the reject
    /// report show them).
    pub candidates: Vec<Candidate>,
}

/// Flags that answer the confirm dialog without a terminal.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Answers {
    /// `GROUP=N` (both 1-based; `GROUP` may also be the sub-intent text;
    /// `N` may be `abort`).
    #[serde(default)]
    pub choose: Vec<String>,
    #[serde(default)]
    pub yes: bool,
    #[serde(default)]
    pub non_interactive: bool,
    /// `--plan`: nothing is placed, so nobody is asked; the top candidate
    /// stands for what would be chosen.
    #[serde(default)]
    pub plan: bool,
}

/// Decide every group of a search result.
pub fn decide(groups: &Value, thresholds: Thresholds, answers: &Answers) -> anyhow::Result<Vec<Decision>> {
    let groups: Vec<Group> = serde_json::from_value(groups.clone())
        .map_err(|e| anyhow::anyhow!("search-result.json groups are malformed: {e}"))?;
    let choose = parse_choose(&answers.choose, &groups)?;
    Ok(groups
        .into_iter()
        .enumerate()
        .map(|(i, group)| {
            let number = i + 1;
            let mut candidates = group.candidates;
            candidates.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
            let max_confidence = candidates.first().map_or(0.0, |c| c.confidence);
            let (choice, chosen) = match branch(max_confidence, thresholds) {
                Branch::Auto => (Choice::Auto, candidates.first().cloned()),
                Branch::Reject => (Choice::NoFit, None),
                Branch::Confirm => match choose.iter().find(|(g, _)| *g == number).map(|(_, n)| *n) {
                    Some(Some(n)) => (Choice::Confirmed, candidates.get(n - 1).cloned()),
                    Some(None) => (Choice::Aborted, None),
                    None if answers.yes => (Choice::Confirmed, candidates.first().cloned()),
                    None if answers.plan => (Choice::Proposed, candidates.first().cloned()),
                    None if answers.non_interactive => (Choice::Unconfirmed, None),
                    None => (Choice::Pending, None),
                },
            };
            Decision {
                group: number,
                sub_intent: group.sub_intent,
                max_confidence,
                choice,
                chosen,
                candidates,
            }
        })
        .collect())
}

pub fn branch(max_confidence: f64, thresholds: Thresholds) -> Branch {
    if max_confidence >= thresholds.auto {
        Branch::Auto
    } else if max_confidence >= thresholds.confirm {
        Branch::Confirm
    } else {
        Branch::Reject
    }
}

/// `GROUP=N` pairs as (group number, Some(candidate number) | None for abort).
fn parse_choose(pairs: &[String], groups: &[Group]) -> anyhow::Result<Vec<(usize, Option<usize>)>> {
    pairs
        .iter()
        .map(|pair| {
            let (group, pick) = pair
                .rsplit_once('=')
                .ok_or_else(|| anyhow::anyhow!("--choose {pair}: expected GROUP=N (for example --choose 2=1)"))?;
            let group = group.trim();
            let number = match group.parse::<usize>() {
                Ok(n) if (1..=groups.len()).contains(&n) => n,
                Ok(n) => anyhow::bail!("--choose {pair}: there is no group {n} (groups 1..={})", groups.len()),
                Err(_) => groups
                    .iter()
                    .position(|g| g.sub_intent == group)
                    .map(|i| i + 1)
                    .ok_or_else(|| anyhow::anyhow!("--choose {pair}: no group is numbered or named `{group}`"))?,
            };
            let pick = pick.trim();
            if pick.eq_ignore_ascii_case("abort") {
                return Ok((number, None));
            }
            let count = groups[number - 1].candidates.len();
            match pick.parse::<usize>() {
                Ok(n) if (1..=count).contains(&n) => Ok((number, Some(n))),
                _ => anyhow::bail!(
                    "--choose {pair}: group {number} has candidates 1..={count} (or `abort`); \
                     --choose counts from 1, as build lists them, where pick counts from 0"
                ),
            }
        })
        .collect()
}

/// The confirm dialog of a pending group: each candidate's path, confidence
/// and full reasoning, numbered from 1, then `abort`.
pub fn dialog(decision: &Decision) -> (String, Vec<String>) {
    let prompt = format!(
        "[unity-assets:build] {}. \"{}\" — best confidence {}; choose a candidate (numbered from 1):",
        decision.group,
        decision.sub_intent,
        shown_confidence(decision.max_confidence)
    );
    let mut choices: Vec<String> = decision
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            format!(
                "{}. {} ({}) — {}",
                i + 1,
                c.path,
                shown_confidence(c.confidence),
                c.reasoning
            )
        })
        .collect();
    choices.push("abort".to_owned());
    (prompt, choices)
}

/// Apply an `ask` answer (a number, a dialog line starting with its
/// number, or `abort`) to a pending decision.
pub fn apply_answer(mut decision: Decision, answer: &Value) -> Decision {
    if decision.choice != Choice::Pending {
        return decision;
    }
    let text = match answer {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => String::new(),
    };
    let number = text.split('.').next().and_then(|n| n.trim().parse::<usize>().ok());
    match number
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| decision.candidates.get(i))
    {
        Some(candidate) => {
            decision.chosen = Some(candidate.clone());
            decision.choice = Choice::Confirmed;
        }
        None => decision.choice = Choice::Aborted,
    }
    decision
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const T: Thresholds = Thresholds {
        auto: 0.70,
        confirm: 0.40,
    };

    fn groups() -> Value {
        json!([
            {"sub_intent": "zombie enemy", "candidates": [
                {"guid": "a", "path": "Assets/Zombie.prefab", "confidence": 0.86, "reasoning": "name and tags"}]},
            {"sub_intent": "background music", "candidates": [
                {"guid": "b", "path": "Assets/Calm.ogg", "confidence": 0.45, "reasoning": "audio, calm"},
                {"guid": "c", "path": "Assets/Battle.ogg", "confidence": 0.55, "reasoning": "audio, battle"}]},
            {"sub_intent": "weather", "candidates": [
                {"guid": "d", "path": "Assets/Rain.mat", "confidence": 0.20, "reasoning": "weak"}]},
        ])
    }

    #[test]
    fn thresholds_are_inclusive() {
        assert_eq!(branch(0.70, T), Branch::Auto);
        assert_eq!(branch(0.6999, T), Branch::Confirm);
        assert_eq!(branch(0.40, T), Branch::Confirm);
        assert_eq!(branch(0.3999, T), Branch::Reject);
    }

    #[test]
    fn non_interactive_leaves_confirm_groups_unconfirmed() {
        let d = decide(
            &groups(),
            T,
            &Answers {
                non_interactive: true,
                ..Answers::default()
            },
        )
        .unwrap();
        let choices: Vec<Choice> = d.iter().map(|d| d.choice).collect();
        assert_eq!(choices, [Choice::Auto, Choice::Unconfirmed, Choice::NoFit]);
        assert_eq!(d[0].chosen.as_ref().unwrap().guid, "a");
        assert_eq!(d[1].candidates[0].guid, "c", "sorted by confidence");
    }

    #[test]
    fn yes_takes_the_top_and_choose_takes_the_numbered_candidate() {
        let yes = decide(
            &groups(),
            T,
            &Answers {
                yes: true,
                ..Answers::default()
            },
        )
        .unwrap();
        assert_eq!(yes[1].chosen.as_ref().unwrap().guid, "c");
        let chosen = decide(
            &groups(),
            T,
            &Answers {
                choose: vec!["2=2".into()],
                yes: true,
                ..Answers::default()
            },
        )
        .unwrap();
        assert_eq!(
            (chosen[1].choice, chosen[1].chosen.as_ref().unwrap().guid.as_str()),
            (Choice::Confirmed, "b")
        );
        let by_name = decide(
            &groups(),
            T,
            &Answers {
                choose: vec!["background music=abort".into()],
                ..Answers::default()
            },
        )
        .unwrap();
        assert_eq!(by_name[1].choice, Choice::Aborted);
    }

    #[test]
    fn bad_choose_flags_say_what_is_valid() {
        for (flag, expected) in [("9=1", "no group 9"), ("2=5", "candidates 1..=2"), ("2", "GROUP=N")] {
            let err = decide(
                &groups(),
                T,
                &Answers {
                    choose: vec![flag.into()],
                    ..Answers::default()
                },
            )
            .unwrap_err();
            assert!(err.to_string().contains(expected), "{flag}: {err}");
        }
    }

    #[test]
    fn interactive_groups_wait_for_the_dialog() {
        let d = decide(&groups(), T, &Answers::default()).unwrap();
        assert_eq!(d[1].choice, Choice::Pending);
        let (prompt, choices) = dialog(&d[1]);
        assert!(prompt.contains("background music"));
        assert_eq!(
            choices,
            [
                "1. Assets/Battle.ogg (0.55) — audio, battle",
                "2. Assets/Calm.ogg (0.45) — audio, calm",
                "abort"
            ]
        );
        let answered = apply_answer(d[1].clone(), &json!(choices[1]));
        assert_eq!(answered.chosen.unwrap().guid, "b");
        assert_eq!(apply_answer(d[1].clone(), &json!("abort")).choice, Choice::Aborted);
    }
}
