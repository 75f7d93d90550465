//! Build: confidence-gated scene assembly through MCP for Unity — the native
//! pieces `pipelines/build.yaml` calls.
//!
//! The pipeline owns the flow (preflight → search → gate → confirm → plan →
//! guard + execute → summary); each function here is one narrow step:
//! `preflight` decides freshness, `gate` applies the confidence
//! thresholds and the `--choose/--yes/--non-interactive` answers, [`plan`]
//! is the builtin planner, `placements` says what the plan places before
//! anything is sent (and is all `--plan` does), [`scope`] the guard enforced
//! in code, [`execute`] the audited calls, `summary` the closing report.

pub mod execute;
pub(crate) mod gate;
pub(crate) mod placements;
pub mod plan;
pub(crate) mod preflight;
pub mod scope;
pub(crate) mod summary;

use engine::mcp::ServerConfig;
use engine::{Reach, Registry};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::search::load::IndexFiles;

use execute::{Execution, GroupPlan, Screened};
use gate::{Answers, Decision, Thresholds};
use plan::{Plan, PlanRequest};
use scope::{ScopePolicy, UnityScopeGuard};

#[derive(Deserialize)]
struct GateArgs {
    groups: Value,
    thresholds: Thresholds,
    #[serde(flatten)]
    answers: Answers,
}

#[derive(Deserialize)]
struct ResolveArgs {
    decisions: Vec<Decision>,
    /// The `ask` answers, one per pending decision, in order.
    #[serde(default)]
    answers: Vec<Value>,
}

/// A group to plan for, paired by position with its plan.
#[derive(Deserialize)]
struct Target {
    group: usize,
    sub_intent: String,
    asset: execute::AssetRef,
}

#[derive(Deserialize)]
struct GuardArgs {
    targets: Vec<Target>,
    plans: Vec<Plan>,
    policy: ScopePolicy,
}

#[derive(Deserialize)]
struct ExecuteArgs {
    screened: Screened,
    policy: ScopePolicy,
    #[serde(default)]
    mcp: Option<ServerConfig>,
}

#[derive(Deserialize)]
struct SummaryArgs {
    decisions: Vec<Decision>,
    #[serde(default)]
    execution: Option<Execution>,
    /// The groups planned for and their plans, in the same order.
    #[serde(default)]
    targets: Vec<Target>,
    #[serde(default)]
    plans: Vec<Plan>,
    /// Who called, for how an open group is answered.
    #[serde(default)]
    caller: summary::Caller,
}

#[derive(Deserialize)]
struct PlacementsArgs {
    build: placements::Build,
    decisions: Vec<Decision>,
    /// The groups planned for and their plans, in the same order.
    #[serde(default)]
    targets: Vec<Target>,
    #[serde(default)]
    plans: Vec<Plan>,
}

#[derive(Deserialize)]
struct PreflightArgs {
    /// The build request: a search result for another query is not fresh.
    request: String,
}

