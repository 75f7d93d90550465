//! The Unity scope guard: which MCP for Unity calls a build may send.
//!
//! Two layers, both in code and both consulted before anything is sent:
//! an allowlist of tool + action pairs read from `data/scope-policy.yml`
//! (anything not listed is denied), and the forbidden operations
//! (`docs/contracts.md#scope-guard`), which
//! are denied whatever the policy file says — a team can narrow the policy,
//! never open a destructive operation with it. Asset names, file contents and
//! LLM plans are data: they reach this guard as arguments and cannot change
//! its rules.

use std::collections::BTreeMap;

use engine::mcp::{CallGuard, Verdict};
use serde::Deserialize;
use serde_json::Value;

/// The allowlist as written in `data/scope-policy.yml`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopePolicy {
    /// tool → allowed actions (`"*"`: any action, or none).
    pub allow: BTreeMap<String, Vec<String>>,
}

const ANY_ACTION: &str = "*";

/// manage_editor actions that do not change editor or project settings;
/// every other action (tags, layers, package deployment, and any action a
/// newer server adds) counts as a settings change.
const EDITOR_ACTIONS_WITHOUT_SETTINGS: [&str; 8] = [
    "telemetry_status",
    "telemetry_ping",
    "play",
    "pause",
    "stop",
    "set_active_tool",
    "undo",
    "redo",
];

/// Why a call is one of the forbidden operations (delete/move/rename assets,
/// editor settings, builds, package removal, arbitrary code), if it is.
pub(crate) fn forbidden_reason(tool: &str, args: &Value) -> Option<String> {
    let action = normalized_action(args);
    let action = action.as_deref().unwrap_or("");
    let reason = match tool {
        "manage_asset" if matches!(action, "delete" | "move" | "rename") => {
            format!("manage_asset {action} is forbidden (AssetDatabase Delete/MoveAsset)")
        }
        "delete_script" => "delete_script is forbidden (AssetDatabase Delete)".to_owned(),
        "manage_script" if action == "delete" => "manage_script delete is forbidden (AssetDatabase Delete)".to_owned(),
        "manage_editor" if !EDITOR_ACTIONS_WITHOUT_SETTINGS.contains(&action) => {
            format!("manage_editor {action} changes editor settings (Editor EnvSettings)")
        }
        "manage_build" => "manage_build is forbidden (Build, *)".to_owned(),
        "manage_scene" if action == "modify_build_settings" => {
            "manage_scene modify_build_settings changes build settings (Build, *)".to_owned()
        }
        "execute_menu_item" if is_build_menu(args) => {
            format!(
                "execute_menu_item {} is forbidden (File/Build*)",
                menu_path(args).unwrap_or_default()
            )
        }
        "manage_packages" if action.starts_with("remove") => format!("manage_packages {action} is forbidden"),
        "execute_code" => "execute_code runs arbitrary editor code and is forbidden".to_owned(),
        // Its nested commands would bypass the per-call guard and audit.
        "batch_execute" => "batch_execute is forbidden: every call must be guarded and audited on its own".to_owned(),
        _ => return None,
    };
    Some(reason)
}

/// The action argument as the editor will read it (trimmed, lower case).
fn normalized_action(args: &Value) -> Option<String> {
    args.get("action")
        .and_then(Value::as_str)
        .map(|a| a.trim().to_lowercase())
}

fn menu_path(args: &Value) -> Option<&str> {
    args.get("menu_path")
        .or_else(|| args.get("menuPath"))
        .and_then(Value::as_str)
}

/// `File/Build Settings...`, `File/Build And Run`, `file / build profiles`…
fn is_build_menu(args: &Value) -> bool {
    let Some(path) = menu_path(args) else { return false };
    let parts: Vec<String> = path
        .split('/')
        .map(|p| p.trim().to_lowercase())
        .filter(|p| !p.is_empty())
        .collect();
    matches!(parts.as_slice(), [file, build, ..] if file == "file" && build.starts_with("build"))
}

/// The guard a build consults before every MCP call.
#[derive(Debug, Clone)]
pub struct UnityScopeGuard {
    policy: ScopePolicy,
}

impl UnityScopeGuard {
    /// A guard that allows only what `policy` lists.
    pub fn new(policy: ScopePolicy) -> Self {
        Self { policy }
    }
}

impl CallGuard for UnityScopeGuard {
    fn check(&self, tool: &str, args: &Value) -> Verdict {
        if let Some(reason) = forbidden_reason(tool, args) {
            return Verdict::Denied(reason);
        }
        if !args.is_object() && !args.is_null() {
            return Verdict::Denied(format!("{tool}: arguments must be a JSON object"));
        }
        let Some(allowed) = self.policy.allow.get(tool) else {
            return Verdict::Denied(format!("{tool} is not in the scope policy (data/scope-policy.yml)"));
        };
        if allowed.iter().any(|a| a == ANY_ACTION) {
            return Verdict::Allowed;
        }
        match normalized_action(args) {
            Some(action) if allowed.iter().any(|a| a.eq_ignore_ascii_case(&action)) => Verdict::Allowed,
            Some(action) => Verdict::Denied(format!(
                "{tool} {action} is not in the scope policy (data/scope-policy.yml)"
            )),
            None => Verdict::Denied(format!(
                "{tool} without an action is not in the scope policy (data/scope-policy.yml)"
            )),
        }
    }

