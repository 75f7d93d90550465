//! The closing report (`docs/contracts.md#build-summary`): one verdict line
//! per sub-intent, the closest candidates of rejected groups, counts, audit
//! lines, next step.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::execute::Execution;
use super::gate::{Choice, Decision};
use crate::search::result::shown_confidence;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    AutoApplied,
    ConfirmedAndApplied,
    Unconfirmed,
    Rejected,
    ScopeViolation,
    Failed,
}

impl Verdict {
    fn label(self) -> &'static str {
        match self {
            Verdict::AutoApplied => "auto applied",
            Verdict::ConfirmedAndApplied => "confirmed and applied",
            Verdict::Unconfirmed => "unconfirmed",
            Verdict::Rejected => "rejected",
            Verdict::ScopeViolation => "scope_violation",
            Verdict::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub verdicts: Vec<Verdict>,
    pub lines: Vec<String>,
    /// Groups that need a decision nobody gave (non-interactive runs, MCP
    /// calls), with the choices `choose: ["G=N"]` takes.
    pub unconfirmed: Vec<Unconfirmed>,
    /// 1 when a group failed or hit the scope guard, else 0.
    pub exit_code: i32,
}

/// A confirm group left open, for a caller that answers in a second call.
#[derive(Debug, Clone, Serialize)]
pub struct Unconfirmed {
    pub group: usize,
    pub sub_intent: String,
    /// Numbered from 1, as `--choose G=N` counts them.
    pub choices: Vec<Offered>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Offered {
    pub n: usize,
    pub guid: String,
    pub path: String,
    pub confidence: f64,
}

const PREFIX: &str = "[unity-assets:build]";

/// Who called the build, so an open group says how to answer it in the
/// caller's own terms: flags on the command line, arguments over MCP.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Caller {
    #[default]
    Cli,
    Mcp,
}

impl Caller {
    /// How to apply any unconfirmed group, in the caller's own terms.
    fn rerun_any(self) -> &'static str {
        match self {
            Caller::Cli => "rerun with --choose G=N or --yes",
            Caller::Mcp => "call `build` again with \"choose\": [\"G=N\"] or \"yes\": true",
        }
    }

    pub(super) fn rerun(self, group: usize) -> String {
        match self {
            Caller::Cli => format!("rerun with --choose {group}=N (N counts from 1) or --yes"),
            Caller::Mcp => {
                format!("call `build` again with \"choose\": [\"{group}=N\"] (N counts from 1) or \"yes\": true")
            }
        }
    }
}

