//! The builder's side of the artifact store, shared by the stages that
//! write: files staged and hashed on local disk while they are produced
//! ([`staging`]), and the puts that carry them and other objects into the
//! store ([`put`]). Reading the store is the reader crate's.

pub mod put;
pub mod staging;
