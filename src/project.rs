//! A Unity project as the CLI sees it: its folder, its config, the
//! resources (embedded, overridden from `.claude/unity-assets/`), and the
//! registry of native functions every pipeline can call.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use engine::diagnostic::{Diagnostic, Diagnostics};
use engine::llm::{Provider, ProviderKind};
use engine::resources::Resources;
use engine::Runtime;
use engine::{Compiler, ParamLayers, Pipeline};
use engine::{Output, Registry};
use include_dir::{include_dir, Dir};

use crate::config::{Config, OVERRIDES};

static PIPELINES: Dir = include_dir!("$CARGO_MANIFEST_DIR/pipelines");
static PROMPTS: Dir = include_dir!("$CARGO_MANIFEST_DIR/prompts");
static SCHEMAS: Dir = include_dir!("$CARGO_MANIFEST_DIR/schemas");
static DATA: Dir = include_dir!("$CARGO_MANIFEST_DIR/data");

/// [`Project::open`] or `Project::open_for_doctor`, chosen by the caller.
pub type Opener = fn(&Path, Option<ProviderKind>, Option<&str>) -> Result<Project, Diagnostics>;

/// A project opened: its folder, settings, resources and natives, ready to run a pipeline.
pub struct Project {
    /// The project's folder (the one holding `Assets/`).
    pub root: PathBuf,
    pub(crate) config: Config,
    /// The embedded pipelines, prompts, schemas and data, with the project's overrides on top.
    pub resources: Resources,
    /// Every native function of the product, for the engine to call.
    pub registry: Registry,
    /// `-q`: only errors on stderr — no progress bars, notices or readable
    /// lines there (with `--json` the lines would go to stderr).
    pub quiet: bool,
}

impl Project {
    /// Open a project folder: load its config and register every native function.
    pub fn open(root: &Path, provider: Option<ProviderKind>, model: Option<&str>) -> Result<Self, Diagnostics> {
        if !root.is_dir() {
            let message = format!("{} is not a folder", root.display());
            let d = Diagnostic::about(root.display().to_string(), message)
                .help("pass the Unity project's folder (the one holding Assets/) with --project DIR");
            return Err(Diagnostics(vec![d]));
        }
        Self::open_with(root, provider, model, Config::load)
    }

    /// Open a project for `doctor`, which reports a missing folder and a
    /// broken config as checks: both open with the default config instead
    /// of failing. What makes the project unsafe to read (a linked index
    /// file, an unusable override) still fails.
    pub(crate) fn open_for_doctor(
        root: &Path,
        provider: Option<ProviderKind>,
        model: Option<&str>,
    ) -> Result<Self, Diagnostics> {
        Self::open_with(root, provider, model, |root, resources| {
            Ok(Config::load(root, resources).unwrap_or_else(|_| Config::defaults()))
        })
    }

    fn open_with(
        root: &Path,
        provider: Option<ProviderKind>,
        model: Option<&str>,
        load: impl FnOnce(&Path, &Resources) -> Result<Config, Diagnostics>,
    ) -> Result<Self, Diagnostics> {
        let overrides = engine::io::confine(root, OVERRIDES).map_err(|e| {
            Diagnostics(vec![Diagnostic::about(OVERRIDES, e.to_string())
                .help("the override folder must be a real folder of the project")])
        })?;
        // The index folder is written by index, search, pick and build: a
        // symlinked `.claude/` must not carry those writes elsewhere.
        engine::io::confine_for_write(root, crate::index::INDEX_DIR).map_err(|e| {
            Diagnostics(vec![Diagnostic::about(crate::index::INDEX_DIR, e.to_string()).help(
                "replace the link with a real folder (or delete it; `unity-assets index` recreates it)",
            )])
        })?;
        check_index_files(root)?;
        let resources = resources(Some(overrides));
        check_overrides(&resources)?;
        let mut config = load(root, &resources)?;
        if let Some(p) = provider {
            config.llm.provider = p;
        }
        if provider.is_some() {
            // Pipelines read the effective provider as `params.llm.provider`.
            let name = serde_json::Value::from(config.llm.provider.name());
            let layer = config.layer.get_or_insert_with(Default::default);
            if !layer.values.is_object() {
                layer.values = serde_json::json!({});
            }
            let llm = layer
                .values
                .as_object_mut()
                .expect("object")
                .entry("llm")
                .or_insert_with(|| serde_json::json!({}));
            if let Some(llm) = llm.as_object_mut() {
                llm.insert("provider".into(), name);
            }
        }
        if let Some(m) = model {
            config.llm.models.fast = Some(m.to_owned());
            config.llm.models.default = Some(m.to_owned());
        }
        let registry = registry(&config, &resources)?;
        Ok(Self {
            root: root.to_path_buf(),
            config,
            resources,
            registry,
            quiet: false,
        })
    }

