//! What a person sees while a component compiles, the one long wait of a
//! load (10 to 40 s for a Python or JavaScript tool): a spinner on stderr
//! with the elapsed time, saying the compile happens once and where the
//! result is cached. Drawn only when stderr is a terminal (indicatif hides
//! it otherwise) and not with `--quiet`; it clears itself when done.

use harmonia_host::plugin::{CompileProgress, PluginOrigin};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A spinner per compile, on stderr.
#[derive(Debug, Default)]
pub struct CompileSpinner {
    bar: Mutex<Option<ProgressBar>>,
}

impl CompileSpinner {
    /// The spinner to hand a host, or none with `--quiet`.
    pub fn unless_quiet(quiet: bool) -> Option<Arc<dyn CompileProgress>> {
        (!quiet).then(|| Arc::new(Self::default()) as Arc<dyn CompileProgress>)
    }
}

/// The line shown while `origin` compiles.
fn message(origin: &PluginOrigin, bytes: usize, cache_dir: Option<&Path>) -> String {
    let kept = match cache_dir {
        Some(dir) => format!("once; later loads map it from the cache in {}", dir.display()),
        None => "(the cache is off: every start compiles it again)".to_owned(),
    };
    format!("compiling {origin} ({:.1} MB of wasm) {kept}", bytes as f64 / 1e6)
}

impl CompileProgress for CompileSpinner {
    fn compiling(&self, origin: &PluginOrigin, bytes: usize, cache_dir: Option<&Path>) {
        let bar = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} [{elapsed}]") {
            bar.set_style(style);
        }
        bar.set_message(message(origin, bytes, cache_dir));
        bar.enable_steady_tick(Duration::from_millis(120));
        if let Ok(mut slot) = self.bar.lock() {
            *slot = Some(bar);
        }
    }

    fn compiled(&self, _origin: &PluginOrigin) {
        if let Some(bar) = self.bar.lock().ok().and_then(|mut slot| slot.take()) {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_says_the_compile_is_once_and_where_it_is_kept() {
        let origin = PluginOrigin::File("tool.wasm".into());
        let cached = message(&origin, 18_900_000, Some(Path::new("/home/me/.cache/harmonia")));
        assert_eq!(
            cached,
            "compiling tool.wasm (18.9 MB of wasm) once; later loads map it from the cache in /home/me/.cache/harmonia"
        );
        assert!(message(&origin, 1, None).contains("the cache is off"));
    }
}
