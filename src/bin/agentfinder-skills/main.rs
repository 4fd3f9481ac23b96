//! `agentfinder-skills`: each command is handed to one function that reads
//! as the story of that command; failures map to documented exit codes.

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

mod args;
mod artifacts;
mod build;
mod lint;
mod serving;
mod signals;

use args::{Cli, Command, Common};

use agentfinder_skills::config::Config;
use agentfinder_skills::logging::{self, Reporter};
use agentfinder_skills_reader::store::Store;

/// mimalloc reuses the embedding model's large tensor buffers; with glibc's
/// allocator each was mapped afresh (9 million page faults, 14 s of system
/// time to embed 238 documents).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Exit codes, one per failure class (see docs/building.md, "Exit codes").
mod exit {
    pub const FAILURE: u8 = 1;
    pub const SOURCE: u8 = 3;
    pub const VALIDATION: u8 = 4;
    pub const STORAGE: u8 = 5;
    pub const PROMOTION_REFUSED: u8 = 6;
    pub const VERIFY_FAILED: u8 = 7;
    pub const LOAD: u8 = 8;
    pub const NO_SOURCE_BUILT: u8 = 9;
}

fn main() -> ExitCode {
    // Before any thread starts: it sets candle's thread count.
    agentfinder_skills::embed::one_thread_per_pass();
    let cli = Cli::parse();
    logging::set_global_format(cli.log_format);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            logging::global().error(
                format!("cannot start the async runtime: {e}"),
                exit::FAILURE,
            );
            return ExitCode::from(exit::FAILURE);
        }
    };
    let config = cli.config.as_deref();
    let result = runtime.block_on(async {
        match cli.command {
            Command::Build(args) => build::run_build(args, config).await,
            Command::Backfill(args) => build::run_backfill(args, config).await,
            Command::Verify(args) => artifacts::run_verify(args, config).await,
            Command::Promote(args) => artifacts::run_promote(args, config).await,
            Command::Materialize(args) => artifacts::run_materialize(args, config).await,
            Command::Lint(args) => lint::run_lint(&args, config),
            Command::Serving(command) => run_serving(command, config).await,
        }
    });
    // A source that ran past its timeout may still hold a thread in a
    // clone that never returns; the run is over, so do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            let message = format!("{:#}", failure.error);
            if !message.is_empty() {
                logging::global().error(message, failure.code);
            }
            ExitCode::from(failure.code)
        }
    }
}

/// An error and the exit code of its class.
struct Failure {
    error: anyhow::Error,
    code: u8,
}

impl Failure {
    fn new(code: u8, error: impl Into<anyhow::Error>) -> Self {
        Self {
            error: error.into(),
            code,
        }
    }
}

impl Failure {
    /// A failure whose command already said why (health's exit codes).
    fn silent(code: u8) -> Self {
        Self {
            error: anyhow::anyhow!(""),
            code,
        }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Self {
        Self::new(exit::FAILURE, error)
    }
}

/// `--config`, else `./pipeline.toml` if present, else the defaults; a
/// file that cannot be used is an error (exit 1) naming the key and line.
fn load_config(path: Option<&std::path::Path>) -> Result<Config, Failure> {
    let config = match path {
        Some(path) => Config::load(path),
        None if std::path::Path::new("pipeline.toml").exists() => {
            Config::load("pipeline.toml".as_ref())
        }
        None => Ok(Config::default()),
    };
    Ok(config.context("configuration")?)
}

/// Whether a command writes to the store or only reads it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Write,
    Read,
}

/// The local store folder `common` and `config_path` name, when it does not
/// exist yet: a command that writes and fails before writing anything
/// removes it again ([`remove_if_empty`]), so a failed first build leaves
/// no empty store behind.
fn new_local_store(
    common: &Common,
    config_path: Option<&std::path::Path>,
) -> Option<std::path::PathBuf> {
    let spec = match &common.store {
        Some(spec) => spec.clone(),
        None => load_config(config_path).ok()?.output.store,
    };
    let path = match spec.split_once("://") {
        None => spec.as_str(),
        Some(("file", rest)) => rest,
        Some(_) => return None,
    };
    let path = std::path::PathBuf::from(path);
    (!path.exists()).then_some(path)
}

/// Removes `folder` if it holds nothing but empty folders (never a file).
fn remove_if_empty(folder: &std::path::Path) {
    if let Ok(entries) = std::fs::read_dir(folder) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_if_empty(&entry.path());
            }
        }
    }
    let _ = std::fs::remove_dir(folder);
}

/// Loads the configuration and opens the store named by flags or config
/// (for reading, a local folder that does not exist is "empty", not created).
fn setup(
    common: &Common,
    config: Option<&std::path::Path>,
    access: Access,
) -> Result<(Config, Store, Reporter), Failure> {
    let config = load_config(config)?;
    let store_spec = common
        .store
        .clone()
        .unwrap_or_else(|| config.output.store.clone());
    let store = match access {
        Access::Write => Store::open_with(&store_spec, &config.store),
        Access::Read => Store::open_existing_with(&store_spec, &config.store),
    }
    .map_err(|e| Failure::new(exit::STORAGE, e))?;
    let reporter = Reporter {
        quiet: common.quiet,
        verbose: common.verbose,
        format: logging::global().format,
        source: None,
    };
    Ok((config, store, reporter))
}

/// A serving command (`search`, `serve`, `mcp`, ...), with the embedded
/// engine and the store and index the configuration names.
async fn run_serving(
    command: agentfinder_skills_serve::ServingCommand,
    config_path: Option<&std::path::Path>,
) -> Result<(), Failure> {
    let config = load_config(config_path)?;
    let defaults = serving::defaults(&config);
    match agentfinder_skills_serve::run(command, &defaults).await {
        Ok(0) => Ok(()),
        Ok(code) => Err(Failure::silent(code)),
        Err(failure) => Err(Failure::new(failure.code, anyhow::anyhow!(failure.message))),
    }
}