    /// A compiler for this project with `--set` values on top of the config.
    pub fn compile(&self, name: &str, sets: &[String]) -> Result<Arc<Pipeline>, Diagnostics> {
        let layers = self.layers(sets)?;
        self.compiler(&layers).compile(name)
    }

    /// A compiler over this project's files and natives, reading pipeline
    /// files within its limits.
    pub(crate) fn compiler<'a>(&'a self, layers: &'a ParamLayers) -> Compiler<'a> {
        Compiler::new(&self.resources, &self.registry, layers, self.is_offline())
            .with_limits(self.config.limits)
            .for_product(crate::PRODUCT)
    }

    /// Every pipeline the project can run (embedded or overridden), sub-pipelines included.
    pub(crate) fn pipeline_names(&self) -> Vec<String> {
        let layers = ParamLayers {
            config: self.config.layer.clone(),
            sets: vec![],
        };
        self.compiler(&layers).pipeline_names()
    }

    /// Compile every pipeline (or the named ones) and collect all problems.
    pub fn validate(&self, names: &[String]) -> (usize, Diagnostics) {
        let layers = ParamLayers {
            config: self.config.layer.clone(),
            sets: vec![],
        };
        let mut compiler = self.compiler(&layers);
        let names = if names.is_empty() {
            compiler.pipeline_names()
        } else {
            names.to_vec()
        };
        let mut all = Diagnostics::default();
        for n in &names {
            if let Err(e) = compiler.compile(n) {
                all.extend(e);
            }
        }
        all.sort();
        (names.len(), all)
    }

    pub(crate) fn layers(&self, sets: &[String]) -> Result<ParamLayers, Diagnostics> {
        let mut parsed = vec![];
        let mut errors = Diagnostics::default();
        for s in sets {
            match ParamLayers::parse_set(s) {
                Ok(kv) => parsed.push(kv),
                Err(e) => errors.push(Diagnostic::about(format!("--set {s}"), e)),
            }
        }
        if errors.is_empty() {
            crate::config::check_sets(&parsed, &self.resources)?;
            Ok(ParamLayers {
                config: self.config.layer.clone(),
                sets: parsed,
            })
        } else {
            Err(errors)
        }
    }

    pub(crate) fn is_offline(&self) -> bool {
        self.config.llm.provider == ProviderKind::Builtin
    }

    /// The configured model provider (`None` for builtin).
    pub fn provider(&self) -> Result<Option<Arc<dyn Provider>>, engine::llm::LlmError> {
        engine::llm::connect(
            &self.config.llm,
            self.config.parallel_subagents,
            &self.config.limits,
            &crate::PRODUCT,
        )
    }

    /// What a run of this project's pipelines uses: its folder, resources
    /// and provider, printing to `output`.
    pub fn runtime(&self, output: Output) -> Result<Runtime, engine::llm::LlmError> {
        // A person at the terminal answers `ask`; piped, the default is taken.
        let person = std::io::stdin()
            .is_terminal()
            .then(|| Arc::new(engine::Terminal::new(output.clone())) as Arc<dyn engine::Asker>);
        Ok(Runtime::new(self.root.clone(), output, self.resources.clone())
            .with_provider(self.provider()?)
            .with_limits(self.config.limits)
            .for_product(crate::PRODUCT)
            .protecting(crate::trust::PROTECTED)
            .with_asker(person)
            .with_progress(crate::progress::Bars::for_terminal(self.quiet))
            .releasing_outputs(true))
    }
}

/// The Unity project `folder` is in: the nearest of it and the folders above
/// it that holds `Assets/`, passing over folders inside an `Assets/` tree
/// (a project may have a subfolder named Assets of its own). The one rule
/// the command line (without `--project`) and the MCP server find a project by.
pub fn enclosing(folder: &Path) -> Option<PathBuf> {
    folder
        .ancestors()
        .filter(|dir| !dir.components().any(|c| c.as_os_str() == "Assets"))
        .find(|dir| dir.join("Assets").is_dir())
        .map(Path::to_path_buf)
}

/// The embedded set with an optional override folder on top.
pub fn resources(overrides: Option<PathBuf>) -> Resources {
    Resources::new(
        &[
            ("pipelines", &PIPELINES),
            ("prompts", &PROMPTS),
            ("schemas", &SCHEMAS),
            ("data", &DATA),
        ],
        overrides,
    )
    .for_product(crate::PRODUCT)
}

