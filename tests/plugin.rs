//! The Claude Code plugin shipped in the repo: `.claude-plugin/marketplace.json`
//! at the root and `plugin/` with its manifest, slash commands, launcher and
//! `.mcp.json`. Checked against the documented shapes, every command against
//! the MCP tools the pipelines really offer, and — when the tools are installed
//! (CI installs them; locally a missing one skips its test) — by Claude Code
//! itself: `claude plugin validate --strict`, the README's own install lines
//! in a throwaway home, `claude mcp list`, the SessionStart hook's message —
//! and the MCP Inspector's CLI.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The plugin's slash commands, `/unity-assets:<name>`.
const COMMANDS: &[&str] = &[
    "build",
    "deps",
    "doctor",
    "index",
    "pick",
    "refs",
    "reindex",
    "search",
    "unused",
    "web-search",
];

/// The tools that only read (`search` writes nothing but its own result file):
/// their commands pre-approve them; every other tool asks first.
const READ_ONLY_TOOLS: &[&str] = &["deps", "doctor", "refs", "search", "unused"];

/// How Claude Code names a tool of this plugin's server (`plugin:unity-assets:unity-assets`).
const TOOL_PREFIX: &str = "mcp__plugin_unity-assets_unity-assets__";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_unity-assets")
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_marketplace_lists_the_plugin_folder() {
    let market = json(&repo().join(".claude-plugin/marketplace.json"));
    assert_eq!(market["name"], "unity-assets");
    assert!(market["owner"]["name"].as_str().is_some_and(|n| !n.is_empty()));
    let plugins = market["plugins"].as_array().expect("plugins: [...]");
    assert_eq!(plugins.len(), 1);
    let entry = &plugins[0];
    let source = entry["source"].as_str().expect("a relative source");
    assert!(source.starts_with("./"), "sources are relative to the repo: {source}");
    let manifest = json(&repo().join(source).join(".claude-plugin/plugin.json"));
    // The plugin's name is the slash commands' namespace: /unity-assets:search.
    assert_eq!(manifest["name"], "unity-assets");
    assert_eq!(entry["name"], manifest["name"]);
    assert_eq!(entry["version"], manifest["version"]);
    assert!(manifest["description"].as_str().is_some_and(|d| !d.is_empty()));
}

/// The plugin's launcher, as `.mcp.json` names it.
fn launcher() -> PathBuf {
    repo().join("plugin/bin/unity-assets-mcp")
}

#[test]
fn the_plugin_starts_the_server_through_its_launcher() {
    let mcp = json(&repo().join("plugin/.mcp.json"));
    let server = &mcp["mcpServers"]["unity-assets"];
    // Run by `sh`, so a lost executable bit (a zip download, a copy) does not matter.
    assert_eq!(server["command"], "sh");
    assert_eq!(
        server["args"],
        serde_json::json!(["${CLAUDE_PLUGIN_ROOT}/bin/unity-assets-mcp", "mcp"])
    );
    assert!(launcher().is_file());
}

/// Runs the launcher with only `path` as PATH and `cargo_home` as CARGO_HOME.
fn launch(path: &Path, cargo_home: &Path, args: &[&str]) -> Output {
    Command::new("/bin/sh")
        .arg(launcher())
        .args(args)
        .env_clear()
        .env("PATH", path)
        .env("HOME", cargo_home)
        .env("CARGO_HOME", cargo_home)
        .output()
        .expect("run the launcher")
}

/// A folder holding only a link named `unity-assets` to the binary under test.
fn folder_with_binary() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(binary(), dir.path().join("unity-assets")).unwrap();
    dir
}

/// A PATH with `sh` and the basic tools, and no `unity-assets`.
const BARE_PATH: &str = "/usr/bin:/bin";

