//! A whole (non-streamed) Responses API body: an answer, or an error body.

use serde_json::Value;

use super::output::OutputItems;
use super::wire_types::{ResponseHead, failure, stop_reason};
use crate::provider::wire::ToolTable;
use crate::run::{ProviderError, ProviderErrorKind, ProviderResponse};

/// Decodes a response body, or the error body the API answered instead.
pub(super) fn decode(body: &[u8], tools: &ToolTable) -> Result<ProviderResponse, ProviderError> {
    let head: ResponseHead<'_, Vec<Value>> = serde_json::from_slice(body).map_err(|error| {
        ProviderError::with_kind(
            ProviderErrorKind::InvalidResponse,
            format!("the response body is not a Responses API object: {error}"),
        )
    })?;
    if head.status.is_none()
        && let Some(error) = &head.error
    {
        return Err(error.to_error());
    }
    if let Some(error) = failure(&head) {
        return Err(error);
    }
    let mut items = OutputItems::default();
    let mut response = ProviderResponse::default();
    for (index, item) in head.output.into_iter().enumerate() {
        let parts = items.take(index, item, tools);
        response.text.push_str(&parts.text);
        response.tool_calls.extend(parts.calls);
    }
    response.stop_reason = stop_reason(
        head.status.as_deref(),
        head.incomplete_details
            .as_ref()
            .and_then(|details| details.reason.as_deref()),
        &items.summary,
    );
    response.usage = head.usage.as_ref().map(|usage| usage.to_usage());
    response.replay = items.replay();
    response.id = head.id.map(String::from);
    response.model = head.model.map(String::from);
    Ok(response)
}