/// `empty_plans`: groups whose plan had no calls, with the plan's note;
/// `pulls_in`: for groups that place a prefab, what it pulls in (the
/// reference graph's line), appended to the group's applied line.
pub fn summarize(
    decisions: &[Decision],
    execution: Option<&Execution>,
    empty_plans: &BTreeMap<usize, String>,
    pulls_in: &BTreeMap<usize, String>,
    caller: Caller,
) -> Summary {
    let audit_lines = execution.map_or(0, |e| e.audit_lines);
    let mut lines = Vec::new();
    let mut verdicts = Vec::new();
    let mut unconfirmed = Vec::new();
    for d in decisions {
        let violation = execution.and_then(|e| e.violations.iter().find(|v| v.group == d.group));
        let applied = execution.and_then(|e| e.groups.iter().find(|g| g.group == d.group));
        let chosen = d
            .chosen
            .as_ref()
            .map(|c| format!("{} ({})", c.path, shown_confidence(c.confidence)))
            .unwrap_or_default();
        let applied_detail = match pulls_in.get(&d.group) {
            Some(pulled) => format!("{chosen}; {pulled}"),
            None => chosen.clone(),
        };
        let (verdict, detail) = match (d.choice, violation, applied) {
            (_, Some(v), _) => (
                Verdict::ScopeViolation,
                format!("{} — nothing was sent for this group", v.reason),
            ),
            (_, _, Some(a)) if !a.ok => (Verdict::Failed, a.error.clone().unwrap_or_default()),
            (Choice::Auto, _, Some(_)) => (Verdict::AutoApplied, applied_detail),
            (Choice::Confirmed, _, Some(_)) => (Verdict::ConfirmedAndApplied, applied_detail),
            (Choice::Auto | Choice::Confirmed, _, None) => match empty_plans.get(&d.group) {
                Some(note) => (Verdict::Failed, format!("{chosen}: {note}")),
                None => (Verdict::Failed, format!("{chosen} was not applied")),
            },
            (Choice::Unconfirmed | Choice::Pending | Choice::Proposed, ..) => (
                Verdict::Unconfirmed,
                format!(
                    "best confidence {}; {}",
                    shown_confidence(d.max_confidence),
                    caller.rerun(d.group)
                ),
            ),
            (Choice::Aborted, ..) => (Verdict::Rejected, "aborted by the user".into()),
            (Choice::NoFit, ..) => (Verdict::Rejected, "no fitting candidate".into()),
        };
        lines.push(format!(
            "{PREFIX} {}. {} — {}: {detail}",
            d.group,
            d.sub_intent,
            verdict.label()
        ));
        if verdict == Verdict::Unconfirmed {
            unconfirmed.push(Unconfirmed {
                group: d.group,
                sub_intent: d.sub_intent.clone(),
                choices: (d.candidates.iter().enumerate())
                    .map(|(i, c)| Offered {
                        n: i + 1,
                        guid: c.guid.clone(),
                        path: c.path.clone(),
                        confidence: c.confidence,
                    })
                    .collect(),
            });
        }
        if d.choice == Choice::NoFit {
            for c in d.candidates.iter().take(3) {
                lines.push(format!(
                    "    closest: {} ({}) — {}",
                    c.path,
                    shown_confidence(c.confidence),
                    c.reasoning
                ));
            }
            lines.push(format!(
                "    try: other words, as in `unity-assets search {}`, or `unity-assets reindex` if assets changed",
                engine::template::shell_word(&d.sub_intent)
            ));
        }
        verdicts.push(verdict);
    }
    let mut counts: BTreeMap<Verdict, usize> = BTreeMap::new();
    for v in &verdicts {
        *counts.entry(*v).or_default() += 1;
    }
    let counted: Vec<String> = counts.iter().map(|(v, n)| format!("{n} {}", v.label())).collect();
    lines.push(format!(
        "{PREFIX} summary: {}; {audit_lines} audit lines written",
        counted.join(", ")
    ));
    let failed = verdicts
        .iter()
        .any(|v| matches!(v, Verdict::Failed | Verdict::ScopeViolation));
    lines.push(format!("{PREFIX} next: {}", next_step(&verdicts, failed, caller)));
    Summary {
        verdicts,
        lines,
        unconfirmed,
        exit_code: i32::from(failed),
    }
}

