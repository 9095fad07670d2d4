//! Procedural macros for Prism tools.
