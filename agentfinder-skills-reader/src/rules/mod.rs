//! The rules both engines share (pure): which words of a query are
//! searched ([`query`]) and what copies of a skill have in common
//! ([`copies`]), and which fields are searched and how much each counts
//! ([`fields`]). Meilisearch gets the stop words as its index settings; the
//! embedded engine applies them itself; the serving side's results
//! pipeline applies the rest to either engine's candidates.

pub mod copies;
pub mod fields;
pub mod query;