/// Register the build functions.
pub(crate) fn register(registry: &mut Registry) {
    registry
        .function(
            "build.preflight",
            Reach::NONE,
            "Is search-result.json fresh for this request and the current index?",
            |a: PreflightArgs, ctx| Ok(preflight::check(&ctx.workdir, &ctx.limits, &a.request)),
        )
        .function(
            "build.gate",
            Reach::NONE,
            "Confidence gate per group: auto / confirm / reject, with flag answers",
            |a: GateArgs, _| {
                let decisions = gate::decide(&a.groups, a.thresholds, &a.answers)?;
                let pending: Vec<Value> = decisions
                    .iter()
                    .filter(|d| d.choice == gate::Choice::Pending)
                    .map(|d| {
                        let (prompt, choices) = gate::dialog(d);
                        json!({"group": d.group, "prompt": prompt, "choices": choices})
                    })
                    .collect();
                let targets = plan_targets(&decisions);
                Ok(json!({"decisions": decisions, "pending": pending, "targets": targets}))
            },
        )
        .function(
            "build.resolve",
            Reach::NONE,
            "Apply the confirm dialog's answers to the pending groups",
            |a: ResolveArgs, ctx| {
                let mut answers = a.answers.into_iter();
                let decisions: Vec<Decision> = a
                    .decisions
                    .into_iter()
                    .map(|d| match d.choice {
                        gate::Choice::Pending => gate::apply_answer(d, &answers.next().unwrap_or(Value::Null)),
                        _ => d,
                    })
                    .collect();
                let mut targets = plan_targets(&decisions);
                describe_assets(
                    &mut targets,
                    &IndexFiles::new(ctx.workdir.join(crate::index::INDEX_DIR), ctx.limits),
                )?;
                Ok(json!({"decisions": decisions, "targets": targets}))
            },
        )
        .builtin(
            "build.plan",
            "Deterministic MCP for Unity calls per asset type",
            |a: PlanRequest, _| Ok(plan::plan(&a)),
        )
        .function(
            "build.guard",
            Reach::NONE,
            "Scope-check every planned call before anything is sent; audit denials",
            |a: GuardArgs, ctx| {
                if a.targets.len() != a.plans.len() {
                    let (targets, plans) = (a.targets.len(), a.plans.len());
                    return Err(format!("build.guard: {targets} targets but {plans} plans").into());
                }
                let plans = a
                    .targets
                    .into_iter()
                    .zip(a.plans)
                    .map(|(t, p)| {
                        let plan = GroupPlan {
                            group: t.group,
                            sub_intent: t.sub_intent,
                            calls: p.calls,
                        };
                        (t.asset, plan)
                    })
                    .collect();
                // Only indexed assets, at their indexed paths, go further.
                let (plans, refused) = execute::check_indexed(&ctx.workdir, &ctx.limits, plans)?;
                let mut screened = execute::screen(&ctx.workdir, &UnityScopeGuard::new(a.policy), plans)?;
                screened.violations.extend(refused);
                Ok(screened)
            },
        )
        .async_function(
            "build.execute",
            Reach::ALL,
            "Send the cleared calls to MCP for Unity, each guarded and audited",
            |a: ExecuteArgs, ctx| async move {
                execute::execute(
                    &ctx.workdir,
                    a.mcp,
                    &ctx.limits,
                    &UnityScopeGuard::new(a.policy),
                    a.screened,
                )
                .await
                .map_err(Into::into)
            },
        )
        .function(
            "build.summary",
            Reach::NONE,
            "Per sub-intent verdicts, audit lines and the next step",
            |a: SummaryArgs, ctx| {
                // A plan without calls applied nothing; its note says why.
                let empty: std::collections::BTreeMap<usize, String> = a
                    .targets
                    .iter()
                    .zip(&a.plans)
                    .filter(|(_, p)| p.calls.is_empty())
                    .map(|(t, p)| (t.group, p.note.clone()))
                    .collect();
                Ok(summary::summarize(
                    &a.decisions,
                    a.execution.as_ref(),
                    &empty,
                    &pulls_in(&a.decisions, &ctx.workdir, &ctx.limits),
                    a.caller,
                ))
            },
        )
        .function(
            "build.placements",
            Reach::NONE,
            "What the plan places, per group: asset, position, action, what it pulls in",
            |a: PlacementsArgs, ctx| {
                let planned: Vec<usize> = a.targets.iter().map(|t| t.group).collect();
                Ok(placements::report(
                    &a.build,
                    &a.decisions,
                    &planned,
                    &a.plans,
                    &pulls_in(&a.decisions, &ctx.workdir, &ctx.limits),
                ))
            },
        );
}

/// What each group's chosen prefab brings into the scene (the reference
/// graph's line), by group.
fn pulls_in(
    decisions: &[Decision],
    project: &std::path::Path,
    limits: &engine::io::Limits,
) -> std::collections::BTreeMap<usize, String> {
    decisions
        .iter()
        .filter_map(|d| Some((d.group, d.chosen.as_ref()?)))
        .filter(|(_, c)| c.path.ends_with(".prefab"))
        .filter_map(|(group, c)| Some((group, crate::references::pulls_in(project, limits, &c.guid)?)))
        .collect()
}

/// Give each target's asset its name, type and subtype from the index, so a
/// planner knows what it places (a search result holds only guid and path).
/// An asset the index no longer holds keeps what it had.
fn describe_assets(targets: &mut [Value], index: &IndexFiles) -> anyhow::Result<()> {
    let wanted: Vec<String> = targets
        .iter()
        .filter_map(|t| t["asset"]["guid"].as_str().map(str::to_owned))
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let rows: std::collections::HashMap<String, crate::search::records::AssetRow> = index
        .asset_lines(None)?
        .into_iter()
        .filter(|line| wanted.iter().any(|g| line.contains(g.as_str())))
        .filter_map(|line| crate::search::records::decode_row(Value::String(line)))
        .map(|row| (row.guid.clone(), row))
        .collect();
    for target in targets {
        let Some(row) = target["asset"]["guid"].as_str().and_then(|g| rows.get(g)) else {
            continue;
        };
        let asset = &mut target["asset"];
        asset["name"] = json!(row.name);
        asset["type"] = json!(row.asset_type);
        if let Some(subtype) = &row.type_subtype {
            asset["type_subtype"] = json!(subtype);
        }
    }
    Ok(())
}

/// The groups that have an asset to plan for, with what the planner needs.
fn plan_targets(decisions: &[Decision]) -> Vec<Value> {
    decisions
        .iter()
        .filter_map(|d| {
            let chosen = d.chosen.as_ref()?;
            Some(json!({"group": d.group, "sub_intent": d.sub_intent, "asset": {"guid": chosen.guid, "path": chosen.path},
                        "position": plan::slot(d.group)}))
        })
        .collect()
}
