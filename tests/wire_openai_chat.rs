//! The OpenAI Chat Completions wire format on the streams openai-python recorded from the real
//! API (`../shared/data/llm-payloads/openai-python/inline-snapshot-external/*.bin`, every one of
//! them), the error body vercel-ai recorded, and the shapes compatible servers send.

mod provider_support;

use std::path::Path;
use std::sync::Arc;

use prism::call::BlockReason;
use prism::call::{ContentBlock, ErrorCode, ErrorInfo, ReplayState};
use prism::provider::openai_chat::OpenAiChat;
use prism::provider::wire::{PreparedTool, ToolTable, WireFormat};
use prism::run::{ProviderErrorKind, ProviderEvent, ResponseFold, StopReason};
use prism::{Message, ProviderResponse};
use prism::{ToolCall, ToolResult};
use proptest::prelude::*;
use provider_support::{Sse, decode, frame_sse, payloads, read};
use serde_json::{Value, json};

#[path = "wire_openai_chat/compatible.rs"]
mod compatible;
#[path = "wire_openai_chat/echo.rs"]
mod echo;

const RECORDED: &str = "openai-python/inline-snapshot-external";

/// The recordings' tools, two of them under names the model saw instead of the registered ones.
fn tools() -> Arc<ToolTable> {
    let object = json!({"type": "object"});
    Arc::new(
        ToolTable::new(vec![
            PreparedTool::new("weather.get", object.clone()).with_wire_name("get_weather"),
            PreparedTool::new("GetWeatherArgs", object.clone()),
            PreparedTool::new("stocks.price", object).with_wire_name("get_stock_price"),
        ])
        .unwrap(),
    )
}

/// What one recording must decode to.
struct Expected {
    file: &'static str,
    text: Text,
    calls: &'static [(&'static str, &'static str, &'static str)],
    stop: StopReason,
    usage: (u64, u64),
    refusal: Option<&'static str>,
}

