//! [`IntoSlot`]: what a builder accepts where it holds one shared component.
//!
//! Event sinks, ledgers and effect stores are shared trait objects (`Arc<dyn …>`) inside a
//! dispatcher. A builder method takes `impl IntoSlot<dyn Trait>`, so a caller passes the
//! component itself, an `Arc` it keeps a handle to, or an `Option` of either (`None` leaves the
//! slot empty), without converting by hand. Guards have their own conversion
//! ([`IntoGuard`](crate::guard::IntoGuard)), which also records at the type level whether a guard
//! was certainly given.

use std::sync::Arc;

/// Anything a builder accepts for a slot holding an `Arc<S>`: an implementor of `S`, an
/// `Arc<S>`, or an `Option` of either.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot fill this slot",
    label = "expected an implementor of the slot's trait",
    note = "pass a value implementing the slot's trait (an event sink, a ledger, an effect store), an `Arc<dyn …>` of one, or an `Option` of either"
)]
pub trait IntoSlot<S: ?Sized> {
    /// The component, if any.
    fn into_slot(self) -> Option<Arc<S>>;
}

impl<S: ?Sized, T: IntoSlot<S>> IntoSlot<S> for Option<T> {
    fn into_slot(self) -> Option<Arc<S>> {
        self.and_then(IntoSlot::into_slot)
    }
}

/// Implements [`IntoSlot`] for every implementor of each trait named and for an `Arc` of its
/// trait object; invoked where each trait is defined.
macro_rules! impl_into_slot {
    ($($component:ident),* $(,)?) => {$(
        impl<T: $component> $crate::slot::IntoSlot<dyn $component> for T {
            fn into_slot(self) -> Option<::std::sync::Arc<dyn $component>> {
                Some(::std::sync::Arc::new(self))
            }
        }
        impl $crate::slot::IntoSlot<dyn $component> for ::std::sync::Arc<dyn $component> {
            fn into_slot(self) -> Option<::std::sync::Arc<dyn $component>> {
                Some(self)
            }
        }
    )*};
}
pub(crate) use impl_into_slot;
