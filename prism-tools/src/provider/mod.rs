//! Provider wire formats: what OpenAI, Anthropic and Gemini are sent and send back, as pure
//! data code (no HTTP here).
//!
//! - [`names`]: tool names as each provider accepts them, mapped reversibly per request.
//!
//! Each format lowers tool schemas with [`crate::schema::lower`] and names tools with
//! [`names::ToolNames`]: the host, the dispatcher and the ledger see registered names; the
//! model sees wire names, in every text sent back to it too.

pub mod names;
