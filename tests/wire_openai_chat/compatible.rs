//! What servers that speak Chat Completions send differently from OpenAI. There are no
//! recordings of them in the shared data, so each case is written out as the server's
//! documentation and issue reports describe it, one JSON chunk per line.

use super::*;
use provider_support::json_lines;

fn stream(lines: &[&str]) -> Vec<Sse> {
    json_lines(&lines.join("\n"))
}

fn decode_ok(lines: &[&str]) -> (Vec<ProviderEvent>, ProviderResponse) {
    let (events, end) = decode(&OpenAiChat::new(), &tools(), &stream(lines));
    let response = end.unwrap();
    assert_eq!(
        fold(&events),
        response,
        "the response is the fold of the events"
    );
    (events, response)
}

#[test]
fn a_name_sent_after_the_id_is_announced_once_it_is_known() {
    let (events, response) = decode_ok(&[
        r#"{"id":"r1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"arguments":"{\"city\""}}]}}]}"#,
        r#"{"id":"r1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"get_weather"}}]}}]}"#,
        r#"{"id":"r1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":\"Oslo\"}"}}]}}]}"#,
        r#"{"id":"r1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ]);
    let started: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            ProviderEvent::ToolCallStarted { id, name, .. } => Some((id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(started, [("call_x", "weather.get")]);
    assert_eq!(response.tool_calls[0].arguments, json!({"city": "Oslo"}));
}

#[test]
fn ids_repeated_or_missing_give_one_stable_call_each() {
    // The id and the whole name on every chunk (as some servers send them).
    let (_, repeated) = decode_ok(&[
        r#"{"id":"r2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_r","function":{"name":"get_weather","arguments":"{\"city\":"}}]}}]}"#,
        r#"{"id":"r2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_r","function":{"name":"get_weather","arguments":"\"Rome\"}"}}]}}]}"#,
        r#"{"id":"r2","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ]);
    assert_eq!(repeated.tool_calls.len(), 1);
    assert_eq!(repeated.tool_calls[0].name, "weather.get");
    assert_eq!(repeated.tool_calls[0].arguments, json!({"city": "Rome"}));
    // No ids and no indexes: each call gets an id from the response id and its position.
    let (_, missing) = decode_ok(&[
        r#"{"id":"chatcmpl-7","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"get_weather","arguments":"{}"}}]}}]}"#,
        r#"{"id":"chatcmpl-7","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"get_stock_price","arguments":"{\"ticker\":\"X\"}"}}]}}]}"#,
        r#"{"id":"chatcmpl-7","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        "[DONE]",
    ]);
    let ids: Vec<&str> = missing.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["chatcmpl-7_call_0", "chatcmpl-7_call_1"]);
    // `stop` after calls means tool calls.
    assert_eq!(missing.stop_reason, StopReason::ToolCalls);
}

#[test]
fn arguments_left_out_or_sent_as_an_object() {
    let (_, response) = decode_ok(&[
        r#"{"id":"r3","model":"llama3.1","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_a","index":0,"type":"function","function":{"name":"get_weather","arguments":{"city":"Lima","days":2}}}]}}]}"#,
        r#"{"id":"r3","model":"llama3.1","choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_b","index":1,"type":"function","function":{"name":"get_stock_price"}}]}}]}"#,
        r#"{"id":"r3","model":"llama3.1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"id":"r3","model":"llama3.1","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":16},"completion_tokens_details":{"reasoning_tokens":4}}}"#,
        "[DONE]",
    ]);
    assert_eq!(
        response.tool_calls[0].arguments,
        json!({"city": "Lima", "days": 2})
    );
    assert_eq!(response.tool_calls[1].arguments, json!({}));
    let usage = response.usage.unwrap();
    assert_eq!(usage.cached_input_tokens, Some(16));
    assert_eq!(usage.reasoning_tokens, Some(4));
    assert_eq!(response.model.as_deref(), Some("llama3.1"));

    let whole = br#"{"id":"r4","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"Kyiv"}}}]},"finish_reason":"stop"}]}"#;
    let response = OpenAiChat::new().decode_response(whole, &tools()).unwrap();
    assert_eq!(response.tool_calls[0].id.as_str(), "r4_call_0");
    assert_eq!(response.tool_calls[0].arguments, json!({"city": "Kyiv"}));
    assert_eq!(response.stop_reason, StopReason::ToolCalls);
}

#[test]
fn groq_usage_deepseek_cache_and_reasoning_text_are_kept() {
    let (_, response) = decode_ok(&[
        r#"{"id":"r5","choices":[{"index":0,"delta":{"reasoning_content":"Think"}}]}"#,
        r#"{"id":"r5","choices":[{"index":0,"delta":{"reasoning_content":"ing."}}]}"#,
        r#"{"id":"r5","choices":[{"index":0,"delta":{"content":"Done."},"finish_reason":"stop"}],"x_groq":{"usage":{"prompt_tokens":5,"completion_tokens":3,"prompt_cache_hit_tokens":2}}}"#,
        "[DONE]",
    ]);
    assert_eq!(response.text, "Done.");
    assert_eq!(
        response.replay,
        Some(ReplayState::new(
            "openai-chat",
            json!({"reasoning_content": "Thinking."})
        ))
    );
    let usage = response.usage.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (5, 3));
    assert_eq!(usage.cached_input_tokens, Some(2));
}

#[test]
fn finish_reasons_map_and_unknown_ones_are_kept() {
    for (raw, expected) in [
        ("length", StopReason::MaxTokens),
        ("content_filter", StopReason::ContentFilter),
        ("function_call", StopReason::ToolCalls),
        ("tool_calls", StopReason::ToolCalls),
        ("stop", StopReason::EndTurn),
        ("abort", StopReason::Other("abort".into())),
    ] {
        let chunk = format!(
            r#"{{"id":"r","choices":[{{"index":0,"delta":{{"content":"x"}},"finish_reason":"{raw}"}}]}}"#
        );
        let (_, response) = decode_ok(&[&chunk, "[DONE]"]);
        assert_eq!(response.stop_reason, expected, "{raw}");
        let whole = format!(
            r#"{{"choices":[{{"index":0,"message":{{"content":"x"}},"finish_reason":"{raw}"}}]}}"#
        );
        let decoded = OpenAiChat::new()
            .decode_response(whole.as_bytes(), &tools())
            .unwrap();
        assert_eq!(decoded.stop_reason, expected, "{raw}");
    }
}

#[test]
fn a_whole_completion_with_refusal_cached_tokens_and_reasoning_tokens() {
    let body = br#"{"id":"chatcmpl-9","object":"chat.completion","created":1,"model":"o4-mini",
      "choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"No.",
      "annotations":[]},"logprobs":null,"finish_reason":"stop"}],
      "usage":{"prompt_tokens":120,"completion_tokens":40,"total_tokens":160,
      "prompt_tokens_details":{"cached_tokens":64,"audio_tokens":0},
      "completion_tokens_details":{"reasoning_tokens":32,"audio_tokens":0}},
      "service_tier":"default"}"#;
    let response = OpenAiChat::new().decode_response(body, &tools()).unwrap();
    assert_eq!(response.text, "No.");
    assert_eq!(response.stop_reason, StopReason::Refusal);
    assert_eq!(
        response.replay,
        Some(ReplayState::new("openai-chat", json!({"refusal": "No."})))
    );
    let usage = response.usage.unwrap();
    assert_eq!(usage.cached_input_tokens, Some(64));
    assert_eq!(usage.reasoning_tokens, Some(32));
    assert_eq!(response.id.as_deref(), Some("chatcmpl-9"));
}

