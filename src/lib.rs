//! agentfinder-skills: turns repositories of agent skills into versioned
//! search artifacts.
//!
//! The modules are the pipeline's stages, in order:
//! [`source`] (clone) -> [`walk`] -> [`parse`] -> [`chunk`] -> [`validate`] ->
//! [`document`] -> [`write`] -> [`promote`]; [`build`] chains them. The pure
//! stages (parse, chunk, validate, document) know nothing of git, disks or
//! networks.

pub mod catalog;
pub mod chunk;
pub mod config;
pub mod source;
pub mod validate;
pub mod walk;
pub mod diagnostics;
pub mod document;
pub mod marketplace;
pub mod parse;
