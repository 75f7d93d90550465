//! What a build places, said before anything is sent (`docs/build.md#the-plan`):
//! per group, the chosen asset, where it goes, what the plan does with it
//! and what it pulls into the scene; for a group with nothing to place, why
//! and its closest candidates. `build --plan` stops here, without MCP for Unity.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::gate::{Choice, Decision};
use super::plan::Plan;
use super::summary::Caller;
use crate::search::result::shown_confidence;

const PREFIX: &str = "[unity-assets:build]";

/// One group of the plan.
#[derive(Debug, Clone, Serialize)]
pub struct Placement {
    pub group: usize,
    pub sub_intent: String,
    /// How the group's asset was chosen (`auto`, `confirmed`, `proposed`) or
    /// why there is none (`no_fit`, `aborted`, `unconfirmed`).
    pub choice: Choice,
    pub max_confidence: f64,
    /// The asset placed, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Where the plan puts it (x, y, z); absent when the plan gives no position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<Value>,
    /// The plan's one line on what it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// What a placed prefab brings along (the reference graph's line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pulls_in: Option<String>,
    /// For a group with nothing to place: its closest candidates' paths.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub closest: Vec<String>,
}

/// The build document of `--plan` (schemas/build-summary.schema.json): no
/// verdicts, as nothing was applied; the plan's lines and groups.
#[derive(Debug, Clone, Serialize)]
pub struct PlanReport {
    pub verdicts: Vec<Value>,
    pub lines: Vec<String>,
    pub unconfirmed: Vec<Value>,
    pub exit_code: i32,
    pub placements: Vec<Placement>,
}

/// The build the plan is for.
#[derive(Debug, Clone, Deserialize)]
pub struct Build {
    pub request: String,
    /// The confirm threshold, for why a group has nothing to place.
    pub confirm: f64,
    #[serde(default)]
    pub caller: Caller,
    /// `--plan`: the lines say nothing will be sent.
    #[serde(default)]
    pub dry: bool,
}

/// The plan of every group: `plans` pairs with the groups that have an
/// asset, in order (`planned`: their group numbers); `pulls_in` by group.
pub fn report(
    build: &Build,
    decisions: &[Decision],
    planned: &[usize],
    plans: &[Plan],
    pulls_in: &BTreeMap<usize, String>,
) -> PlanReport {
    let Build {
        request,
        confirm,
        caller,
        dry,
    } = build;
    let (confirm, caller, dry) = (*confirm, *caller, *dry);
    let plan_of = |group: usize| planned.iter().position(|g| *g == group).and_then(|i| plans.get(i));
    let placements: Vec<Placement> = decisions
        .iter()
        .map(|d| {
            let plan = plan_of(d.group);
            let chosen = d.chosen.as_ref().filter(|_| plan.is_some());
            Placement {
                group: d.group,
                sub_intent: d.sub_intent.clone(),
                choice: d.choice,
                max_confidence: d.max_confidence,
                path: chosen.map(|c| c.path.clone()),
                position: plan.and_then(|p| p.calls.iter().find_map(|c| c.args.get("position").cloned())),
                action: plan.map(|p| p.note.clone()),
                pulls_in: chosen.and_then(|_| pulls_in.get(&d.group).cloned()),
                closest: match chosen {
                    Some(_) => vec![],
                    None => d.candidates.iter().take(3).map(|c| c.path.clone()).collect(),
                },
            }
        })
        .collect();
    let header = if dry {
        format!("{PREFIX} plan for \"{request}\" (--plan: nothing is sent to MCP for Unity):")
    } else {
        format!("{PREFIX} plan for \"{request}\", before anything is sent to MCP for Unity:")
    };
    let mut lines = vec![header];
    lines.extend(placements.iter().map(|p| line(p, confirm, caller)));
    if dry {
        let proposed = placements.iter().any(|p| p.choice == Choice::Proposed);
        let then = if proposed {
            "with --yes to take each group's first candidate, or --choose G=N"
        } else {
            "when the plan suits you"
        };
        lines.push(format!(
            "{PREFIX} next: run `unity-assets build {}` without --plan, {then} (it needs MCP for Unity and an open editor, docs/build.md)",
            engine::template::shell_word(request)
        ));
    }
    PlanReport {
        verdicts: vec![],
        lines,
        unconfirmed: vec![],
        exit_code: 0,
        placements,
    }
}

/// `[unity-assets:build] 1. zombie enemy — auto (0.86): Assets/Z.prefab at [0, 0, 0] — …`
fn line(p: &Placement, confirm: f64, caller: Caller) -> String {
    let best = shown_confidence(p.max_confidence);
    let how = match p.choice {
        Choice::Auto => format!("auto ({best})"),
        Choice::Confirmed => format!("chosen ({best})"),
        Choice::Proposed => format!(
            "asks first ({best}; shown: its first candidate; {})",
            caller.rerun(p.group)
        ),
        Choice::NoFit => format!("nothing placed: no candidate reaches confirm ({confirm:.2}; best {best})"),
        Choice::Aborted => "nothing placed: aborted".to_owned(),
        Choice::Unconfirmed | Choice::Pending => {
            format!("nothing placed: unconfirmed ({best}; {})", caller.rerun(p.group))
        }
    };
    let mut text = format!("{PREFIX} {}. {} — {how}", p.group, p.sub_intent);
    match &p.path {
        Some(path) => {
            text.push_str(&format!(": {path}"));
            if let Some(position) = &p.position {
                text.push_str(&format!(" at {}", position_text(position)));
            }
            if let Some(action) = &p.action {
                text.push_str(&format!(" — {action}"));
            }
            if let Some(pulled) = &p.pulls_in {
                text.push_str(&format!("; {pulled}"));
            }
        }
        None if !p.closest.is_empty() => text.push_str(&format!("; closest: {}", p.closest.join(", "))),
        None => {}
    }
    text
}

/// `[3.0, 0.0, 0.0]` as `(3, 0, 0)`.
fn position_text(position: &Value) -> String {
    match position.as_array() {
        Some(xyz) => {
            let number = |v: &Value| v.as_f64().map_or_else(|| v.to_string(), |n| n.to_string());
            format!("({})", xyz.iter().map(number).collect::<Vec<_>>().join(", "))
        }
        None => position.to_string(),
    }
}
