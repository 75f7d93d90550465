//! What a run may use, shared by the executor and every stage: the model,
//! the output, the folder, the MCP connections, the limits.

use std::path::PathBuf;
use std::sync::Arc;

use crate::llm::Provider;
use crate::output::Output;
use crate::resources::Resources;

/// What a run may use: the model provider, where lines go, the folder it
/// works in, and whether a person can be asked.
#[derive(Clone)]
pub struct Runtime {
    /// `None` runs every `llm` stage through its `builtin:` task.
    pub(crate) provider: Option<Arc<dyn Provider>>,
    /// Where user-facing lines go.
    pub(crate) output: Output,
    /// The folder the run works in; paths a pipeline names are confined to it.
    pub(crate) workdir: PathBuf,
    /// Who answers `ask` when it is not a terminal (none: the default is taken).
    pub(crate) asker: Option<Arc<dyn crate::asker::Asker>>,
    /// MCP connections, opened on first use and shared by the run's stages.
    pub(crate) mcp: Arc<crate::mcp::Connections>,
    /// Data files native functions read (`data/...`), with overrides.
    pub(crate) resources: Resources,
    /// Where fan-out progress goes (none: not shown).
    pub(crate) progress: Option<Arc<dyn crate::progress::Progress>>,
    /// Size limits on files and HTTP answers the run reads.
    pub(crate) limits: crate::io::Limits,
    /// Answers received in this run, so no request is sent twice.
    pub(crate) replies: Arc<crate::llm::ReplyCache>,
    /// Set to stop the run (Ctrl+C, a cancelled MCP call).
    pub(crate) cancel: crate::cancel::Cancel,
    /// Drop each stage's output once every stage reading it has started.
    pub(crate) release_outputs: bool,
    /// Parts of the folder no stage writes, whatever a pipeline says.
    pub(crate) protected: Arc<[String]>,
    /// Who the run is for: named in user agents, MCP client names and
    /// where a limit is raised.
    pub(crate) product: crate::Product,
}

impl Runtime {
    /// A runtime with no provider, asker or progress, default limits and
    /// no product ([`Product::NEUTRAL`](crate::Product::NEUTRAL)).
    pub fn new(workdir: PathBuf, output: Output, resources: Resources) -> Self {
        Self {
            provider: None,
            output,
            workdir,
            asker: None,
            mcp: Arc::default(),
            resources,
            progress: None,
            limits: crate::io::Limits::default(),
            replies: Arc::default(),
            cancel: crate::cancel::Cancel::new(),
            release_outputs: false,
            protected: Arc::new([]),
            product: crate::Product::NEUTRAL,
        }
    }

    /// The flag that stops this run: [`Cancel::cancel`](crate::Cancel::cancel)
    /// ends waiting stages and template loops, and no stage starts after it.
    pub fn cancel(&self) -> &crate::cancel::Cancel {
        &self.cancel
    }

    /// The model `llm` stages call (`None`: their `builtin:` tasks).
    pub fn with_provider(mut self, provider: Option<Arc<dyn Provider>>) -> Self {
        self.provider = provider;
        self
    }

    /// The size limits on what the run reads.
    pub fn with_limits(mut self, limits: crate::io::Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Who answers `ask` when no terminal can.
    pub fn with_asker(mut self, asker: Option<Arc<dyn crate::asker::Asker>>) -> Self {
        self.asker = asker;
        self
    }

    /// Whether anyone answers `ask` (a terminal, a client's form); without
    /// an asker, `ask` takes its default.
    pub fn can_ask(&self) -> bool {
        self.asker.is_some()
    }

    /// Where fan-out and step progress goes.
    pub fn with_progress(mut self, progress: Option<Arc<dyn crate::progress::Progress>>) -> Self {
        self.progress = progress;
        self
    }

    /// Drop each stage's output as soon as every stage that reads it has
    /// started (the pipeline's `output` keeps what it reads): a long run
    /// then holds only what is still to be read — an index of 10^6 assets
    /// no longer carries its scan and its tag batches through finalize.
    /// [`RunOutcome::outputs`](crate::RunOutcome) holds only the outputs left.
    pub fn releasing_outputs(mut self, release: bool) -> Self {
        self.release_outputs = release;
        self
    }

    /// Files and folders of the run's folder that no `write`, `append` or
    /// audit stage may write, relative to it: the application names what a
    /// written file there would make another program run or trust.
    pub fn protecting(mut self, paths: &[&str]) -> Self {
        self.protected = paths.iter().map(|p| (*p).to_owned()).collect();
        self
    }

    /// The product the run is for: its messages name where a limit is
    /// raised, and its HTTP and MCP requests name the product.
    pub fn for_product(mut self, product: crate::Product) -> Self {
        self.product = product;
        self
    }

    /// The product the run is for.
    pub fn product(&self) -> &crate::Product {
        &self.product
    }

    /// Where user-facing lines go.
    pub fn output(&self) -> &Output {
        &self.output
    }
}
