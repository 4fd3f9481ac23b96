//! `agentfinder-skills-reader`: the thin binary a Space runs at start-up and
//! on refresh (`sync`, `search`, `health`), or as its search service
//! (`serve`, over Meilisearch). No Markdown, no git, no model.

use std::process::ExitCode;

use clap::Parser;

use agentfinder_skills_reader::cli::{run, ReaderCommand, ServingDefaults};

#[derive(Parser)]
#[command(
    name = "agentfinder-skills-reader",
    version,
    about = "Keeps a Meilisearch index in sync with agent-skills artifacts, and searches it."
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
    command: ReaderCommand,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let defaults = ServingDefaults {
        store: cli.default_store,
        store_options: Default::default(),
        // No engine in this binary: it serves through Meilisearch only, so
        // the Space that ships it carries neither tantivy nor a model.
        local: None,
        index: None,
    };
    match run(cli.command, &defaults).await {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            eprintln!("error: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}
