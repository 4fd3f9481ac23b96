//! agentfinder-skills: turns repositories of agent skills into versioned
//! search artifacts.
//!
//! The modules are the pipeline's stages, in order: [`source`] (clone) ->
//! [`walk`] -> [`parse`] -> [`chunk`] -> [`validate`] -> [`document`] ->
//! [`write`] -> [`promote`]; [`build`] chains them. The pure stages (parse,
//! chunk, validate, document) know nothing of git, disks or networks; I/O
//! sits in [`source`], [`extract`], [`write`] and [`promote`].

pub mod assemble;
pub mod backfill;
pub mod build;
pub mod catalog;
pub mod chunk;
pub mod config;
pub mod diagnostics;
pub mod document;
pub mod embed;
pub mod extract;
pub mod failpoint;
pub mod findings;
pub mod lock;
pub mod marketplace;
pub mod parse;
pub mod promote;
pub mod report;
pub mod run;
pub mod source;
pub mod staging;
pub mod time;
pub mod validate;
pub mod variant;
pub mod verify;
pub mod walk;
pub mod write;