/// The index folder holds only regular files: a committed link (to
/// `/dev/zero`, to a file outside) or a FIFO there would be read by search,
/// pick and doctor, or written through by index.
fn check_index_files(root: &Path) -> Result<(), Diagnostics> {
    let Ok(entries) = std::fs::read_dir(root.join(crate::index::INDEX_DIR)) else {
        return Ok(());
    };
    let mut errors = Diagnostics::default();
    for entry in entries.flatten() {
        let path = entry.path();
        let bad = match entry.file_type() {
            Ok(t) if t.is_symlink() => Some("a symbolic link"),
            Ok(t) if !t.is_file() && !t.is_dir() => Some("not a regular file"),
            _ => None,
        };
        if let Some(why) = bad {
            errors.push(
                Diagnostic::about(path.display().to_string(), format!("index file is {why}"))
                    .help("delete it; `unity-assets index` and `search` recreate the index files"),
            );
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Every override on disk must be usable: a broken one is an error naming
/// its file (exit 2), for every command, `validate` included, never a silent
/// fall back to the embedded copy (above all `data/scope-policy.yml`).
fn check_overrides(resources: &Resources) -> Result<(), Diagnostics> {
    let mut errors = Diagnostics::default();
    for folder in ["pipelines", "prompts", "schemas", "data"] {
        for rel in resources.list(folder) {
            if let Err(e) = resources.get(&rel) {
                errors.push(
                    Diagnostic::about(e.origin.clone(), format!("cannot use this override: {}", e.why))
                        .help("fix or delete it; the embedded copy is used only when no override exists"),
                );
            }
        }
    }
    if let Some(unlocked) = index_without_lock(resources) {
        errors.push(unlocked);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// An overridden index pipeline must hold the index lock as the embedded
/// one does (its first stage, `fn: index.lock`): without it two runs could
/// write the index at once. An override copied before that stage existed
/// is named with the fix rather than run.
fn index_without_lock(resources: &Resources) -> Option<Diagnostic> {
    const PIPELINE: &str = "pipelines/index.yaml";
    let dir = resources.overrides()?;
    if !dir.join(PIPELINE).is_file() {
        return None;
    }
    let own = resources.get(PIPELINE).ok()??;
    let doc: serde_yaml::Value = serde_yaml::from_str(&own.text).ok()?;
    let locks = doc
        .get("stages")
        .and_then(serde_yaml::Value::as_mapping)
        .is_some_and(|stages| {
            stages
                .values()
                .any(|stage| stage.get("fn").and_then(|f| f.as_str()) == Some("index.lock"))
        });
    (!locks).then(|| {
        Diagnostic::about(own.origin, "this index pipeline does not take the index lock (no stage with `fn: index.lock`)".to_owned())
            .help("add `lock: {fn: index.lock}` as its first stage and make the others need it, as `unity-assets eject` writes it; or delete the override")
    })
}

/// Every native function and builtin task of the product.
fn registry(config: &Config, resources: &Resources) -> Result<Registry, Diagnostics> {
    let mut registry = Registry::new();
    crate::index::register(
        &mut registry,
        index_data(),
        crate::search::term_index::TermIndex::lines_not_rows,
    );
    crate::search::register(&mut registry);
    crate::semantic::register(&mut registry, config.embeddings.clone());
    crate::websearch::register(&mut registry);
    crate::build::register(&mut registry);
    crate::references::register(&mut registry);
    crate::doctor::register(
        &mut registry,
        config.llm.clone(),
        crate::doctor::model::meaning_off(config),
    );
    registry.guard("unity", Arc::new(unity_guard(resources)?));
    Ok(registry)
}

/// The scope guard `mcp` stages name as `guard: unity`: the project's
/// `data/scope-policy.yml` (or the embedded one) plus the forbidden calls
/// that no policy can allow.
fn unity_guard(resources: &Resources) -> Result<crate::build::scope::UnityScopeGuard, Diagnostics> {
    const POLICY: &str = "data/scope-policy.yml";
    let res = resources
        .get(POLICY)
        .map_err(|e| Diagnostics(vec![Diagnostic::about(e.origin.clone(), e.to_string())]))?
        .ok_or_else(|| Diagnostics(vec![Diagnostic::about(POLICY, "the scope policy is missing")]))?;
    let policy = serde_yaml::from_str(&res.text).map_err(|e| {
        let at = e.location().map(|l| (l.line(), l.column()));
        Diagnostics(vec![Diagnostic::new(
            res.origin.clone(),
            at,
            format!("invalid scope policy: {e}"),
        )])
    })?;
    Ok(crate::build::scope::UnityScopeGuard::new(policy))
}

/// The indexer's data tables, read through the run's resources so a
/// project's edited copies win.
fn index_data() -> crate::index::DataSource {
    Arc::new(|ctx: &engine::CallContext| {
        let text = |rel: &str| {
            ctx.resources
                .get(rel)?
                .map(|r| r.text.into_owned())
                .ok_or_else(|| anyhow::anyhow!("{rel} is missing from the resources"))
        };
        let data = crate::index::IndexData::from_yaml(
            &text("data/type-taxonomy.yml")?,
            &text("data/filename-conventions.yml")?,
            &text("data/asset-types.yml")?,
        )?;
        Ok(Arc::new(data))
    })
}