#[test]
fn the_launcher_finds_the_binary_on_path_or_in_cargos_bin_folder() {
    let empty = tempfile::tempdir().unwrap();
    let on_path = folder_with_binary();
    let path = format!("{}:{BARE_PATH}", on_path.path().display());
    let run = launch(Path::new(&path), empty.path(), &["--version"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(String::from_utf8_lossy(&run.stdout).starts_with("unity-assets "));

    // `cargo install` puts it in $CARGO_HOME/bin, often missing from the PATH
    // Claude Code starts servers with.
    let cargo_home = tempfile::tempdir().unwrap();
    std::fs::create_dir(cargo_home.path().join("bin")).unwrap();
    std::os::unix::fs::symlink(binary(), cargo_home.path().join("bin/unity-assets")).unwrap();
    let run = launch(Path::new(BARE_PATH), cargo_home.path(), &["--version"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(String::from_utf8_lossy(&run.stdout).starts_with("unity-assets "));
}

#[test]
fn without_the_binary_the_launcher_says_how_to_install_it() {
    let empty = tempfile::tempdir().unwrap();
    let run = launch(Path::new(BARE_PATH), empty.path(), &["mcp"]);
    assert_eq!(run.status.code(), Some(127), "the shell's 'command not found'");
    assert!(run.stdout.is_empty(), "stdout is the MCP channel: nothing may go there");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("not installed"), "{stderr}");
    assert!(
        stderr.contains(&format!("{}/bin", empty.path().display())),
        "where it looked: {stderr}"
    );
    // Run from the repository (a local marketplace): the exact line to run.
    let install = format!("cargo install --locked --path {}\n", repo().display());
    assert!(stderr.contains(&install), "{stderr}");

    // The SessionStart hook's mode: the same line, as a message for the user.
    let hook = launch(Path::new(BARE_PATH), empty.path(), &["--session-start"]);
    assert_eq!(hook.status.code(), Some(0), "a hook that fails shows an error instead");
    let answer: Value = serde_json::from_slice(&hook.stdout).expect("the hook answers JSON");
    let shown = answer["systemMessage"].as_str().unwrap_or_default();
    assert!(shown.contains(install.trim_end()), "{answer}");
    let on_path = folder_with_binary();
    let path = format!("{}:{BARE_PATH}", on_path.path().display());
    let found = launch(Path::new(&path), empty.path(), &["--session-start"]);
    assert!(
        found.status.success() && found.stdout.is_empty(),
        "installed: nothing to say"
    );

    // A plugin folder outside any clone still says what to run.
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join("plugin/bin");
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::copy(launcher(), copy.join("unity-assets-mcp")).unwrap();
    let run = Command::new("/bin/sh")
        .arg(copy.join("unity-assets-mcp"))
        .env_clear()
        .env("PATH", BARE_PATH)
        .env("HOME", empty.path())
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(127));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("cargo install --locked --path /path/to/your/clone/of/unity-assets"),
        "{stderr}"
    );
}

/// A command file: its YAML front matter (a mapping) and its body.
fn command_file(name: &str) -> (serde_yaml::Mapping, String) {
    let path = repo().join(format!("plugin/commands/{name}.md"));
    let text = std::fs::read_to_string(&path).unwrap();
    let rest = text.strip_prefix("---\n").expect("a command starts with front matter");
    let (head, body) = rest.split_once("\n---\n").expect("front matter is closed by ---");
    // As Claude Code reads it: YAML. A value that is not valid YAML drops every key.
    let front: serde_yaml::Value =
        serde_yaml::from_str(head).unwrap_or_else(|e| panic!("{}: front matter is not YAML: {e}", path.display()));
    let serde_yaml::Value::Mapping(front) = front else {
        panic!("{}: front matter is not a mapping", path.display())
    };
    (front, body.to_owned())
}

/// A front matter value that must be a non-empty string.
fn text_key<'a>(front: &'a serde_yaml::Mapping, name: &str, key: &str) -> Option<&'a str> {
    let value = front.get(key)?;
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("{name}: {key} is not a string: {value:?}"));
    assert!(!text.trim().is_empty(), "{name}: empty {key}");
    Some(text)
}