#[test]
fn error_bodies_and_error_events_carry_the_providers_message() {
    let rate = br#"{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#;
    let error = OpenAiChat::new()
        .decode_response(rate, &tools())
        .unwrap_err();
    assert_eq!(error.kind(), ProviderErrorKind::RateLimited);
    assert_eq!(error.message(), "Rate limit reached for gpt-4o");
    let vllm = br#"{"object":"error","message":"model `x` does not exist","type":"NotFoundError","param":null,"code":404}"#;
    let error = OpenAiChat::new()
        .decode_response(vllm, &tools())
        .unwrap_err();
    assert_eq!(error.kind(), ProviderErrorKind::InvalidRequest);
    assert_eq!(error.status(), Some(404));
    let events = [
        Sse {
            event: None,
            data: r#"{"id":"r","choices":[{"index":0,"delta":{"content":"Hel"}}]}"#.into(),
        },
        Sse {
            event: Some("error".into()),
            data: r#"{"error":{"message":"The server had an error","type":"server_error"}}"#.into(),
        },
    ];
    let (emitted, end) = decode(&OpenAiChat::new(), &tools(), &events);
    let error = end.unwrap_err();
    assert_eq!(error.kind(), ProviderErrorKind::Overloaded);
    assert_eq!(error.message(), "The server had an error");
    assert!(matches!(&emitted[1], ProviderEvent::TextDelta { text } if text == "Hel"));
    let garbage = OpenAiChat::new()
        .decode_response(b"<html>", &tools())
        .unwrap_err();
    assert_eq!(garbage.kind(), ProviderErrorKind::InvalidResponse);
}
