//! `use prism::prelude::*;` brings the methods of Prism's traits into scope, adding no names.
//!
//! Each trait is imported as `_`: its methods become callable (reading a ledger, asking a
//! provider, claiming or recovering an effect, encoding a request with a wire format, reading a
//! clock…) while the trait keeps its one public path, at the root or in its module. Day-one
//! types are imported by name from the root: `use prism::{tool, …};`.

pub use prism_tools::Tool as _;
pub use prism_tools::clock::Clock as _;
pub use prism_tools::definition::ToolHandler as _;
pub use prism_tools::dispatch::{EventSink as _, RunLedger as _};
pub use prism_tools::effects::{EffectRecovery as _, EffectStore as _};
pub use prism_tools::extract::FromToolContext as _;
pub use prism_tools::provider::wire::{StreamDecoder as _, WireFormat as _};
pub use prism_tools::run::{ApprovalStore as _, Provider as _, RunEventSink as _};
pub use prism_tools::search::ToolScorer as _;
pub use prism_tools::storage::LedgerReader as _;
pub use prism_tools::validation::SchemaEngine as _;