enum Text {
    Exact(&'static str),
    /// The 608-character JSON answer: its start, its end and its length in characters.
    Long(&'static str, &'static str, usize),
}

fn expectations() -> Vec<Expected> {
    let refusal_1 = "I'm sorry, I can't assist with that request.";
    let refusal_2 = "I'm very sorry, but I can't assist with that.";
    vec![
        Expected {
            file: "173417d553406f034f643e5db3f8d591fb691ebac56f5ae39a22cc7d455c5353.bin",
            text: Text::Exact(refusal_1),
            calls: &[],
            stop: StopReason::Refusal,
            usage: (79, 11),
            refusal: Some(refusal_1),
        },
        Expected {
            file: "2018feb66ae13fcf5333d61b95849decc68d3f63bd38172889367e1afb1e04f7.bin",
            text: Text::Exact(""),
            calls: &[(
                "call_4XzlGBLtUe9dy3GVNV4jhq7h",
                "weather.get",
                r#"{"city":"New York City"}"#,
            )],
            stop: StopReason::ToolCalls,
            usage: (44, 16),
            refusal: None,
        },
        Expected {
            file: "4cc50a6135d254573a502310e6af1246f55edb6ad95fa24059f160996b68866d.bin",
            text: Text::Exact("{\""),
            calls: &[],
            stop: StopReason::MaxTokens,
            usage: (79, 1),
            refusal: None,
        },
        Expected {
            file: "569c877e69429d4cbc1577d2cd6dd33878095c68badc6b6654a69769b391a1c1.bin",
            text: Text::Exact(refusal_2),
            calls: &[],
            stop: StopReason::Refusal,
            usage: (79, 12),
            refusal: Some(refusal_2),
        },
        Expected {
            file: "7e5ea4d12e7cc064399b6631415e65923f182256b6e6b752950a3aaa2ad2320a.bin",
            text: Text::Exact(r#"{"city":"San Francisco","temperature":61,"units":"f"}"#),
            calls: &[],
            stop: StopReason::EndTurn,
            usage: (79, 14),
            refusal: None,
        },
        Expected {
            file: "83b060bae42eb41c4f1edbb7c1542b954b37d9dfd1910b964ddebc9677e6ae85.bin",
            text: Text::Exact("Foo!"),
            calls: &[],
            stop: StopReason::EndTurn,
            usage: (9, 2),
            refusal: None,
        },
        Expected {
            file: "a247c49c5fcd492bfb7a02a3306ad615ed8d8f649888ebfddfbc3ee151f44d46.bin",
            text: Text::Exact(""),
            calls: &[(
                "call_CTf1nWJLqSeRgDqaCG27xZ74",
                "weather.get",
                r#"{"city":"San Francisco","state":"CA"}"#,
            )],
            stop: StopReason::ToolCalls,
            usage: (48, 19),
            refusal: None,
        },
        // Three choices (`n: 3`); only the first is the response.
        Expected {
            file: "a491adda08c3d4fde95f5b2ee3f60f7f745f1a56d82e62f58031cc2add502380.bin",
            text: Text::Exact(r#"{"city":"San Francisco","temperature":65,"units":"f"}"#),
            calls: &[],
            stop: StopReason::EndTurn,
            usage: (79, 42),
            refusal: None,
        },
        Expected {
            file: "c6aa7e397b7123c3501f25df3a05d4daf7e8ad6d61ffa406ab5361fe36a8d5b1.bin",
            text: Text::Exact(""),
            calls: &[(
                "call_c91SqDXlYFuETYv8mUHzz6pp",
                "GetWeatherArgs",
                r#"{"city":"Edinburgh","country":"UK","units":"c"}"#,
            )],
            stop: StopReason::ToolCalls,
            usage: (76, 24),
            refusal: None,
        },
        Expected {
            file: "d615580118391ee13492193e3a8bb74642d23ac1ca13fe37cb6e889b66f759f6.bin",
            text: Text::Long(
                "\n  {\n    \"location\": \"San Francisco, CA\",\n",
                "\"condition\": \"Cloudy\"\n      }\n    ]\n  }\n",
                608,
            ),
            calls: &[],
            stop: StopReason::EndTurn,
            usage: (19, 177),
            refusal: None,
        },
        Expected {
            file: "e2aad469b71d1d4894ff833ea147020a9d875eb7ce644a0ff355581690a4cbfd.bin",
            text: Text::Exact(
                "I'm unable to provide real-time weather updates. To get the current weather in \
                 San Francisco, I recommend checking a reliable weather website or a weather app.",
            ),
            calls: &[],
            stop: StopReason::EndTurn,
            usage: (14, 30),
            refusal: None,
        },
        // Two parallel calls, the second to another tool.
        Expected {
            file: "f82268f2fefd5cfbc7eeb59c297688be2f6ca0849a6e4f17851b517310841d9b.bin",
            text: Text::Exact(""),
            calls: &[
                (
                    "call_JMW1whyEaYG438VE1OIflxA2",
                    "GetWeatherArgs",
                    r#"{"city": "Edinburgh", "country": "GB", "units": "c"}"#,
                ),
                (
                    "call_DNYTawLBoN8fj3KN6qU9N1Ou",
                    "stocks.price",
                    r#"{"ticker": "AAPL", "exchange": "NASDAQ"}"#,
                ),
            ],
            stop: StopReason::ToolCalls,
            usage: (149, 60),
            refusal: None,
        },
    ]
}

fn recording(dir: &Path, file: &str) -> Vec<u8> {
    read(dir, &format!("{RECORDED}/{file}"))
}

fn fold(events: &[ProviderEvent]) -> ProviderResponse {
    let mut fold = ResponseFold::new();
    for event in events {
        fold.push(event.clone());
    }
    fold.finish()
}

#[test]
fn every_recorded_stream_has_a_row() {
    let Some(dir) = payloads() else { return };
    let mut files: Vec<String> = std::fs::read_dir(dir.join(RECORDED))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".bin"))
        .collect();
    files.sort();
    let rows: Vec<&str> = expectations().iter().map(|row| row.file).collect();
    assert_eq!(
        files, rows,
        "a recording without a row, or a row without a recording"
    );
}

#[test]
fn every_recorded_stream_decodes_to_its_calls_text_stop_and_usage() {
    let Some(dir) = payloads() else { return };
    let tools = tools();
    for row in expectations() {
        let events = frame_sse(&recording(&dir, row.file), &[]);
        let (emitted, end) = decode(&OpenAiChat::new(), &tools, &events);
        let response = end.unwrap_or_else(|error| panic!("{}: {error}", row.file));
        let file = row.file;
        match row.text {
            Text::Exact(text) => assert_eq!(response.text, text, "{file}"),
            Text::Long(start, end, chars) => {
                assert!(response.text.starts_with(start), "{file}");
                assert!(response.text.ends_with(end), "{file}");
                assert_eq!(response.text.chars().count(), chars, "{file}");
            }
        }
        let calls: Vec<(&str, &str, Value)> = response
            .tool_calls
            .iter()
            .map(|call| {
                assert_eq!(call.arguments_error, None, "{file}");
                (call.id.as_str(), call.name.as_str(), call.arguments.clone())
            })
            .collect();
        let expected: Vec<(&str, &str, Value)> = row
            .calls
            .iter()
            .map(|(id, name, args)| (*id, *name, serde_json::from_str(args).unwrap()))
            .collect();
        assert_eq!(calls, expected, "{file}");
        assert_eq!(response.stop_reason, row.stop, "{file}");
        let usage = response.usage.expect("usage");
        assert_eq!(
            (usage.input_tokens, usage.output_tokens),
            row.usage,
            "{file}"
        );
        assert_eq!(usage.reasoning_tokens, Some(0), "{file}");
        assert_eq!(usage.cached_input_tokens, None, "{file}");
        let replay = row
            .refusal
            .map(|text| ReplayState::new("openai-chat", json!({ "refusal": text })));
        assert_eq!(response.replay, replay, "{file}");
        assert_eq!(
            response.model.as_deref(),
            Some("gpt-4o-2024-08-06"),
            "{file}"
        );
        assert!(
            response.id.as_deref().unwrap().starts_with("chatcmpl-ABfw"),
            "{file}"
        );
        // The response is the fold of the events the decoder emitted.
        assert_eq!(fold(&emitted), response, "{file}");
        let started = emitted
            .iter()
            .filter(|event| matches!(event, ProviderEvent::ToolCallStarted { .. }))
            .count();
        assert_eq!(started, row.calls.len(), "{file}");
    }
}

#[test]
fn argument_deltas_arrive_as_the_call_forms() {
    let Some(dir) = payloads() else { return };
    let file = "f82268f2fefd5cfbc7eeb59c297688be2f6ca0849a6e4f17851b517310841d9b.bin";
    let (events, _) = decode(
        &OpenAiChat::new(),
        &tools(),
        &frame_sse(&recording(&dir, file), &[]),
    );
    let mut text = [String::new(), String::new()];
    for event in &events {
        if let ProviderEvent::ToolCallArgumentsDelta { index, delta } = event {
            text[*index].push_str(delta);
        }
    }
    assert_eq!(
        text[0],
        r#"{"city": "Edinburgh", "country": "GB", "units": "c"}"#
    );
    assert_eq!(text[1], r#"{"ticker": "AAPL", "exchange": "NASDAQ"}"#);
    let first_started = events
        .iter()
        .position(|event| matches!(event, ProviderEvent::ToolCallStarted { index: 1, name, .. } if name == "stocks.price"))
        .unwrap();
    let first_done = events
        .iter()
        .position(|event| matches!(event, ProviderEvent::ToolCallDone { .. }))
        .unwrap();
    assert!(
        first_started < first_done,
        "both calls form before either is done"
    );
}

#[test]
fn a_stream_without_its_end_marker_is_truncated_with_what_was_complete() {
    let Some(dir) = payloads() else { return };
    let file = "f82268f2fefd5cfbc7eeb59c297688be2f6ca0849a6e4f17851b517310841d9b.bin";
    let bytes = recording(&dir, file);
    let text = std::str::from_utf8(&bytes).unwrap();
    let tools = tools();
    let format = OpenAiChat::new();

    // Everything but `data: [DONE]`: the calls were finished, the stream was not.
    let done = text.find("data: [DONE]").unwrap();
    let (_, end) = decode(&format, &tools, &frame_sse(&bytes[..done], &[]));
    let error = end.unwrap_err();
    assert_eq!(error.kind(), ProviderErrorKind::TruncatedStream);
    let partial = error.partial().unwrap();
    assert_eq!(partial.tool_calls.len(), 2);
    assert_eq!(partial.usage.unwrap().output_tokens, 60);

    // Cut inside the second call's arguments: only the first call is whole.
    let cut = text.find(r#""arguments":"SDAQ"#).unwrap();
    let line_start = text[..cut].rfind("data: ").unwrap();
    let (_, end) = decode(&format, &tools, &frame_sse(&bytes[..line_start], &[]));
    let error = end.unwrap_err();
    assert_eq!(error.kind(), ProviderErrorKind::TruncatedStream);
    let calls = &error.partial().unwrap().tool_calls;
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id.as_str(), "call_JMW1whyEaYG438VE1OIflxA2");
    assert_eq!(calls[0].arguments["country"], "GB");
}

#[test]
fn the_recorded_error_body_is_an_invalid_request_with_its_message() {
    let Some(dir) = payloads() else { return };
    let body = read(
        &dir,
        "vercel-ai/packages/openai/src/chat/__fixtures__/reasoning-model-legacy-parameter-error.json",
    );
    let error = OpenAiChat::new()
        .decode_response(&body, &tools())
        .unwrap_err();
    assert_eq!(error.kind(), ProviderErrorKind::InvalidRequest);
    assert_eq!(
        error.message(),
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use \
         'max_completion_tokens' instead."
    );
    // The same body as a stream event ends the stream with the same error.
    let text = String::from_utf8(body).unwrap().replace('\n', "");
    let (_, end) = decode(
        &OpenAiChat::new(),
        &tools(),
        &[Sse {
            event: None,
            data: text,
        }],
    );
    assert_eq!(end.unwrap_err().kind(), ProviderErrorKind::InvalidRequest);
}

fn all_recordings() -> Vec<(&'static str, Vec<u8>)> {
    match payloads() {
        Some(dir) => expectations()
            .into_iter()
            .map(|row| (row.file, recording(&dir, row.file)))
            .collect(),
        None => Vec::new(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Wherever the bytes are cut, the decoder sees the same events and gives the same answer.
    #[test]
    fn any_split_of_a_recording_decodes_the_same(
        pick in any::<prop::sample::Index>(),
        fractions in prop::collection::vec(0.0f64..1.0, 0..12),
    ) {
        let recordings = all_recordings();
        if recordings.is_empty() {
            return Ok(());
        }
        let (file, bytes) = &recordings[pick.index(recordings.len())];
        let tools = tools();
        let (whole_events, whole) = decode(&OpenAiChat::new(), &tools, &frame_sse(bytes, &[]));
        let mut cuts: Vec<usize> = fractions
            .iter()
            .map(|f| (f * bytes.len() as f64) as usize)
            .collect();
        cuts.sort_unstable();
        let (events, response) = decode(&OpenAiChat::new(), &tools, &frame_sse(bytes, &cuts));
        prop_assert_eq!(&events, &whole_events, "{}", file);
        prop_assert_eq!(response.unwrap(), whole.unwrap(), "{}", file);
    }
}

#[test]
fn malformed_arguments_become_an_arguments_error_with_the_parsers_message() {
    let events = provider_support::json_lines(concat!(
        r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Par"}}]}}]}"#,
        "\n",
        r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"is\""}}]}}]}"#,
        "\n",
        r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","function":{"name":"get_stock_price","arguments":"[1]"}}]},"finish_reason":"tool_calls"}]}"#,
        "\n[DONE]\n",
    ));
    let (_, end) = decode(&OpenAiChat::new(), &tools(), &events);
    let response = end.unwrap();
    let [cut, list] = &response.tool_calls[..] else {
        panic!("two calls")
    };
    assert_eq!(cut.name, "weather.get");
    assert!(
        cut.arguments_error
            .as_deref()
            .unwrap()
            .contains("EOF while parsing"),
        "{:?}",
        cut.arguments_error
    );
    assert_eq!(
        cut.replay.as_deref(),
        Some(&ReplayState::new(
            "openai-chat",
            json!({"arguments": "{\"city\": \"Paris\""})
        ))
    );
    assert_eq!(list.name, "stocks.price");
    assert_eq!(
        list.arguments_error.as_deref(),
        Some("arguments must be a JSON object, not an array")
    );
}

