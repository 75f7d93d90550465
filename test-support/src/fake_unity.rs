//! A fake Unity editor speaking MCP for Unity's bridge protocol, so the real
//! `mcp-for-unity` server can be driven end to end without Unity.
//!
//! What it does, as the real bridge does:
//! - announces itself in `<status dir>/unity-mcp-status-<first 8 hex of
//!   sha1(Assets path)>.json` (`unity_port`, `reloading`, `project_path`,
//!   `project_name`, `unity_version`, `last_heartbeat`);
//! - greets each TCP connection with `WELCOME UNITY-MCP 1 FRAMING=1\n`, then
//!   exchanges frames of an 8-byte big-endian length + UTF-8 JSON;
//! - answers `ping` with a compact pong (the server byte-matches it), and
//!   `{"type": tool, "params": {...}}` commands with
//!   `{"status":"success","result":{"success":bool,...}}`. Tool failures are
//!   `success:false`, never `status:error`, which would make the server
//!   reconnect and resend the command.
//!
//! It records every command it receives and keeps a small scene model, so a
//! test can assert exactly what reached "Unity".

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{json, Map, Value};
use sha1::{Digest, Sha1};

const GREETING: &[u8] = b"WELCOME UNITY-MCP 1 FRAMING=1\n";
const PONG: &[u8] = br#"{"status":"success","result":{"message":"pong"}}"#;
/// The editor-side queries the server sends on its own (tool sync, readiness
/// probes around mutating calls); tests usually want them filtered out.
pub const HOUSEKEEPING: [&str; 3] = ["get_tool_states", "get_editor_state", "get_project_info"];
/// The core tools this editor says are enabled when asked `get_tool_states`.
const ENABLED_TOOLS: [&str; 10] = [
    "manage_scene",
    "manage_gameobject",
    "manage_components",
    "manage_asset",
    "manage_prefabs",
    "manage_material",
    "find_gameobjects",
    "read_console",
    "manage_editor",
    "execute_menu_item",
];

/// One command as the editor received it.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    pub tool: String,
    pub params: Value,
}

impl Command {
    pub fn action(&self) -> Option<&str> {
        self.params.get("action").and_then(Value::as_str)
    }
}

/// A GameObject in the fake active scene.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneObject {
    pub name: String,
}

#[derive(Debug, Default)]
struct Scene {
    objects: Vec<SceneObject>,
    dirty: bool,
    saves: usize,
}

#[derive(Default)]
struct State {
    commands: Vec<Command>,
    pings: usize,
    scene: Scene,
}

/// A running fake editor; it stops listening when dropped.
pub struct FakeUnity {
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
}

impl FakeUnity {
    /// Start an editor for the Unity project at `project` whose assets are
    /// `assets` (project-relative paths such as `Assets/Zombie.prefab`),
    /// announcing itself in `status_dir`.
    pub fn start(project: &Path, status_dir: &Path, assets: &[&str]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().expect("local address").port();
        let assets_path = project.join("Assets").to_string_lossy().into_owned();
        let hash = Sha1::digest(assets_path.as_bytes());
        let hash8: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
        std::fs::create_dir_all(status_dir).expect("create the status folder");
        let status_file = status_dir.join(format!("unity-mcp-status-{hash8}.json"));
        let status = json!({
            "unity_port": port,
            "reloading": false,
            "project_path": assets_path,
            "project_name": project.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            "unity_version": "6000.0.23f1",
            "last_heartbeat": time_now_rfc3339(),
        });
        std::fs::write(&status_file, status.to_string()).expect("write the status file");

        let fake = Self {
            state: Arc::default(),
            stop: Arc::default(),
        };
        let editor = Editor {
            project: project.to_path_buf(),
            assets: assets.iter().map(|a| a.to_string()).collect(),
            state: Arc::clone(&fake.state),
        };
        let stop = Arc::clone(&fake.stop);
        listener.set_nonblocking(true).expect("non-blocking listener");
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let editor = editor.clone();
                        thread::spawn(move || editor.serve(stream));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => thread::sleep(Duration::from_millis(5)),
                    Err(_) => break,
                }
            }
        });
        fake
    }

    /// Every command received so far, in order (pings excluded).
    pub fn commands(&self) -> Vec<Command> {
        self.state.lock().unwrap().commands.clone()
    }

    /// The commands a build sent, without the server's own housekeeping.
    pub fn tool_commands(&self) -> Vec<Command> {
        self.commands()
            .into_iter()
            .filter(|c| !HOUSEKEEPING.contains(&c.tool.as_str()))
            .collect()
    }

    pub fn pings(&self) -> usize {
        self.state.lock().unwrap().pings
    }

    pub fn scene_objects(&self) -> Vec<SceneObject> {
        self.state.lock().unwrap().scene.objects.clone()
    }

    pub fn scene_saves(&self) -> usize {
        self.state.lock().unwrap().scene.saves
    }
}