/// What to do after this build: only a build that added something points
/// at the scene.
fn next_step(verdicts: &[Verdict], failed: bool, caller: Caller) -> String {
    let added = verdicts
        .iter()
        .any(|v| matches!(v, Verdict::AutoApplied | Verdict::ConfirmedAndApplied));
    let open = verdicts.contains(&Verdict::Unconfirmed);
    let rerun = caller.rerun_any();
    match (failed, added, open) {
        (true, ..) => format!(
            "see the reasons above; the audit log is {}/{}",
            crate::index::INDEX_DIR,
            super::execute::AUDIT_FILE
        ),
        (false, true, false) => "check the assets added to the scene, then review the changes with git diff".into(),
        (false, true, true) => format!("check the assets added to the scene; for the unconfirmed groups, {rerun}"),
        (false, false, true) => format!("nothing was added to the scene; {rerun} to apply the unconfirmed groups"),
        (false, false, false) => {
            "nothing was added to the scene; rephrase the request (see the closest candidates above)".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::execute::{Applied, Violation};
    use crate::build::gate::{decide, Answers, Thresholds};
    use serde_json::json;

    #[test]
    fn every_group_gets_a_verdict_line() {
        let groups = json!([
            {"sub_intent": "enemy", "candidates": [{"guid": "a", "path": "Assets/Z.prefab", "confidence": 0.9, "reasoning": "r"}]},
            {"sub_intent": "music", "candidates": [{"guid": "b", "path": "Assets/M.ogg", "confidence": 0.5, "reasoning": "r"}]},
            {"sub_intent": "sky", "candidates": [{"guid": "c", "path": "Assets/S.mat", "confidence": 0.1, "reasoning": "weak"}]},
            {"sub_intent": "evil", "candidates": [{"guid": "d", "path": "Assets/E.prefab", "confidence": 0.95, "reasoning": "r"}]},
        ]);
        let decisions = decide(
            &groups,
            Thresholds {
                auto: 0.7,
                confirm: 0.4,
            },
            &Answers {
                non_interactive: true,
                ..Answers::default()
            },
        )
        .unwrap();
        let execution = Execution {
            status: "ok".into(),
            message: None,
            groups: vec![Applied {
                group: 1,
                ok: true,
                calls_sent: 2,
                error: None,
            }],
            violations: vec![Violation {
                group: 4,
                tool: "manage_asset".into(),
                reason: "manage_asset delete is forbidden".into(),
            }],
            audit_lines: 3,
            mcp_ms: 0,
        };
        let s = summarize(
            &decisions,
            Some(&execution),
            &BTreeMap::new(),
            &BTreeMap::new(),
            Caller::Cli,
        );
        assert_eq!(
            s.verdicts,
            [
                Verdict::AutoApplied,
                Verdict::Unconfirmed,
                Verdict::Rejected,
                Verdict::ScopeViolation
            ]
        );
        assert_eq!(
            s.lines[0],
            "[unity-assets:build] 1. enemy — auto applied: Assets/Z.prefab (0.90)"
        );
        let pulled = BTreeMap::from([(1, "pulls in 2 assets (Material 2): A.mat, B.mat".to_owned())]);
        let s = summarize(&decisions, Some(&execution), &BTreeMap::new(), &pulled, Caller::Cli);
        assert_eq!(
            s.lines[0],
            "[unity-assets:build] 1. enemy — auto applied: Assets/Z.prefab (0.90); pulls in 2 assets (Material 2): A.mat, B.mat"
        );
        assert!(s
            .lines
            .iter()
            .any(|l| l.contains("closest: Assets/S.mat (0.10) — weak")));
        assert!(s.lines.iter().any(
            |l| l.ends_with("1 auto applied, 1 unconfirmed, 1 rejected, 1 scope_violation; 3 audit lines written")
        ));
        assert_eq!(s.exit_code, 1);
        // The open group comes back as choices a second call can answer.
        assert_eq!(s.unconfirmed.len(), 1);
        assert_eq!(s.unconfirmed[0].group, 2);
        assert_eq!(s.unconfirmed[0].choices[0].n, 1);
        assert_eq!(s.unconfirmed[0].choices[0].path, "Assets/M.ogg");
    }

    #[test]
    fn a_group_whose_plan_was_invalid_says_nothing_was_applied_and_why() {
        let groups = json!([
            {"sub_intent": "enemy", "candidates": [{"guid": "a", "path": "Assets/Z.prefab", "confidence": 0.9, "reasoning": "r"}]},
        ]);
        let thresholds = Thresholds {
            auto: 0.7,
            confirm: 0.4,
        };
        let decisions = decide(&groups, thresholds, &Answers::default()).unwrap();
        let execution = Execution {
            status: "ok".into(),
            message: None,
            groups: vec![],
            violations: vec![],
            audit_lines: 0,
            mcp_ms: 0,
        };
        let why = "nothing applied: the planner gave no valid plan".to_owned();
        let s = summarize(
            &decisions,
            Some(&execution),
            &BTreeMap::from([(1, why)]),
            &BTreeMap::new(),
            Caller::Cli,
        );
        assert_eq!(
            s.lines[0],
            "[unity-assets:build] 1. enemy — failed: Assets/Z.prefab (0.90): nothing applied: the planner gave no valid plan"
        );
        assert!(
            s.lines.iter().all(|l| !l.contains("check the assets added")),
            "{:?}",
            s.lines
        );
        assert_eq!(s.exit_code, 1);
    }

    #[test]
    fn a_build_that_added_nothing_does_not_point_at_the_scene() {
        let groups = json!([
            {"sub_intent": "music", "candidates": [{"guid": "b", "path": "Assets/M.ogg", "confidence": 0.5, "reasoning": "r"}]},
        ]);
        let thresholds = Thresholds {
            auto: 0.7,
            confirm: 0.4,
        };
        let answers = Answers {
            non_interactive: true,
            ..Answers::default()
        };
        let decisions = decide(&groups, thresholds, &answers).unwrap();
        let s = summarize(&decisions, None, &BTreeMap::new(), &BTreeMap::new(), Caller::Cli);
        assert_eq!(s.verdicts, [Verdict::Unconfirmed]);
        assert_eq!(
            s.lines.last().unwrap(),
            "[unity-assets:build] next: nothing was added to the scene; rerun with --choose G=N or --yes to apply the unconfirmed groups"
        );
    }
}
