//! Type-level markers of whether a builder stage certainly has a guard.
//!
//! [`build_secure`](crate::dispatch::DispatchBuilder::build_secure) exists only when trust,
//! permission and a validator were each given a real guard, not an `Option` of one. The builder
//! tracks that with these markers; users never name them.

/// Type-level marker: a guard certainly given.
#[derive(Debug)]
pub enum Given {}
/// Type-level marker: no guard, or only an `Option` of one.
#[derive(Debug)]
pub enum Missing {}

/// Whether a stage certainly has a guard. Implemented by [`Given`] and [`Missing`] only.
pub trait Presence: sealed::Sealed {}
impl Presence for Given {}
impl Presence for Missing {}

/// Combines what a stage already had with what one more call adds.
pub trait Join<Other: Presence>: Presence {
    /// [`Given`] when either side is.
    type Output: Presence;
}
impl<Other: Presence> Join<Other> for Given {
    type Output = Given;
}
impl Join<Given> for Missing {
    type Output = Given;
}
impl Join<Missing> for Missing {
    type Output = Missing;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Given {}
    impl Sealed for super::Missing {}
}