/// Every backtick span and fenced block of a Markdown text: where a shell line would be.
fn code_spans(body: &str) -> Vec<&str> {
    let mut spans = vec![];
    let mut rest = body;
    while let Some(start) = rest.find('`') {
        let fence = if rest[start..].starts_with("```") { "```" } else { "`" };
        let after = &rest[start + fence.len()..];
        let Some(end) = after.find(fence) else { break };
        spans.push(&after[..end]);
        rest = &after[end + fence.len()..];
    }
    spans
}

#[test]
fn every_command_calls_a_tool_the_pipelines_offer() {
    let dir = repo().join("plugin/commands");
    let found: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".md").map(str::to_owned))
        .collect();
    let expected: BTreeSet<String> = COMMANDS.iter().map(|c| c.to_string()).collect();
    assert_eq!(found, expected);

    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join("Assets")).unwrap();
    let project = unity_assets::project::Project::open(project.path(), None, None).expect("open");
    let tools = unity_assets::mcp_server::pipeline_tools(&project);

    for name in COMMANDS {
        let (front, body) = command_file(name);
        text_key(&front, name, "description").unwrap_or_else(|| panic!("{name}: no description"));
        for key in front.keys() {
            let key = key.as_str().unwrap_or_else(|| panic!("{name}: a key that is not text"));
            assert!(
                ["description", "argument-hint", "allowed-tools", "model"].contains(&key),
                "{name}: unknown front matter key {key}"
            );
        }
        let takes_arguments = text_key(&front, name, "argument-hint").is_some();
        assert_eq!(
            body.contains("$ARGUMENTS"),
            takes_arguments,
            "{name}: $ARGUMENTS vs argument-hint"
        );
        for span in code_spans(&body) {
            assert!(
                !span.contains("$ARGUMENTS"),
                "{name}: the user's text spliced into a command or JSON line: `{span}`"
            );
        }
        let tool = body
            .split("Call the `")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            .unwrap_or_else(|| panic!("{name}: names no tool"));
        assert!(
            tools.iter().any(|t| t == tool),
            "{name}: tool `{tool}` is not offered ({tools:?})"
        );
        assert!(
            body.contains(&format!("unity-assets {}", name)),
            "{name}: no CLI fallback"
        );

        let approved = text_key(&front, name, "allowed-tools").unwrap_or_default();
        let expected = if READ_ONLY_TOOLS.contains(&tool) {
            format!("{TOOL_PREFIX}{tool}")
        } else {
            String::new()
        };
        assert_eq!(
            approved, expected,
            "{name}: pre-approves exactly its tool when that only reads"
        );
    }
}

/// `name` found on PATH, or why the test that needs it is skipped (a
/// failure under CI, which installs it).
fn installed(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
    });
    if found.is_none() {
        test_support::readme::skip_unless_ci(&format!("`{name}` is not on PATH"));
    }
    found
}

/// `claude` with a throwaway home: no login, no settings of the user's, and no
/// traffic but what a command needs.
fn claude(claude: &Path, home: &Path, path: &str, args: &[&str]) -> Output {
    claude_in(claude, home, home, path, args)
}

/// [`claude`] run from `folder`.
fn claude_in(claude: &Path, home: &Path, folder: &Path, path: &str, args: &[&str]) -> Output {
    Command::new(claude)
        .args(args)
        .current_dir(folder)
        .env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .output()
        .expect("run claude")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn claude_code_validates_the_marketplace_and_the_plugin_strictly() {
    let Some(bin) = installed("claude") else { return };
    let home = tempfile::tempdir().unwrap();
    for target in [repo(), repo().join("plugin")] {
        let target = target.to_str().unwrap();
        let run = claude(
            &bin,
            home.path(),
            BARE_PATH,
            &["plugin", "validate", "--strict", target],
        );
        assert!(
            run.status.success(),
            "claude plugin validate --strict {target}:\n{}",
            text(&run)
        );
    }
}

/// The README's install section, as a newcomer copies it.
fn readme_install_lines() -> Vec<test_support::readme::ShellLine> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    test_support::readme::section_lines(&readme, "Install")
}

