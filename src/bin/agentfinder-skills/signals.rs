//! Ctrl-C (SIGINT) and SIGTERM during `build` and `backfill`: the first
//! asks the build to stop where it can stop cleanly, and says so on
//! stderr; a second one ends the process at once (a staging folder it
//! leaves is removed by the next build).

use agentfinder_skills::build::interrupt::{self, Signal};
use agentfinder_skills::logging;

/// Starts watching for the two signals (in the runtime this is called in).
pub fn watch() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        logging::global().warn(
            "build",
            "cannot watch for Ctrl-C and SIGTERM: they will stop the build without cleaning up",
        );
        return;
    };
    tokio::spawn(async move {
        let mut received = 0;
        loop {
            let signal = tokio::select! {
                Some(()) = int.recv() => Signal::Interrupt,
                Some(()) = term.recv() => Signal::Terminate,
                else => return,
            };
            received += 1;
            if received == 1 {
                logging::global().warn(
                    "build",
                    format!(
                        "{} received: stopping at the next batch; latest/ stays as it is, the vectors embedded so far are kept (a promotion under way is finished first); send it again to stop at once",
                        signal.name()
                    ),
                );
                interrupt::request(signal);
            } else {
                let code = signal.exit_code();
                logging::global().error(
                    format!(
                        "{} received again: stopping at once, as a kill would (the next build removes what this one staged)",
                        signal.name()
                    ),
                    code,
                );
                std::process::exit(i32::from(code));
            }
        }
    });
}