impl Drop for FakeUnity {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// What each connection thread shares.
#[derive(Clone)]
struct Editor {
    project: PathBuf,
    assets: BTreeSet<String>,
    state: Arc<Mutex<State>>,
}

impl Editor {
    fn serve(&self, mut stream: TcpStream) {
        let _ = stream.set_nodelay(true);
        if stream.write_all(GREETING).is_err() {
            return;
        }
        while let Some(payload) = read_frame(&mut stream) {
            let reply = if payload == b"ping" {
                self.state.lock().unwrap().pings += 1;
                PONG.to_vec()
            } else {
                let result = match serde_json::from_slice::<Value>(&payload) {
                    Ok(message) => self.handle(message),
                    Err(e) => failure(&format!("invalid JSON command: {e}")),
                };
                json!({"status": "success", "result": result}).to_string().into_bytes()
            };
            if write_frame(&mut stream, &reply).is_err() {
                return;
            }
        }
    }

    fn handle(&self, message: Value) -> Value {
        let tool = message
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let params = message.get("params").cloned().unwrap_or_else(|| json!({}));
        let mut state = self.state.lock().unwrap();
        state.commands.push(Command {
            tool: tool.clone(),
            params: params.clone(),
        });
        let action = params
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_lowercase();
        let scene = &mut state.scene;
        match (tool.as_str(), action.as_str()) {
            ("get_tool_states", _) => {
                let tools: Vec<Value> = ENABLED_TOOLS
                    .iter()
                    .map(|t| json!({"name": t, "enabled": true}))
                    .collect();
                json!({"success": true, "data": {"tools": tools}})
            }
            ("get_editor_state", _) => json!({"success": true, "data": {
                "compilation": {"is_compiling": false, "is_domain_reload_pending": false},
                "tests": {"is_running": false},
                "editor": {"is_playing": false},
            }}),
            ("get_project_info", _) => json!({"success": true, "data": {
                "projectRoot": self.project.to_string_lossy(),
                "projectName": self.project.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                "unityVersion": "6000.0.23f1",
                "platform": "StandaloneLinux64",
                "assetsPath": self.project.join("Assets").to_string_lossy(),
            }}),
            ("manage_scene", "get_active") => json!({"success": true, "data": {
                "name": "Main", "path": "Assets/Scenes/Main.unity", "isDirty": scene.dirty,
                "rootCount": scene.objects.len(),
            }}),
            ("manage_scene", "get_hierarchy") => {
                let names: Vec<&str> = scene.objects.iter().map(|o| o.name.as_str()).collect();
                json!({"success": true, "data": {"items": names}})
            }
            ("manage_scene", "save") => {
                scene.dirty = false;
                scene.saves += 1;
                json!({"success": true, "message": "Scene 'Main' saved to 'Assets/Scenes/Main.unity'."})
            }
            ("manage_gameobject", "create") => self.create(scene, &params),
            ("manage_components", "add") => with_target(scene, &params, |object| {
                let component = params.get("componentType").and_then(Value::as_str).unwrap_or_default();
                json!({"success": true, "message": format!("Added {component} to '{}'.", object.name)})
            }),
            ("manage_asset", "get_info") => {
                let path = params.get("path").and_then(Value::as_str).unwrap_or_default();
                if self.assets.contains(path) {
                    json!({"success": true, "data": {"path": path, "exists": true}})
                } else {
                    failure(&format!("Asset not found at path: {path}"))
                }
            }
            _ => failure(&format!("Unknown or unsupported command: {tool} {action}")),
        }
    }

