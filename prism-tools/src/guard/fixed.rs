//! Guards whose answer never changes: [`AllowAll`] and [`DenyAll`].
//!
//! A secure dispatcher ([`build_secure`](crate::dispatch::DispatchBuilder::build_secure)) needs a
//! trust policy, a permission policy and a validator, each given for certain. Where one of them
//! has nothing to decide in a deployment, [`AllowAll`] says so in the code, instead of a closure
//! that returns `Ok(())`; [`DenyAll`] closes a stage completely (a maintenance switch, a
//! read-only replica).

use std::sync::Arc;

use serde_json::Value;

use crate::context::ToolExecutionContext;
use crate::definition::ToolDefinition;
use crate::error::Refusal;

use super::before_execute::BeforeExecute;
use super::permission::{PermissionPolicy, TrustPolicy};
use super::validate::ArgumentValidator;
use super::verdict::Verdict;

/// Lets every call through. Usable as a trust policy, permission policy, validator or
/// execution policy.
///
/// ```
/// use prism::{Dispatcher, ToolRegistry};
/// use prism::guard::AllowAll;
///
/// let dispatcher = Dispatcher::builder(ToolRegistry::new())
///     .trust(AllowAll)
///     .permission(AllowAll)
///     .validate(AllowAll)
///     .build_secure()
///     .unwrap();
/// # let _ = dispatcher;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllowAll;

/// Refuses every call with one message. Usable as a trust policy, permission policy, validator
/// or execution policy.
///
/// ```
/// use prism::guard::DenyAll;
///
/// let closed = DenyAll::new("tools are switched off during maintenance");
/// assert_eq!(closed.refusal().message, "tools are switched off during maintenance");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DenyAll {
    refusal: Arc<Refusal>,
}

impl DenyAll {
    /// Refuses every call with `refusal` (a message, or a [`Refusal`] with its own code).
    pub fn new(refusal: impl Into<Refusal>) -> Self {
        Self {
            refusal: Arc::new(refusal.into()),
        }
    }

    /// The refusal every call gets.
    pub fn refusal(&self) -> &Refusal {
        &self.refusal
    }

    fn verdict(&self) -> Verdict<'static> {
        Verdict::Ready(Err(Refusal::clone(&self.refusal)))
    }
}

/// Implements the four guard traits for `$guard`, each answering `$answer(self)`.
macro_rules! fixed_answer {
    ($guard:ty, $answer:expr) => {
        impl TrustPolicy for $guard {
            fn check<'a>(
                &'a self,
                _: &'a ToolDefinition,
                _: &'a ToolExecutionContext,
            ) -> Verdict<'a> {
                $answer(self)
            }
        }

        impl PermissionPolicy for $guard {
            fn check<'a>(
                &'a self,
                _: &'a ToolDefinition,
                _: &'a Value,
                _: &'a ToolExecutionContext,
            ) -> Verdict<'a> {
                $answer(self)
            }
        }

        impl ArgumentValidator for $guard {
            fn validate<'a>(&'a self, _: &'a ToolDefinition, _: &'a Value) -> Verdict<'a> {
                $answer(self)
            }
        }

        impl BeforeExecute for $guard {
            fn check<'a>(
                &'a self,
                _: &'a ToolDefinition,
                _: &'a Value,
                _: &'a ToolExecutionContext,
            ) -> Verdict<'a> {
                $answer(self)
            }
        }
    };
}

fixed_answer!(AllowAll, |_: &AllowAll| Verdict::allow());
fixed_answer!(DenyAll, DenyAll::verdict);