    /// Menu items are audited by their path, so an audit scan sees what ran.
    fn action_of(&self, tool: &str, args: &Value) -> Option<String> {
        match tool {
            "execute_menu_item" => menu_path(args).map(str::to_owned),
            _ => args.get("action").and_then(Value::as_str).map(str::to_owned),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A policy that tries to open every forbidden tuple.
    fn permissive() -> UnityScopeGuard {
        let tools = [
            "manage_asset",
            "delete_script",
            "manage_script",
            "manage_editor",
            "manage_build",
            "manage_scene",
            "execute_menu_item",
            "manage_packages",
            "execute_code",
            "batch_execute",
        ];
        UnityScopeGuard::new(ScopePolicy {
            allow: tools.iter().map(|t| (t.to_string(), vec!["*".into()])).collect(),
        })
    }

    fn shipped() -> UnityScopeGuard {
        let text = include_str!("../../data/scope-policy.yml");
        UnityScopeGuard::new(serde_yaml::from_str(text).expect("the shipped policy parses"))
    }

    #[test]
    fn forbidden_tuples_are_denied_whatever_the_policy_says() {
        let guard = permissive();
        let forbidden = [
            ("manage_asset", json!({"action": "delete", "path": "Assets/A.prefab"})),
            (
                "manage_asset",
                json!({"action": " Move ", "path": "Assets/A.prefab", "destination": "Assets/B"}),
            ),
            ("manage_asset", json!({"action": "RENAME", "path": "Assets/A.prefab"})),
            ("delete_script", json!({"uri": "Assets/Scripts/Player.cs"})),
            (
                "manage_script",
                json!({"action": "delete", "name": "Player", "path": "Assets/Scripts"}),
            ),
            ("manage_editor", json!({"action": "add_layer", "layer_name": "Zombies"})),
            ("manage_editor", json!({"action": "set_player_settings"})),
            ("manage_build", json!({"action": "status"})),
            ("manage_scene", json!({"action": "modify_build_settings"})),
            ("execute_menu_item", json!({"menu_path": "File/Build Settings..."})),
            ("execute_menu_item", json!({"menu_path": " file / build and run"})),
            (
                "manage_packages",
                json!({"action": "remove_package", "package": "com.unity.ugui"}),
            ),
            (
                "execute_code",
                json!({"action": "execute", "code": "AssetDatabase.DeleteAsset(\"Assets\")"}),
            ),
            (
                "batch_execute",
                json!({"commands": [{"tool": "manage_scene", "params": {"action": "save"}}]}),
            ),
        ];
        for (tool, args) in forbidden {
            assert!(!guard.check(tool, &args).is_allowed(), "{tool} {args} must be denied");
        }
    }

    #[test]
    fn harmless_calls_of_watched_tools_follow_the_policy() {
        let guard = permissive();
        assert!(guard.check("manage_editor", &json!({"action": "play"})).is_allowed());
        assert!(guard
            .check("execute_menu_item", &json!({"menu_path": "File/Save Project"}))
            .is_allowed());
        assert!(guard
            .check("manage_packages", &json!({"action": "list_packages"}))
            .is_allowed());
    }

    #[test]
    fn the_shipped_policy_allows_the_planner_and_denies_the_rest() {
        let guard = shipped();
        assert!(guard
            .check(
                "manage_gameobject",
                &json!({"action": "create", "prefab_path": "Assets/Z.prefab"})
            )
            .is_allowed());
        assert!(guard.check("manage_scene", &json!({"action": "save"})).is_allowed());
        assert!(guard
            .check("find_gameobjects", &json!({"search_term": "Zombie"}))
            .is_allowed());
        let Verdict::Denied(reason) = guard.check(
            "manage_gameobject",
            &json!({"action": "delete", "target": "Main Camera"}),
        ) else {
            panic!("delete is not in the policy");
        };
        assert!(reason.contains("not in the scope policy"), "{reason}");
        assert!(!guard
            .check("manage_scene", &json!({"action": "load", "path": "Assets/Other.unity"}))
            .is_allowed());
        assert!(!guard
            .check("manage_prefabs", &json!({"action": "create_from_gameobject"}))
            .is_allowed());
        assert!(!guard
            .check("manage_gameobject", &json!({"name": "no action"}))
            .is_allowed());
        assert!(!guard.check("manage_gameobject", &json!(["create"])).is_allowed());
    }

    #[test]
    fn menu_items_are_audited_by_path() {
        let guard = shipped();
        assert_eq!(
            guard
                .action_of("execute_menu_item", &json!({"menu_path": "File/Build And Run"}))
                .as_deref(),
            Some("File/Build And Run")
        );
        assert_eq!(
            guard.action_of("manage_scene", &json!({"action": "save"})).as_deref(),
            Some("save")
        );
    }
}