/// A transcript with everything a turn can carry, used by the round trip in `chat_echo`.
fn rich_transcript() -> Vec<Message> {
    let refund = ToolCall::new(
        "call_1",
        "billing.refund",
        json!({"order": 7, "note": "late"}),
    );
    let lookup = ToolCall::new("call_2", "GetWeatherArgs", json!({"city": "Oslo"}));
    let broken = ToolCall::malformed("call_3", "GetWeatherArgs", "EOF while parsing").with_replay(
        ReplayState::new("openai-chat", json!({"arguments": "{\"city\": "})),
    );
    vec![
        Message::user("Refund order 7 and tell me the weather."),
        Message::Assistant {
            content: "On it.".into(),
            tool_calls: vec![refund.clone(), lookup.clone(), broken.clone()],
            replay: Some(ReplayState::new(
                "openai-chat",
                json!({"reasoning_content": "The user wants two things."}),
            )),
        },
        Message::tool(ToolResult::error(
            refund.id.clone(),
            "billing.refund",
            ErrorInfo::new(
                ErrorCode::ToolError,
                "billing.refund failed: order 7 is closed",
            ),
        )),
        Message::tool(
            ToolResult::value(lookup.id.clone(), "GetWeatherArgs", json!({"temp": 4}))
                .with_content([
                    ContentBlock::text("Cloudy, light wind."),
                    ContentBlock::image_bytes(&[0x89, b'P', b'N', b'G'], "image/png"),
                    ContentBlock::resource_link("https://met.no/oslo", "Oslo forecast"),
                ]),
        ),
        Message::tool(ToolResult::blocked(
            broken.id.clone(),
            "GetWeatherArgs",
            BlockReason::InvalidArguments,
            "arguments are not valid JSON",
        )),
        Message::Assistant {
            content: "I can't help with that.".into(),
            tool_calls: vec![],
            replay: Some(ReplayState::new(
                "openai-chat",
                json!({"refusal": "I can't help with that."}),
            )),
        },
        Message::Assistant {
            content: "Thinking elsewhere.".into(),
            tool_calls: vec![],
            replay: Some(ReplayState::new("anthropic", json!([{"type": "thinking"}]))),
        },
    ]
}

fn rich_tools() -> ToolTable {
    ToolTable::new(vec![
        PreparedTool::new("billing.refund", json!({"type": "object"}))
            .with_wire_name("billing_refund")
            .with_description("Refunds an order."),
        PreparedTool::new("GetWeatherArgs", json!({"type": "object"})).with_strict(None),
    ])
    .unwrap()
}

/// An `error` event whose data is plain text (not every compatible server wraps it in JSON) is
/// the provider's message, not a complaint that the event could not be read.
#[test]
fn a_plain_text_error_event_keeps_the_providers_words() {
    let events = [
        provider_support::Sse {
            event: None,
            data: r#"{"id": "c1", "choices": [{"index": 0, "delta": {"content": "Hi"}}]}"#.into(),
        },
        provider_support::Sse {
            event: Some("error".into()),
            data: "upstream model timed out".into(),
        },
    ];
    let (_, end) =
        provider_support::decode(&OpenAiChat::new(), &Arc::new(ToolTable::default()), &events);
    let error = end.unwrap_err();
    assert!(
        error.message().contains("upstream model timed out"),
        "{error}"
    );
}
