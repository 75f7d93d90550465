//! Progress bars for long fan-outs, on stderr, only on a terminal.

use std::io::IsTerminal;
use std::sync::Arc;

use engine::{Progress, Tick};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Bars under one [`MultiProgress`], cleared when their fan-out ends.
pub struct Bars {
    multi: MultiProgress,
    style: ProgressStyle,
}

impl Bars {
    /// Bars when stderr is a terminal and not silenced; `None` otherwise
    /// (piped output stays clean).
    pub fn for_terminal(quiet: bool) -> Option<Arc<dyn Progress>> {
        if quiet || !std::io::stderr().is_terminal() {
            return None;
        }
        let template = if !crate::color::enabled() {
            "{msg} [{bar:30}] {pos}/{len} ({eta})"
        } else {
            "{msg} [{bar:30.cyan/blue}] {pos}/{len} ({eta})"
        };
        let style = ProgressStyle::with_template(template).ok()?.progress_chars("=> ");
        Some(Arc::new(Bars {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
            style,
        }))
    }
}

impl Progress for Bars {
    fn begin(&self, label: &str, total: usize) -> Box<dyn Tick> {
        let bar = self.multi.add(
            ProgressBar::new(total as u64)
                .with_style(self.style.clone())
                .with_message(label.to_owned()),
        );
        Box::new(Running(bar))
    }
}

struct Running(ProgressBar);

impl Tick for Running {
    fn advance(&self) {
        self.0.inc(1);
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
