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
        "index: embed" => ("embedding", " texts"),
        other => (other, ""),
    }
}

/// A fan-out's line after `done` of `total` items in `elapsed`:
/// `embedding 12000/95000 texts, 2850/s`, or for slow items (a model's
/// batches) the seconds each took, `tagging 3/40 batches, 12 s each`.
fn fan_out_text(label: &str, done: u64, total: u64, elapsed: Duration) -> String {
    let (what, unit) = describe(label);
    let per_second = done as f64 / elapsed.as_secs_f64();
    let rate = match done > 0 && per_second.is_finite() {
        false => String::new(),
        true if per_second >= 10.0 => format!(", {per_second:.0}/s"),
        true if per_second >= 1.0 => format!(", {per_second:.1}/s"),
        true => format!(", {:.0} s each", 1.0 / per_second),
    };
    format!("{what} {done}/{total}{unit}{rate}")
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
            .with_message(fan_out_text(label, 0, total as u64, Duration::ZERO));
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
        self.advance_by(1);
    }

    fn advance_by(&self, n: usize) {
        self.bar.inc(n as u64);
        if let Some(label) = &self.fan_out {
            let total = self.bar.length().unwrap_or_default();
            let text = fan_out_text(label, self.bar.position(), total, self.bar.elapsed());
            self.bar.set_message(text);
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
        let minute = Duration::from_secs(60);
        assert_eq!(
            fan_out_text("index: tag", 0, 2500, Duration::ZERO),
            "tagging 0/2500 batches"
        );
        assert_eq!(
            fan_out_text("index: tag", 182, 2500, minute),
            "tagging 182/2500 batches, 3.0/s"
        );
        assert_eq!(
            fan_out_text("index: embed", 12_000, 95_000, Duration::from_secs(4)),
            "embedding 12000/95000 texts, 3000/s"
        );
        assert_eq!(
            fan_out_text("search: retrieve", 1, 3, minute),
            "search: retrieve 1/3, 60 s each"
        );
    }
}
