//! [`Posting`] and [`TermId`]: the entries of the index's inverted lists, shared by the index and
//! the builder that fills it.

/// Identifies a term of a [`ToolIndex`](super::ToolIndex).
pub type TermId = u32;

/// One tool that contains a term, with the term's weighted frequency in that tool.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Posting {
    /// The tool's position in the snapshot.
    pub tool: u32,
    /// The summed field weights of the term's occurrences in the tool.
    pub frequency: f32,
}
