//! Progress of long fan-outs (`for_each`, `map_reduce`) and of single
//! `fn`/`llm` stages, for whoever shows it. The engine only reports; the CLI
//! draws on a terminal.

/// Something that can show progress (a terminal, a log, nothing).
pub trait Progress: Send + Sync {
    /// A fan-out of `total` items is starting; `label` names the stage
    /// (`pipeline: stage`).
    fn begin(&self, label: &str, total: usize) -> Box<dyn Tick>;

    /// A stage without a fan-out is running; dropping the guard ends it.
    /// Its `advance` is never called. Default: not shown.
    fn step(&self, label: &str) -> Option<Box<dyn Tick>> {
        let _ = label;
        None
    }
}

/// One running fan-out; dropping it ends it.
pub trait Tick: Send + Sync {
    /// One more item is done.
    fn advance(&self);

    /// `n` more items are done.
    fn advance_by(&self, n: usize) {
        (0..n).for_each(|_| self.advance());
    }
}