/// Installs the plugin into `home` with the README's own `claude plugin`
/// lines, run as written from the clone.
fn install_plugin(bin: &Path, home: &Path) {
    let lines: Vec<_> = readme_install_lines()
        .into_iter()
        .filter(|l| l.command.starts_with("claude plugin "))
        .collect();
    assert!(lines.len() >= 2, "README: no `claude plugin` lines to install with");
    for line in lines {
        let words = test_support::readme::split(&line.command);
        let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
        let run = claude_in(bin, home, &repo(), BARE_PATH, &args);
        assert!(run.status.success(), "README: `{}`:\n{}", line.command, text(&run));
    }
}

/// The `claude mcp list` line of the plugin's server.
fn server_line(bin: &Path, home: &Path, path: &str) -> String {
    let run = claude(bin, home, path, &["mcp", "list"]);
    let out = text(&run);
    out.lines()
        .find(|l| l.starts_with("plugin:unity-assets:unity-assets:"))
        .unwrap_or_else(|| panic!("claude mcp list names no plugin server:\n{out}"))
        .to_owned()
}

#[test]
fn the_readmes_install_and_plugin_lines_work_as_written() {
    let Some(bin) = installed("claude") else { return };
    let home = tempfile::tempdir().unwrap();
    let cargo_root = tempfile::tempdir().unwrap();
    let installed_bin = cargo_root.path().join("bin");
    let lines = readme_install_lines();
    let install = lines
        .iter()
        .find(|l| l.command.starts_with("cargo install "))
        .expect("README: no `cargo install` line");
    assert_eq!(install.command, "cargo install --locked --path .", "{install:?}");
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        // The release build as a newcomer runs it, into a throwaway root. Its
        // target folder is .ci/run's install's (so the build happens once) and
        // not the tests' own, which the running `cargo test` may hold.
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map_or_else(|| repo().join("target"), PathBuf::from)
            .join("readme-install");
        let run = Command::new("sh")
            .args(["-c", &install.command])
            .current_dir(repo())
            .env("CARGO_INSTALL_ROOT", cargo_root.path())
            .env("CARGO_TARGET_DIR", target)
            .output()
            .unwrap();
        assert!(run.status.success(), "README: `{}`:\n{}", install.command, text(&run));
    } else {
        eprintln!(
            "the README's `{}` is run under CI only (a release build); the test binary stands in",
            install.command
        );
        std::fs::create_dir(&installed_bin).unwrap();
        std::os::unix::fs::symlink(binary(), installed_bin.join("unity-assets")).unwrap();
    }
    let version = lines
        .iter()
        .find(|l| l.command.starts_with("unity-assets "))
        .expect("README: no check of the installed binary");
    let run = Command::new(installed_bin.join("unity-assets"))
        .args(test_support::readme::split(&version.command).iter().skip(1))
        .output()
        .unwrap();
    assert!(run.status.success(), "README: `{}`:\n{}", version.command, text(&run));

    install_plugin(&bin, home.path());
    let list = lines
        .iter()
        .find(|l| l.command == "claude mcp list")
        .expect("README: no `claude mcp list` line");
    let expected = list.comment.rsplit(" - ").next().unwrap();
    assert_eq!(expected, "✔ Connected", "README's comment: {list:?}");
    let node = bin.parent().unwrap().display().to_string();
    let path = format!("{}:{node}:{BARE_PATH}", installed_bin.display());
    let line = server_line(&bin, home.path(), &path);
    assert!(line.ends_with(expected), "{line}");
    assert!(
        session_start_message(&bin, home.path(), &path).is_none(),
        "with the binary installed, the session starts without a message"
    );
}

