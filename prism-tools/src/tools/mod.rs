//! First-party tools a host may select and register like any other tool (DESIGN.md §11).
//!
//! Each family sits behind its own feature and gets no privilege the pipeline does not give
//! every tool: `web` (fetch, readable extraction and search under one URL policy) and `browser`
//! (four exclusive tools over a host-supplied Chromium, one browser context per run, under the
//! same URL policy).

#[cfg(feature = "browser")]
pub mod browser;
#[cfg(feature = "web")]
pub mod web;
