//! Progress on stderr, only on a terminal: a bar for a fan-out, a spinner
//! for a single `fn`/`llm` stage, each with a label a person reads
//! ("scanning", "tagging 182/2500 batches") and shown only once its work has
//! taken 200 ms (`DELAY`), so sub-second work draws nothing.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::{Progress, Tick};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before its line appears.
const DELAY: Duration = Duration::from_millis(200);

/// What a stage (`pipeline: stage`) is doing, in words, and the unit its
/// fan-out counts; other stages keep their name.
fn describe(label: &str) -> (&str, &str) {
    match label {
        "index: unchanged" => ("checking for changes", ""),
        "index: scan" => ("scanning", ""),
        "index: diff" => ("comparing with the last index", ""),
        "index: plan" => ("planning batches", ""),
        "index: tag" => ("tagging", " batches"),
        "index: finalize" => ("writing index", ""),
        other => (other, ""),
    }
}

/// A fan-out's line after `done` of `total` items: `tagging 182/2500 batches`.
fn fan_out_text(label: &str, done: u64, total: u64) -> String {
    let (what, unit) = describe(label);
    format!("{what} {done}/{total}{unit}")
}

/// Bars and spinners under one [`MultiProgress`], cleared when their stage ends.
pub struct Bars {
    multi: MultiProgress,
    bar: ProgressStyle,
    spinner: ProgressStyle,
}

impl Bars {
    /// Bars when stderr is a terminal and not silenced; `None` otherwise
    /// (piped output stays clean).
    pub fn for_terminal(quiet: bool) -> Option<Arc<dyn Progress>> {
        if quiet || !std::io::stderr().is_terminal() {
            return None;
        }
        let (bar, spinner) = if crate::color::enabled() {
            ("{msg} [{bar:30.cyan/blue}] ({eta})", "{spinner:.cyan} {msg}")
        } else {
            ("{msg} [{bar:30}] ({eta})", "{spinner} {msg}")
        };
        Some(Arc::new(Bars {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
            bar: ProgressStyle::with_template(bar).ok()?.progress_chars("=> "),
            spinner: ProgressStyle::with_template(spinner).ok()?,
        }))
    }
}

impl Progress for Bars {
    fn begin(&self, label: &str, total: usize) -> Box<dyn Tick> {
        let bar = ProgressBar::hidden()
            .with_style(self.bar.clone())
            .with_message(fan_out_text(label, 0, total as u64));
        bar.set_length(total as u64);
        Box::new(Running::after_delay(&self.multi, bar, Some(label.to_owned())))
    }

    fn step(&self, label: &str) -> Option<Box<dyn Tick>> {
        let spinner = ProgressBar::hidden()
            .with_style(self.spinner.clone())
            .with_message(describe(label).0.to_owned());
        Some(Box::new(Running::after_delay(&self.multi, spinner, None)))
    }
}

/// A bar or spinner that joins the terminal after [`DELAY`] unless its
/// stage ended first. `fan_out`: the stage label a bar's text is made from.
struct Running {
    bar: ProgressBar,
    fan_out: Option<String>,
    /// Set when the stage ends; the lock orders "shown" before "cleared".
    ended: Arc<Mutex<bool>>,
}

impl Running {
    fn after_delay(multi: &MultiProgress, bar: ProgressBar, fan_out: Option<String>) -> Self {
        let ended = Arc::new(Mutex::new(false));
        let (multi, shown, flag) = (multi.clone(), bar.clone(), Arc::clone(&ended));
        let spins = fan_out.is_none();
        std::thread::spawn(move || {
            std::thread::sleep(DELAY);
            let ended = flag.lock().unwrap_or_else(|e| e.into_inner());
            if !*ended {
                let shown = multi.add(shown);
                if spins {
                    shown.enable_steady_tick(Duration::from_millis(100));
                }
            }
        });
        Self { bar, fan_out, ended }
    }
}

impl Tick for Running {
    fn advance(&self) {
        self.bar.inc(1);
        if let Some(label) = &self.fan_out {
            let total = self.bar.length().unwrap_or_default();
            self.bar.set_message(fan_out_text(label, self.bar.position(), total));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        *ended = true;
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_steps_read_as_words_and_others_keep_their_name() {
        assert_eq!(describe("index: scan").0, "scanning");
        assert_eq!(describe("index: diff").0, "comparing with the last index");
        assert_eq!(describe("index: finalize").0, "writing index");
        assert_eq!(fan_out_text("index: tag", 182, 2500), "tagging 182/2500 batches");
        assert_eq!(fan_out_text("search: retrieve", 1, 3), "search: retrieve 1/3");
    }
}
