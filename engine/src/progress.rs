//! Progress of long fan-outs (`for_each`, `map_reduce`), for whoever shows
//! it. The engine only counts; the CLI draws bars on a terminal.

/// Something that can show progress (a terminal, a log, nothing).
pub trait Progress: Send + Sync {
    /// A fan-out of `total` items is starting; `label` names the stage.
    fn begin(&self, label: &str, total: usize) -> Box<dyn Tick>;
}

/// One running fan-out; dropping it ends it.
pub trait Tick: Send + Sync {
    /// One more item is done.
    fn advance(&self);
}
