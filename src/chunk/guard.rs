//! Running markdown-rs so that a panic costs one file its structure, and
//! nothing else: not the build, and not a printed backtrace.
//!
//! Real corpora make markdown-rs 1.0.0 panic (an index out of bounds in
//! `util/skip.rs` on some lists, measured on AgentWorkers/skills). The
//! default panic hook printed each one with a backtrace; with
//! `RUST_BACKTRACE=1`, as on many machines, symbolising the first one loaded
//! the binary's debug information: about 150 MB of a 400 MB peak for a
//! 1,000-skill build. Panics caught here are recorded, not printed.

use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, UnwindSafe};
use std::sync::Once;

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
    static MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Runs `f`; a panic inside it is caught and returned as its message (with
/// where it happened), without the panic hook printing anything. Panics
/// anywhere else still go to the hook that was installed before.
pub(super) fn catch_quietly<T>(f: impl FnOnce() -> T + UnwindSafe) -> Result<T, String> {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(Cell::get) {
                let payload = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "panic".to_string());
                let place = info
                    .location()
                    .map(|l| format!(" at {}:{}", short_path(l.file()), l.line()))
                    .unwrap_or_default();
                MESSAGE.with(|m| *m.borrow_mut() = Some(format!("{payload}{place}")));
            } else {
                previous(info);
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    let result = catch_unwind(f);
    QUIET.with(|q| q.set(false));
    result.map_err(|_| {
        MESSAGE
            .with(|m| m.borrow_mut().take())
            .unwrap_or_else(|| "panic".to_string())
    })
}

/// `markdown-1.0.0/src/util/skip.rs` of a path into the cargo registry.
fn short_path(file: &str) -> &str {
    file.find("markdown-").map_or(file, |i| &file[i..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_panic_is_returned_with_its_place() {
        let caught = catch_quietly(|| {
            let v: Vec<u8> = Vec::new();
            #[allow(clippy::unnecessary_operation)]
            v[usize::from(v.is_empty())]
        });
        let message = caught.unwrap_err();
        assert!(message.contains("index out of bounds"), "{message}");
        assert!(message.contains("guard.rs"), "{message}");
        assert_eq!(catch_quietly(|| 7), Ok(7));
    }
}