    fn create(&self, scene: &mut Scene, params: &Value) -> Value {
        let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_owned);
        let prefab_path = text("prefabPath");
        if let Some(path) = &prefab_path {
            if !self.assets.contains(path) {
                return failure(&format!("Asset not found or not a GameObject at path: '{path}'."));
            }
        }
        let primitive = text("primitiveType");
        let name = text("name")
            .or_else(|| {
                prefab_path
                    .as_deref()
                    .and_then(|p| Path::new(p).file_stem())
                    .map(|s| s.to_string_lossy().into_owned())
            })
            .or_else(|| primitive.clone());
        let Some(name) = name else {
            return failure("'name' parameter is required for 'create' action when not instantiating a prefab or creating a primitive.");
        };
        let mut properties = Map::new();
        for spec in params
            .get("componentsToAdd")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_object)
        {
            if let Some(props) = spec.get("properties") {
                let type_name = spec.get("typeName").and_then(Value::as_str).unwrap_or_default();
                properties.insert(type_name.to_owned(), props.clone());
            }
        }
        if let Some(Value::Object(extra)) = params.get("componentProperties") {
            properties.extend(extra.clone());
        }
        // Asset references must point at assets the project has.
        for reference in properties
            .values()
            .flat_map(|p| p.as_object().into_iter().flat_map(|m| m.values()))
        {
            if let Some(path) = reference.as_str().filter(|s| s.starts_with("Assets/")) {
                if !self.assets.contains(path) {
                    return failure(&format!("Asset not found at path: {path}"));
                }
            }
        }
        let instance_id = -(scene.objects.len() as i64 + 1000);
        scene.objects.push(SceneObject { name: name.clone() });
        scene.dirty = true;
        json!({"success": true, "message": format!("GameObject '{name}' created successfully in scene."),
               "data": {"name": name, "instanceID": instance_id}})
    }
}

fn with_target(scene: &mut Scene, params: &Value, f: impl FnOnce(&mut SceneObject) -> Value) -> Value {
    let target = params.get("target").and_then(Value::as_str).unwrap_or_default();
    match scene.objects.iter_mut().find(|o| o.name == target) {
        Some(object) => {
            let answer = f(object);
            scene.dirty = true;
            answer
        }
        None => failure(&format!("Target GameObject '{target}' not found.")),
    }
}

fn failure(message: &str) -> Value {
    json!({"success": false, "error": message, "message": message})
}

fn read_frame(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut header = [0u8; 8];
    stream.read_exact(&mut header).ok()?;
    let len = usize::try_from(u64::from_be_bytes(header)).ok()?;
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload).ok()?;
    Some(payload)
}

fn write_frame(stream: &mut TcpStream, payload: &[u8]) -> std::io::Result<()> {
    let mut frame = Vec::with_capacity(8 + payload.len());
    frame.extend_from_slice(&(payload.len() as u64).to_be_bytes());
    frame.extend_from_slice(payload);
    stream.write_all(&frame)
}

/// The real `mcp-for-unity` command: `$UNITY_ASSETS_MCP_SERVER`, else the
/// virtualenv `.ci/install-mcp-server.sh` creates (`target/venv-mcp`), else
/// PATH. `None` when absent: the tests that need it then skip, saying so.
pub fn mcp_server_command() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("UNITY_ASSETS_MCP_SERVER") {
        return Some(PathBuf::from(path));
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    let venv = workspace.join("target/venv-mcp/bin/mcp-for-unity");
    if venv.is_file() {
        return Some(venv);
    }
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| Path::new(dir).join("mcp-for-unity"))
        .find(|candidate| candidate.is_file())
}

/// The environment that confines the server to a test's own editor: its
/// HOME and status folder inside the test's temp dir, telemetry off.
pub fn server_env(home: &Path, status_dir: &Path) -> std::collections::BTreeMap<String, String> {
    [
        ("HOME", home.to_string_lossy().into_owned()),
        ("UNITY_MCP_STATUS_DIR", status_dir.to_string_lossy().into_owned()),
        ("DISABLE_TELEMETRY", "1".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

fn time_now_rfc3339() -> String {
    let format = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    time::OffsetDateTime::now_utc()
        .format(&format)
        .expect("a UTC timestamp formats")
}