/// What the plugin's SessionStart hook shows the user when a headless
/// Claude Code session starts (`None`: it printed nothing). Claude Code runs
/// the hook before it finds there is no login, so nothing is sent anywhere.
fn session_start_message(bin: &Path, home: &Path, path: &str) -> Option<String> {
    let run = claude(
        bin,
        home,
        path,
        &["-p", "hello", "--output-format", "stream-json", "--verbose"],
    );
    let out = String::from_utf8_lossy(&run.stdout);
    let response = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["subtype"] == "hook_response" && v["hook_event"] == "SessionStart")
        .unwrap_or_else(|| panic!("the plugin's SessionStart hook did not run:\n{}", text(&run)));
    assert_eq!(response["exit_code"], 0, "{response}");
    let printed = response["stdout"].as_str().unwrap_or_default().trim();
    if printed.is_empty() {
        return None;
    }
    let answer: Value = serde_json::from_str(printed).unwrap_or_else(|e| panic!("{e}: {printed}"));
    assert_eq!(
        answer["hookSpecificOutput"]["additionalContext"], answer["systemMessage"],
        "Claude is told what the user is told"
    );
    Some(answer["systemMessage"].as_str().expect("a systemMessage").to_owned())
}

#[test]
fn without_the_binary_claude_code_shows_the_install_step() {
    let Some(bin) = installed("claude") else { return };
    let home = tempfile::tempdir().unwrap();
    install_plugin(&bin, home.path());
    let node = bin.parent().unwrap().display().to_string();
    let path = format!("{node}:{BARE_PATH}");
    let line = server_line(&bin, home.path(), &path);
    assert!(line.ends_with("✘ Failed to connect"), "{line}");
    let install = format!("cargo install --locked --path {}", repo().display());
    // Where the user looks: the message the session starts with.
    let shown = session_start_message(&bin, home.path(), &path).expect("a message at session start");
    assert!(shown.contains("unity-assets program is not installed"), "{shown}");
    assert!(shown.contains(&install), "{shown}");
    // And the server's stderr, which Claude Code keeps in its MCP log.
    let logs = walk(&home.path().join(".cache"));
    let logged = logs
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect::<String>();
    assert!(
        logged.contains(&install),
        "no install step in Claude Code's MCP logs ({logs:?}):\n{logged}"
    );
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    entries
        .filter_map(|e| e.ok())
        .flat_map(|e| {
            if e.path().is_dir() {
                walk(&e.path())
            } else {
                vec![e.path()]
            }
        })
        .collect()
}

/// The MCP Inspector's CLI mode against the server on the example project.
fn inspector(bin: &Path, project: &Path, method: &[&str]) -> Value {
    let run = Command::new(bin)
        .args([
            "--cli",
            binary(),
            "--project",
            project.to_str().unwrap(),
            "mcp",
            "--method",
        ])
        .args(method)
        .env("NO_COLOR", "1")
        .output()
        .expect("run the MCP Inspector");
    assert!(run.status.success(), "mcp-inspector --cli {method:?}:\n{}", text(&run));
    serde_json::from_slice(&run.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", text(&run)))
}

#[test]
fn the_mcp_inspector_lists_the_tools_and_searches_the_example_project() {
    let Some(bin) = installed("mcp-inspector") else { return };
    let project = tempfile::tempdir().unwrap();
    test_support::project::copy_tree(&repo().join("examples/zombie-survival"), project.path());
    let index = Command::new(binary())
        .args(["-q", "--project"])
        .arg(project.path())
        .arg("index")
        .output()
        .unwrap();
    assert!(index.status.success(), "index: {}", text(&index));

    let listed = inspector(&bin, project.path(), &["tools/list"]);
    let names: BTreeSet<&str> = listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for tool in [
        "search",
        "pick",
        "build",
        "index",
        "reindex",
        "doctor",
        "web_search",
        "list_pipelines",
        "graph",
    ] {
        assert!(names.contains(tool), "{tool} not listed: {names:?}");
    }

    let found = inspector(
        &bin,
        project.path(),
        &[
            "tools/call",
            "--tool-name",
            "search",
            "--tool-arg",
            "query=zombie enemy character",
        ],
    );
    assert_ne!(found["isError"], true, "{found}");
    assert_eq!(found["structuredContent"]["status"], "ok", "{found}");
    let first = &found["structuredContent"]["groups"][0]["candidates"][0]["path"];
    assert!(first.as_str().is_some_and(|p| p.contains("Zombie")), "{found}");
    let lines = found["content"][0]["text"].as_str().unwrap_or_default();
    assert!(lines.starts_with("[unity-assets:search] "), "{lines}");
}
