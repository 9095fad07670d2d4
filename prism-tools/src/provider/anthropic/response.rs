//! A whole (non-streamed) response body: a message, or an error.

use crate::provider::wire::ToolTable;
use crate::run::{ProviderError, ProviderResponse};

use super::assembler::Assembler;
use super::errors::{invalid, provider_error};
use super::wire::MessageWire;

/// Decodes a response body through the same steps as a stream, so a whole response and the
/// fold of its events are one thing.
pub(super) fn decode_response(
    body: &[u8],
    tools: &ToolTable,
) -> Result<ProviderResponse, ProviderError> {
    let text =
        std::str::from_utf8(body).map_err(|e| invalid(format!("the body is not UTF-8: {e}")))?;
    let message: MessageWire<'_> = serde_json::from_str(text)
        .map_err(|e| invalid(format!("the body is not a message: {e}")))?;
    if message.kind.as_deref() == Some("error") || message.error.is_some() {
        return Err(match &message.error {
            Some(error) => provider_error(error),
            None => invalid("an error body without an error"),
        });
    }
    let mut assembler = Assembler::new(tools);
    let mut events = Vec::new();
    assembler.start(message, &mut events)?;
    assembler.stop(&mut events);
    assembler.finish()
}
