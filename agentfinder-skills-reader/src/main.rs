//! `agentfinder-skills-reader`: the thin binary a Space runs at start-up
//! and on refresh (`sync`, `load`, `health`). No Markdown, no git, no
//! model, no server: searching and serving are the main binary's
//! (`agentfinder-skills search`, `serve`, `mcp`).

use std::process::ExitCode;

use clap::Parser;

use agentfinder_skills_reader::cli::{run, Defaults, SyncCommand};

#[derive(Parser)]
#[command(
    name = "agentfinder-skills-reader",
    version,
    about = "Keeps a Meilisearch index in sync with agent-skills artifacts."
)]
struct Cli {
    /// Artifact store used when a command has no --store.
    #[arg(
        long,
        env = "AGENTFINDER_STORE",
        global = true,
        default_value = "./artifacts"
    )]
    default_store: String,
    #[command(subcommand)]
    command: SyncCommand,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let defaults = Defaults {
        store: cli.default_store,
        ..Defaults::default()
    };
    match run(cli.command, &defaults).await {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            eprintln!("error: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}
