//! The Anthropic Messages wire format on recorded data: every recorded response and stream of
//! `../shared/data/llm-payloads/` (anthropic-sdk-python and vercel-ai) decodes to the calls,
//! text, usage, stop reason and replay state read from the recording; streams cut anywhere give
//! the same result; streams that end early are truncated with only complete calls; error bodies
//! and events get their kinds.

mod provider_support;

#[path = "wire_anthropic/encode.rs"]
mod encode;

use std::path::Path;
use std::sync::Arc;

use prism::ProviderResponse;
use prism::provider::anthropic::Anthropic;
use prism::provider::wire::{PreparedTool, ToolTable, WireFormat};
use prism::run::{ProviderErrorKind, ProviderEvent, ResponseFold, StopReason};
use provider_support::{Sse, decode, frame_sse, json_lines, payloads, read};
use serde_json::{Value, json};

/// One decoded message of a recording, as read from it.
struct Row {
    file: &'static str,
    /// Which message of the file: the interaction of a cassette, or the n-th stream of a
    /// `*.chunks.txt` holding several responses one after another.
    part: usize,
    id: &'static str,
    stop: StopReason,
    /// Input (cache reads and writes included), output, cached, reasoning.
    usage: (u64, u64, Option<u64>, Option<u64>),
    /// Byte length, first 40 characters, last 20 (when longer than 40).
    text: (usize, &'static str, &'static str),
    /// Id, registered name, arguments as JSON text (`!` for a call whose arguments were cut).
    calls: &'static [(&'static str, &'static str, &'static str)],
    /// The types of the blocks kept whole in the replay state, in order.
    kept: &'static [&'static str],
    /// Whether the message has replay state at all.
    replay: bool,
}

const ROWS: &[Row] = &[
    Row {
        file: "anthropic-sdk-python/tests/fixtures/fable-fallback/stream-a-refusal.sse",
        part: 0,
        id: "msg_fixture_a_0001",
        stop: StopReason::Refusal,
        usage: (28, 106, Some(0), Some(67)),
        text: (2, "Hi", ""),
        calls: &[],
        kept: &["thinking"],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/fixtures/fable-fallback/stream-a-toolrefusal.sse",
        part: 0,
        id: "msg_fixture_atool_0001",
        stop: StopReason::Refusal,
        usage: (28, 106, Some(0), Some(67)),
        text: (
            54,
            "Here's a summary of this year's solar ec",
            "lar eclipses and how",
        ),
        calls: &[],
        kept: &["server_tool_use", "web_search_tool_result"],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/fixtures/fable-fallback/stream-b-fallback.sse",
        part: 0,
        id: "msg_fixture_b_0001",
        stop: StopReason::EndTurn,
        usage: (31, 547, Some(0), Some(0)),
        text: (
            1312,
            " there! Happy to explain.\n\n**Solar eclip",
            "rking your interest!",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/streaming/fixtures/basic_response.txt",
        part: 0,
        id: "msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK",
        stop: StopReason::EndTurn,
        usage: (11, 6, None, None),
        text: (12, "Hello there!", ""),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/streaming/fixtures/compaction_response.txt",
        part: 0,
        id: "msg_01CompactionEncryptedContent01",
        stop: StopReason::EndTurn,
        usage: (30, 8, None, None),
        text: (12, "Hello there!", ""),
        calls: &[],
        kept: &["compaction"],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/streaming/fixtures/fallback_credit_response.txt",
        part: 0,
        id: "msg_01FallbackCreditUsage0000001",
        stop: StopReason::EndTurn,
        usage: (25, 8, None, None),
        text: (12, "Hello there!", ""),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/streaming/fixtures/fallback_response.txt",
        part: 0,
        id: "msg_01FallbackModelRelabel000001",
        stop: StopReason::EndTurn,
        usage: (25, 8, None, None),
        text: (12, "Hello there!", ""),
        calls: &[],
        kept: &["fallback"],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/streaming/fixtures/incomplete_partial_json_response.txt",
        part: 0,
        id: "msg_01UdjYBBipA9omjYhicnevgq",
        stop: StopReason::MaxTokens,
        usage: (450, 124, Some(0), None),
        text: (
            135,
            "I'll create a comprehensive tax guide fo",
            "do that for you now.",
        ),
        calls: &[("toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file", "!")],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/streaming/fixtures/refusal_response.txt",
        part: 0,
        id: "msg_01RefusalTestMessage123456789",
        stop: StopReason::Refusal,
        usage: (20, 0, None, None),
        text: (0, "", ""),
        calls: &[],
        kept: &[],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/streaming/fixtures/tool_use_response.txt",
        part: 0,
        id: "msg_019Q1hrJbZG26Fb9BQhrkHEr",
        stop: StopReason::ToolCalls,
        usage: (377, 65, Some(0), None),
        text: (
            48,
            "I'll check the current weather in Paris ",
            "er in Paris for you.",
        ),
        calls: &[(
            "toolu_01NRLabsLyVHZPKxbKvkfSMn",
            "weather.get",
            "{\"location\":\"Paris\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-clear-tool-uses.1.chunks.txt",
        part: 0,
        id: "msg_01YJG5jvxYUWfhVa6MSqT6qk",
        stop: StopReason::EndTurn,
        usage: (859, 122, Some(0), None),
        text: (
            444,
            "\n\nHere's a comparison of the weather in ",
            "er choice right now.",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-json-other-tool.1.chunks.txt",
        part: 0,
        id: "msg_01CD3XaZfhNabxRt1SG5ybtK",
        stop: StopReason::ToolCalls,
        usage: (843, 28, Some(0), None),
        text: (0, "", ""),
        calls: &[(
            "toolu_019Zvehfe1XQWweT1pm7okyt",
            "weather",
            "{\"location\":\"San Francisco\"}",
        )],
        kept: &[],
        replay: false,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-json-tool.1.chunks.txt",
        part: 0,
        id: "msg_01K2JbSUMYhez5RHoK9ZCj9U",
        stop: StopReason::ToolCalls,
        usage: (849, 47, Some(0), None),
        text: (0, "", ""),
        calls: &[(
            "toolu_01KFbKqPYSuAKujiL6mTfzYA",
            "json",
            "{\"elements\":[{\"location\":\"San Francisco\",\"temperature\":58,\"condition\":\"sunny\"}]}",
        )],
        kept: &[],
        replay: false,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-json-tool.2.chunks.txt",
        part: 0,
        id: "msg_01K2JbSUMYhez5RHoK9ZCj9U",
        stop: StopReason::ToolCalls,
        usage: (849, 47, Some(0), None),
        text: (35, "I'll invoke the JSON response tool.", ""),
        calls: &[(
            "toolu_01KFbKqPYSuAKujiL6mTfzYA",
            "json",
            "{\"elements\":[{\"location\":\"San Francisco\",\"temperature\":58,\"condition\":\"sunny\"}]}",
        )],
        kept: &[],
        replay: false,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt",
        part: 0,
        id: "msg_01ERcBqAvLTHWQDk9c9qJLWC",
        stop: StopReason::ToolCalls,
        usage: (3369, 725, Some(0), None),
        text: (
            157,
            "I'll help you simulate this game between",
            "layer wins 3 rounds.",
        ),
        calls: &[(
            "toolu_019jKkXz4jAdwHweHBw92CVY",
            "rollDie",
            "{\"player\":\"player1\"}",
        )],
        kept: &["server_tool_use"],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt",
        part: 1,
        id: "msg_01KSVw3xmXbMNJPNMt46BC5W",
        stop: StopReason::ToolCalls,
        usage: (0, 0, None, None),
        text: (0, "", ""),
        calls: &[(
            "toolu_015dGLMbwBKv1ZRQr6KdJzeH",
            "rollDie",
            "{\"player\":\"player2\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt",
        part: 2,
        id: "msg_016fLapHzDx8DG2SUcsGKyPA",
        stop: StopReason::ToolCalls,
        usage: (0, 0, None, None),
        text: (0, "", ""),
        calls: &[(
            "toolu_01YYqBNq5mk1wMtv3PAqY44m",
            "rollDie",
            "{\"player\":\"player1\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt",
        part: 3,
        id: "msg_01MQHz6AzmwmZoTry5nk5EQC",
        stop: StopReason::ToolCalls,
        usage: (0, 0, None, None),
        text: (0, "", ""),
        calls: &[(
            "toolu_018WxjDkQG8h7i63poySGT2x",
            "rollDie",
            "{\"player\":\"player2\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt",
        part: 4,
        id: "msg_01WCXNc8kDU1jBuaza6uUZ8k",
        stop: StopReason::ToolCalls,
        usage: (0, 0, None, None),
        text: (0, "", ""),
        calls: &[(
            "toolu_014ch4D3vbx928ddwxMvMvF1",
            "rollDie",
            "{\"player\":\"player1\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt",
        part: 5,
        id: "msg_01Hoo8fVNFQyUpbagnajQ4BF",
        stop: StopReason::ToolCalls,
        usage: (0, 0, None, None),
        text: (0, "", ""),
        calls: &[(
            "toolu_01QtZ46GWS93Z5ZaSifgGNnq",
            "rollDie",
            "{\"player\":\"player2\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt",
        part: 6,
        id: "msg_014eWUw8H2P9bDMyXcSpe1ss",
        stop: StopReason::ToolCalls,
        usage: (0, 0, None, None),
        text: (0, "", ""),
        calls: &[(
            "toolu_012Zvp8FdgvjVGkmbHSU4EZk",
            "rollDie",
            "{\"player\":\"player1\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt",
        part: 7,
        id: "msg_015ecR3hog8LhtqDLdysH8p1",
        stop: StopReason::ToolCalls,
        usage: (0, 0, None, None),
        text: (0, "", ""),
        calls: &[(
            "toolu_01CMz8Jhv6EfnzHQzEMdpHut",
            "rollDie",
            "{\"player\":\"player2\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt",
        part: 8,
        id: "msg_01CHzXfYTqEJ9HV3Kic1Uz5q",
        stop: StopReason::ToolCalls,
        usage: (0, 0, None, None),
        text: (0, "", ""),
        calls: &[(
            "toolu_01PfH6ADzq8Yct5jeRY9QkS2",
            "rollDie",
            "{\"player\":\"player1\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt",
        part: 9,
        id: "msg_014nyoTPq6LG3UwHW1zvMTH3",
        stop: StopReason::ToolCalls,
        usage: (0, 0, None, None),
        text: (0, "", ""),
        calls: &[(
            "toolu_013DE3qaKvBMheZXUhwkvpdF",
            "rollDie",
            "{\"player\":\"player2\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt",
        part: 10,
        id: "msg_01HLQ2uhM6N45SyR39CddV55",
        stop: StopReason::ToolCalls,
        usage: (0, 0, None, None),
        text: (0, "", ""),
        calls: &[(
            "toolu_01MTRMy9BEvFHWR7hpCWc4nJ",
            "rollDie",
            "{\"player\":\"player1\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt",
        part: 11,
        id: "msg_01TdKL1d8pQ9hLtyzbPUNGNf",
        stop: StopReason::ToolCalls,
        usage: (0, 0, None, None),
        text: (0, "", ""),
        calls: &[(
            "toolu_01CXqv27ozPihE5nj6eA3Joc",
            "rollDie",
            "{\"player\":\"player2\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt",
        part: 12,
        id: "msg_01Q5bmB7EBDZYRnY5A78n34S",
        stop: StopReason::ToolCalls,
        usage: (0, 0, None, None),
        text: (0, "", ""),
        calls: &[(
            "toolu_01K6ST6orjmPHHwM8rwLj1n9",
            "rollDie",
            "{\"player\":\"player1\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt",
        part: 13,
        id: "msg_01E9RpqZHoGBsPDB9P3r1aBA",
        stop: StopReason::ToolCalls,
        usage: (0, 0, None, None),
        text: (0, "", ""),
        calls: &[(
            "toolu_01QcWWQcQ1pd7nx9xohX4zAr",
            "rollDie",
            "{\"player\":\"player2\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt",
        part: 14,
        id: "msg_01CfmDducyrt61n4Q7QS8VFK",
        stop: StopReason::EndTurn,
        usage: (4551, 197, Some(0), None),
        text: (
            678,
            "## Game Results\n\n**Player 2 wins the gam",
            "gainst Player 1's 2.",
        ),
        calls: &[],
        kept: &["code_execution_tool_result"],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-refusal.chunks.txt",
        part: 0,
        id: "msg_01RefusalStreamAbcdefghijk",
        stop: StopReason::Refusal,
        usage: (18, 5, Some(0), None),
        text: (0, "", ""),
        calls: &[],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-no-args.chunks.txt",
        part: 0,
        id: "msg_01GE2RKp1VYsPzdFs3sS9z5S",
        stop: StopReason::ToolCalls,
        usage: (565, 48, Some(0), None),
        text: (35, "I'll update the issue list for you.", ""),
        calls: &[("toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList", "{}")],
        kept: &[],
        replay: false,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-search-bm25.1.chunks.txt",
        part: 0,
        id: "msg_011bqgzot9grwdetCByUmXRP",
        stop: StopReason::ToolCalls,
        usage: (1630, 158, Some(0), None),
        text: (
            177,
            "I'll search for a weather-related tool t",
            "r for San Francisco.",
        ),
        calls: &[(
            "toolu_019nRrfqqXcU5NPTUSYfEMAY",
            "weather.get",
            "{\"location\":\"San Francisco, CA\"}",
        )],
        kept: &["server_tool_use", "tool_search_tool_result"],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-search-bm25.1.chunks.txt",
        part: 1,
        id: "msg_0132hQ7tpsGJhdPtEBhmKA2R",
        stop: StopReason::EndTurn,
        usage: (1040, 41, Some(0), None),
        text: (
            120,
            "The current weather in San Francisco, CA",
            "\n- **Humidity:** 65%",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-search-deferred-bm25.chunks.txt",
        part: 0,
        id: "msg_01WUP4eZFC22KbkesuJGqVAw",
        stop: StopReason::ToolCalls,
        usage: (879, 177, Some(0), None),
        text: (
            156,
            "I'll help you with this task. Let me sta",
            " add a bullet point.",
        ),
        calls: &[(
            "toolu_01U8pzAHj2vNdPCA2Kf8JjeN",
            "readNoteTree",
            "{\"noteId\":\"d10aa585-982b-4bd9-984e-420f9b3717f7\"}",
        )],
        kept: &["server_tool_use"],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-search-deferred-bm25.chunks.txt",
        part: 1,
        id: "msg_014CbStN8SFzjGbDkZzTtD7i",
        stop: StopReason::ToolCalls,
        usage: (1398, 213, Some(0), None),
        text: (
            225,
            "Perfect! I can see the current note stru",
            " bulleted list item.",
        ),
        calls: &[(
            "toolu_01QoRrvXNv6w4vZSyo9cnxP2",
            "executeEditorOperation",
            "{\"noteId\":\"d10aa585-982b-4bd9-984e-420f9b3717f7\",\"operations\":[{\"op\":\"insert_node\",\"type\":\"bulletedListItem\",\"text\":\"bye\",\"at\":{\"type\":\"path\",\"path\":[1]}}]}",
        )],
        kept: &["tool_search_tool_result"],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-search-deferred-bm25.chunks.txt",
        part: 2,
        id: "msg_01XnBpTaw23kf2UnGUdkKfey",
        stop: StopReason::EndTurn,
        usage: (1639, 95, Some(0), None),
        text: (
            353,
            "Great! I've successfully completed the t",
            "tion was successful!",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-search-deferred-regex.chunks.txt",
        part: 0,
        id: "msg_01MCmfPn2yQ8Nfqz1cGmHe6K",
        stop: StopReason::ToolCalls,
        usage: (904, 175, Some(0), None),
        text: (
            156,
            "I'll help you with this task. Let me sta",
            "ols to add a bullet.",
        ),
        calls: &[(
            "toolu_01WPkY6CkyJnFsaCqY7SZ9FX",
            "readNoteTree",
            "{\"noteId\":\"d10aa585-982b-4bd9-984e-420f9b3717f7\"}",
        )],
        kept: &["server_tool_use"],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-search-deferred-regex.chunks.txt",
        part: 1,
        id: "msg_017tMyttPYQeSLKYEe8V9BN5",
        stop: StopReason::ToolCalls,
        usage: (1519, 211, Some(0), None),
        text: (
            223,
            "Perfect! I can see the current note stru",
            " bulleted list item.",
        ),
        calls: &[(
            "toolu_01UFHf8D27JBYu9FmrcjJk1p",
            "executeEditorOperation",
            "{\"noteId\":\"d10aa585-982b-4bd9-984e-420f9b3717f7\",\"operations\":[{\"op\":\"insert\",\"type\":\"bulletedListItem\",\"text\":\"bye\",\"at\":{\"type\":\"after\",\"path\":[0]}}]}",
        )],
        kept: &["tool_search_tool_result"],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-search-deferred-regex.chunks.txt",
        part: 2,
        id: "msg_01B2PApN3MtQ8zF4Xvnw6pvY",
        stop: StopReason::EndTurn,
        usage: (1758, 118, Some(0), None),
        text: (
            425,
            "Great! I've successfully completed the t",
            "st items:\n- hi\n- bye",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-search-regex.1.chunks.txt",
        part: 0,
        id: "msg_01A4vjL51mNRof8JMvA9CFph",
        stop: StopReason::ToolCalls,
        usage: (1681, 163, Some(0), None),
        text: (
            85,
            "Great! I found a weather tool. Let me ge",
            "a for San Francisco.",
        ),
        calls: &[(
            "toolu_01UmPwkecewaEpMupy2ywk8b",
            "get_temp_data",
            "{\"location\":\"San Francisco, CA\"}",
        )],
        kept: &["server_tool_use", "tool_search_tool_result"],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-search-regex.1.chunks.txt",
        part: 1,
        id: "msg_01L42mFXxzijtGwwfiLdKoUn",
        stop: StopReason::EndTurn,
        usage: (1071, 67, Some(0), None),
        text: (
            240,
            "Here's the current weather data for San ",
            "d moderate humidity!",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/duplicate-message-start.chunks.txt",
        part: 0,
        id: "msg_dup",
        stop: StopReason::EndTurn,
        usage: (17, 227, None, None),
        text: (13, "Hello, World!", ""),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-claude-opus-5-reasoning-high.1.json",
        part: 0,
        id: "msg_011CdMNhurHSJCxCC2NB7WYc",
        stop: StopReason::EndTurn,
        usage: (51, 1699, Some(0), Some(139)),
        text: (
            2654,
            "## Step 1: Set up the problem\n\nWe want a",
            "nfirming the answer.",
        ),
        calls: &[],
        kept: &["thinking"],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-clear-tool-uses.1.json",
        part: 0,
        id: "msg_015cSyws7w7R4ZeozELGSuET",
        stop: StopReason::EndTurn,
        usage: (859, 132, Some(0), None),
        text: (
            495,
            "\n\nHere's a comparison of the weather in ",
            "er choice right now!",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-json-other-tool.1.json",
        part: 0,
        id: "msg_01T8acYgh1ugip1ifUmT4MCU",
        stop: StopReason::ToolCalls,
        usage: (843, 28, Some(0), None),
        text: (0, "", ""),
        calls: &[(
            "toolu_01PQjhxo3eirCdKNvCJrKc8f",
            "weather",
            "{\"location\":\"San Francisco\"}",
        )],
        kept: &[],
        replay: false,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-json-tool.1.json",
        part: 0,
        id: "msg_0191iYfpERYfS27xLsdW2nbb",
        stop: StopReason::ToolCalls,
        usage: (1151, 87, Some(0), None),
        text: (0, "", ""),
        calls: &[(
            "toolu_01Q9ExVZnzZj7E2QQYHYtNUa",
            "json",
            "{\"elements\":[{\"location\":\"San Francisco\",\"temperature\":-5,\"condition\":\"snowy\"},{\"location\":\"London\",\"temperature\":0,\"condition\":\"snowy\"},{\"location\":\"Paris\",\"temperature\":23,\"condition\":\"cloudy\"},{\"location\":\"Berlin\",\"temperature\":-9,\"condition\":\"snowy\"}]}",
        )],
        kept: &[],
        replay: false,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.json",
        part: 0,
        id: "msg_01LPPbjvqcSgBPfApMEiJ4qv",
        stop: StopReason::EndTurn,
        usage: (4243, 229, Some(0), None),
        text: (
            857,
            "I'll help you simulate this dice game be",
            "ring a single round!",
        ),
        calls: &[
            (
                "toolu_01PMcE1JBKCeLjn83cgUCvR5",
                "rollDie",
                "{\"player\":\"player2\"}",
            ),
            (
                "toolu_01MZf5QJ1EQyd2yGyeLzBxAS",
                "rollDie",
                "{\"player\":\"player1\"}",
            ),
            (
                "toolu_01T7Upuuv8C71nq7DZ9ZPNQW",
                "rollDie",
                "{\"player\":\"player1\"}",
            ),
            (
                "toolu_016Da1tDet9Bf7dAdYTkF5Ar",
                "rollDie",
                "{\"player\":\"player2\"}",
            ),
        ],
        kept: &["server_tool_use", "code_execution_tool_result"],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-refusal-no-details.json",
        part: 0,
        id: "msg_01RefusalNoDetailsAbcdefghij",
        stop: StopReason::Refusal,
        usage: (18, 5, Some(0), None),
        text: (0, "", ""),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-refusal.json",
        part: 0,
        id: "msg_01RefusalExampleAbcdefghijk",
        stop: StopReason::Refusal,
        usage: (18, 5, Some(0), None),
        text: (0, "", ""),
        calls: &[],
        kept: &[],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-no-args.json",
        part: 0,
        id: "msg_01GCBaV8gyWAYgMVggRqZbuQ",
        stop: StopReason::ToolCalls,
        usage: (602, 93, Some(0), None),
        text: (
            255,
            "<thinking>\nThe updateIssueList tool was ",
            " current issue list:",
        ),
        calls: &[("toolu_01LRmxn9vGM1d2DZSDBowdZ1", "updateIssueList", "{}")],
        kept: &[],
        replay: false,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-search-bm25.1.json",
        part: 0,
        id: "msg_01UT62y3tNACWwnL9oJ9rzUG",
        stop: StopReason::ToolCalls,
        usage: (1631, 161, Some(0), None),
        text: (
            179,
            "I'll search for a weather-related tool t",
            "n Francisco for you.",
        ),
        calls: &[(
            "toolu_01PFQG18bVLaXcEaCxTZtX4G",
            "weather.get",
            "{\"location\":\"San Francisco, CA\"}",
        )],
        kept: &["server_tool_use", "tool_search_tool_result"],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-search-deferred-bm25.2.json",
        part: 0,
        id: "msg_01SyorFoaYHS6homn4ntwKWk",
        stop: StopReason::ToolCalls,
        usage: (1398, 213, Some(0), None),
        text: (
            226,
            "Perfect! I can see the current structure",
            " bulleted list item.",
        ),
        calls: &[(
            "toolu_019oFKxH7xzoKZtBX1mBGHeJ",
            "executeEditorOperation",
            "{\"noteId\":\"d10aa585-982b-4bd9-984e-420f9b3717f7\",\"operations\":[{\"op\":\"insert_node\",\"at\":{\"type\":\"path\",\"path\":[1]},\"type\":\"bulletedListItem\",\"text\":\"bye\"}]}",
        )],
        kept: &["tool_search_tool_result"],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-search-deferred-regex.2.json",
        part: 0,
        id: "msg_01AyVh7iTyYup5o85hpFmYC1",
        stop: StopReason::ToolCalls,
        usage: (1520, 203, Some(0), None),
        text: (
            228,
            "Good! I can see the current note structu",
            " bulleted list item.",
        ),
        calls: &[(
            "toolu_01Vif37vPguXdx5yxixnpvpM",
            "executeEditorOperation",
            "{\"noteId\":\"d10aa585-982b-4bd9-984e-420f9b3717f7\",\"operations\":[{\"op\":\"insert_node\",\"at\":{\"type\":\"path\",\"path\":[1]},\"type\":\"bulletedListItem\",\"text\":\"bye\"}]}",
        )],
        kept: &["tool_search_tool_result"],
        replay: true,
    },
    Row {
        file: "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-tool-search-regex.1.json",
        part: 0,
        id: "msg_014rjTcNMwWRYQkjnCre2pi4",
        stop: StopReason::ToolCalls,
        usage: (1676, 184, Some(0), None),
        text: (
            103,
            "I found a tool to get temperature data! ",
            "n for San Francisco.",
        ),
        calls: &[(
            "toolu_01X4r989CAhzqnFqDJn1gVvp",
            "get_temp_data",
            "{\"location\":\"San Francisco, CA\",\"unit\":\"fahrenheit\"}",
        )],
        kept: &["server_tool_use", "tool_search_tool_result"],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/_parse/__inline_snapshot__/test_beta_messages/TestAsyncMessages/9381e2b7-7fa1-46f7-9f78-46dc8431ea9d.json",
        part: 0,
        id: "msg_01LtFpmR8SbmiK2kRA5sWXNi",
        stop: StopReason::EndTurn,
        usage: (135, 10, Some(0), None),
        text: (13, "[12345,67890]", ""),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/_parse/__inline_snapshot__/test_beta_messages/TestAsyncMessages/d7092a7d-b723-4470-8fb0-da138cd103a1.json",
        part: 0,
        id: "msg_01EojSKby3oqoP7mb4PHsMJ7",
        stop: StopReason::EndTurn,
        usage: (222, 14, Some(0), None),
        text: (28, "{\"name\":\"John Doe\",\"age\":30}", ""),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/_parse/__inline_snapshot__/test_messages/TestAsyncParse/924cfccc-c863-44ed-9838-c36b37416eaf.json",
        part: 0,
        id: "msg_01MkoP42QB7TUf5m2NVVK2kE",
        stop: StopReason::EndTurn,
        usage: (249, 26, Some(0), None),
        text: (
            59,
            "{\"product_name\": \"Green Tea\", \"price\": 5",
            "5.50, \"quantity\": 2}",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/_parse/__inline_snapshot__/test_messages/TestAsyncParse/d743d628-16aa-4c9f-ae78-51deb578f746.json",
        part: 2,
        id: "msg_01Q1NNiF8NA8EywFhxTmFbeP",
        stop: StopReason::EndTurn,
        usage: (406, 50, Some(0), None),
        text: (
            131,
            "{\"items\":[{\"product_name\":\"Green Tea\",\"p",
            "y\":1}],\"total\":14.0}",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/_parse/__inline_snapshot__/test_messages/TestAsyncStream/a8b7dbb8-2321-4624-abdb-7ba2136b5c38.json",
        part: 2,
        id: "msg_013nnniYDrJDocdy5nrMU7cH",
        stop: StopReason::EndTurn,
        usage: (135, 10, Some(0), None),
        text: (13, "[12345,67890]", ""),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/_parse/__inline_snapshot__/test_messages/TestSyncParse/bd7029d5-d8d4-4e06-be3a-2ac9c60803a6.json",
        part: 0,
        id: "msg_01T4jd6NyD9xGGtTPDC4ogy5",
        stop: StopReason::EndTurn,
        usage: (406, 50, Some(0), None),
        text: (
            131,
            "{\"items\":[{\"product_name\":\"Green Tea\",\"p",
            "y\":1}],\"total\":14.0}",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/_parse/__inline_snapshot__/test_messages/TestSyncParse/c11eefc7-fff0-4466-8453-42eef73b8876.json",
        part: 0,
        id: "msg_01Egs18hRzhru3uGon3qesbA",
        stop: StopReason::EndTurn,
        usage: (249, 26, Some(0), None),
        text: (
            59,
            "{\"product_name\": \"Green Tea\", \"price\": 5",
            "5.50, \"quantity\": 2}",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/092be1de-d3f8-4c22-a4ea-a7ad54689836.json",
        part: 0,
        id: "msg_01LAwUK3MeXUxoNW5ZgnPpGy",
        stop: StopReason::ToolCalls,
        usage: (3182, 237, Some(0), None),
        text: (
            70,
            "I'll check the weather for all three cit",
            "sius simultaneously.",
        ),
        calls: &[(
            "toolu_011MDRpaZRMRRjtFkJizD6nS",
            "weather.get",
            "{\"location\":\"San Francisco, CA\",\"units\":\"c\"}",
        )],
        kept: &["server_tool_use"],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/092be1de-d3f8-4c22-a4ea-a7ad54689836.json",
        part: 1,
        id: "msg_0147NV7w8PyZ6bSUsNY79cYj",
        stop: StopReason::ToolCalls,
        usage: (0, 0, None, None),
        text: (0, "", ""),
        calls: &[(
            "toolu_01RXQDRjwv5Un7n98xFahjo8",
            "weather.get",
            "{\"location\":\"New York, NY\",\"units\":\"c\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/10e53c1d-51be-4c64-b5bf-99adb3fa4719.json",
        part: 0,
        id: "msg_01RMQBcKf2dxTq6qfi31BBTz",
        stop: StopReason::ToolCalls,
        usage: (656, 74, Some(0), None),
        text: (0, "", ""),
        calls: &[(
            "toolu_01A9HHF5Ezy3oBrKmSgfASm9",
            "weather.get",
            "{\"location\":\"San Francisco, CA\",\"units\":\"f\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/10e53c1d-51be-4c64-b5bf-99adb3fa4719.json",
        part: 1,
        id: "msg_01GJyhkguJrrqMbZNzEybYFL",
        stop: StopReason::EndTurn,
        usage: (760, 63, Some(0), None),
        text: (
            278,
            "I apologize, but I'm getting an error wh",
            " different location?",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/32da0815-2270-4d29-87be-3b5b63ab42e2.json",
        part: 0,
        id: "msg_011Y4sbfjCq85yJrUA13Dxb3",
        stop: StopReason::EndTurn,
        usage: (11306, 163, Some(0), None),
        text: (
            291,
            "Today in San Francisco, there are shower",
            " with a low of 45°F.",
        ),
        calls: &[],
        kept: &["server_tool_use", "web_search_tool_result"],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/555fb399-a54c-455b-9ac5-2c9673f18e12.json",
        part: 0,
        id: "msg_01AusY9WEbCaj3N7Tv5J4YjH",
        stop: StopReason::ToolCalls,
        usage: (656, 74, Some(0), None),
        text: (0, "", ""),
        calls: &[(
            "toolu_018acGYLtfR52q9yDbWaEdQZ",
            "weather.get",
            "{\"location\":\"San Francisco, CA\",\"units\":\"f\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/555fb399-a54c-455b-9ac5-2c9673f18e12.json",
        part: 1,
        id: "msg_016HxyUMAncysqX7dn1kWNRx",
        stop: StopReason::EndTurn,
        usage: (770, 38, Some(0), None),
        text: (
            118,
            "The weather in San Francisco, CA is curr",
            "'s a nice sunny day!",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/771c64ff-a0af-4cd9-8080-a5a539da7cb9.json",
        part: 0,
        id: "msg_01R4hRKPvDP3eyHsaAgs1gBn",
        stop: StopReason::ToolCalls,
        usage: (656, 74, Some(0), None),
        text: (0, "", ""),
        calls: &[(
            "toolu_01TJoxvFknVdnV9XpWFPaRmY",
            "weather.get",
            "{\"location\":\"San Francisco, CA\",\"units\":\"f\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/771c64ff-a0af-4cd9-8080-a5a539da7cb9.json",
        part: 1,
        id: "msg_0158JyopQTFaomteeJoDpS5q",
        stop: StopReason::EndTurn,
        usage: (770, 27, Some(0), None),
        text: (
            83,
            "The weather in San Francisco, CA is curr",
            "**. It's a nice day!",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/956fa2fe-8752-4f7c-8f9a-33735e62b898.json",
        part: 0,
        id: "msg_01JQ78eECNHtwV1L2uGKLHAf",
        stop: StopReason::ToolCalls,
        usage: (617, 995, Some(0), None),
        text: (
            3774,
            "# The Wonderful World of Companion Anima",
            "ghout human history.",
        ),
        calls: &[(
            "toolu_01KiHQYXfTgCmpgRfmqgvUL2",
            "submit_analysis",
            "{\"summary\":\"This comprehensive essay explores three popular companion animals: dogs, cats, and birds. Dogs are highlighted as loyal, social animals requiring significant commitment but offering unwavering devotion, protection, and the ability to participate actively in human activities. They come in various breeds and can serve as service animals due to their intelligence. Cats are presented as independent, low-maintenance companions perfect for apartment living and busy lifestyles. They are self-sufficient, naturally clean, and provide affection while reducing stress through their calming presence. Birds are described as colorful, intelligent pets ranging from small budgies to large parrots, capable of mimicking speech and learning tricks. They require specialized care, thrive on social interaction, and can live for many years, becoming long-term family members. The essay concludes that each animal offers unique benefits, and the choice depends on individual lifestyle, living situation, and personal preferences, with all three having proven themselves as beloved companions throughout human history.\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/956fa2fe-8752-4f7c-8f9a-33735e62b898.json",
        part: 1,
        id: "msg_019bVBTjMoXMbUV6LJyiDAmM",
        stop: StopReason::EndTurn,
        usage: (324, 486, Some(0), None),
        text: (
            2170,
            "<summary>\n## Task Overview\nThe user requ",
            "irements.\n</summary>",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/a8ac789b-f856-48cd-9ff3-d5f36799e432.json",
        part: 0,
        id: "msg_01M4x4hiFuUdHzu44ih9eCGh",
        stop: StopReason::ToolCalls,
        usage: (597, 71, Some(0), None),
        text: (0, "", ""),
        calls: &[(
            "toolu_013DU6hV4C1M8dJ32ybQFAFi",
            "weather.get",
            "{\"location\":\"SF\",\"units\":\"c\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/a8ac789b-f856-48cd-9ff3-d5f36799e432.json",
        part: 1,
        id: "msg_01LzoWDaDa7jiMvVbBiguxJy",
        stop: StopReason::EndTurn,
        usage: (705, 25, Some(0), None),
        text: (
            63,
            "The weather in SF is currently **20°C** ",
            "68°F) and **Sunny**!",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/b38bbf6c-9a76-40ca-b09d-7a3911776e0f.json",
        part: 0,
        id: "msg_018yE33RyaCdsMnr8kGYUQ5Y",
        stop: StopReason::ToolCalls,
        usage: (656, 74, Some(0), None),
        text: (0, "", ""),
        calls: &[(
            "toolu_011bpynHqFZ9P4u5rSaXsTJQ",
            "weather.get",
            "{\"location\":\"San Francisco, CA\",\"units\":\"f\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/b38bbf6c-9a76-40ca-b09d-7a3911776e0f.json",
        part: 1,
        id: "msg_01BZsMQjer9AFLgmdRKJ8NcA",
        stop: StopReason::EndTurn,
        usage: (770, 25, Some(0), None),
        text: (
            88,
            "The weather in San Francisco, CA is curr",
            "erature of **68°F**.",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/e075a6c2-de4d-4125-9709-f0e178058190.json",
        part: 0,
        id: "msg_01UBZt9MX63Tk3v1gKvgxk3A",
        stop: StopReason::ToolCalls,
        usage: (701, 93, Some(0), None),
        text: (
            86,
            "I'll get the weather for each of those c",
            "cking San Francisco.",
        ),
        calls: &[(
            "toolu_01LRanfq6DmHn1yDTB4d1SAh",
            "weather.get",
            "{\"location\":\"San Francisco, CA\",\"units\":\"f\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/e075a6c2-de4d-4125-9709-f0e178058190.json",
        part: 1,
        id: "msg_01BAceCxj9VxXR9GhBedwTm2",
        stop: StopReason::ToolCalls,
        usage: (834, 81, Some(0), None),
        text: (26, "Now let me check New York.", ""),
        calls: &[(
            "toolu_01RWdcDdE8NAFDgZ8F9Xk2K7",
            "weather.get",
            "{\"location\":\"New York, NY\",\"units\":\"f\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/TestSyncRunTools/f59a9391-643b-422c-96dc-1f28bc7ea4d7.json",
        part: 0,
        id: "msg_01QCEBW49MBPHFuFwMDoFtPP",
        stop: StopReason::ToolCalls,
        usage: (659, 74, Some(0), None),
        text: (0, "", ""),
        calls: &[(
            "toolu_01GHndag5wQmbzNihYmV2UBj",
            "weather.get",
            "{\"location\":\"San Francisco, CA\",\"units\":\"c\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/__module__/64fe7974-681a-4023-9848-b32ba39c8664.json",
        part: 0,
        id: "msg_01YPmXusvsWu64vxcNZf1uJq",
        stop: StopReason::ToolCalls,
        usage: (656, 74, Some(0), None),
        text: (0, "", ""),
        calls: &[(
            "toolu_016xm9m1i3NcGW5xFMMZJTqY",
            "weather.get",
            "{\"location\":\"San Francisco, CA\",\"units\":\"f\"}",
        )],
        kept: &[],
        replay: true,
    },
    Row {
        file: "anthropic-sdk-python/tests/lib/tools/__inline_snapshot__/test_runners/__module__/64fe7974-681a-4023-9848-b32ba39c8664.json",
        part: 1,
        id: "msg_01C1RRE9d8CxcudwbihWU9di",
        stop: StopReason::EndTurn,
        usage: (770, 26, Some(0), None),
        text: (
            87,
            "The weather in San Francisco, CA is curr",
            "Great day out there!",
        ),
        calls: &[],
        kept: &[],
        replay: false,
    },
];

/// A recorded response: the stream's events (SSE frames, or JSON lines as unnamed events), or
/// a whole body.
enum Recording {
    Stream { events: Vec<Sse>, sse: Vec<u8> },
    Whole(Vec<u8>),
    Error { status: u64, body: Vec<u8> },
}

/// Every recording of every file, as `(file, part, recording)`.
fn recordings(dir: &Path) -> Vec<(String, usize, Recording)> {
    let mut out = Vec::new();
    let sdk = "anthropic-sdk-python/tests";
    let vercel = "vercel-ai/packages/anthropic/src/__fixtures__";
    for file in files(dir) {
        let bytes = read(dir, &file);
        if file.ends_with(".chunks.txt") {
            let text = String::from_utf8(bytes).unwrap();
            for (part, events) in split_messages(json_lines(&text)).into_iter().enumerate() {
                let sse = render_sse(&events);
                out.push((file.clone(), part, Recording::Stream { events, sse }));
            }
        } else if file.ends_with(".txt") || file.ends_with(".sse") {
            let bytes = ended(bytes);
            let events = frame_sse(&bytes, &[]);
            out.push((file, 0, Recording::Stream { events, sse: bytes }));
        } else if file.starts_with(vercel) {
            out.push((file, 0, Recording::Whole(bytes)));
        } else {
            assert!(file.starts_with(sdk), "{file}");
            let cassette: Vec<Value> = serde_json::from_slice(&bytes).unwrap();
            for (part, interaction) in cassette.iter().enumerate() {
                let response = &interaction["response"];
                let status = response["status_code"].as_u64().unwrap();
                let body = &response["body"];
                let recording = match body.as_str() {
                    Some(sse) => {
                        let sse = ended(sse.as_bytes().to_vec());
                        Recording::Stream {
                            events: frame_sse(&sse, &[]),
                            sse,
                        }
                    }
                    None if status >= 400 => Recording::Error {
                        status,
                        body: serde_json::to_vec(body).unwrap(),
                    },
                    None => Recording::Whole(serde_json::to_vec(body).unwrap()),
                };
                out.push((file.clone(), part, recording));
            }
        }
    }
    out
}

/// Some recordings lost the blank line that ends the last event when they were saved; an SSE
/// parser rightly drops an unended event, so it is put back (as the wire had it).
fn ended(mut bytes: Vec<u8>) -> Vec<u8> {
    while bytes.last().is_some_and(|b| b.is_ascii_whitespace()) {
        bytes.pop();
    }
    bytes.extend_from_slice(b"\n\n");
    bytes
}

/// The Anthropic data files (no licences, no sources).
fn files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for root in [
        "anthropic-sdk-python/tests",
        "vercel-ai/packages/anthropic/src/__fixtures__",
    ] {
        walk(dir, &dir.join(root), &mut found);
    }
    found.sort();
    found
}

fn walk(base: &Path, at: &Path, found: &mut Vec<String>) {
    for entry in std::fs::read_dir(at).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(base, &path, found);
        } else if ["txt", "sse", "json"]
            .iter()
            .any(|ext| path.extension().is_some_and(|e| e == *ext))
        {
            let relative = path.strip_prefix(base).unwrap();
            found.push(relative.to_string_lossy().into_owned());
        }
    }
}

/// A `*.chunks.txt` may hold several responses one after another: one stream per
/// `message_stop`.
fn split_messages(events: Vec<Sse>) -> Vec<Vec<Sse>> {
    let mut streams = vec![Vec::new()];
    for event in events {
        let stop = event.data.contains(r#""type":"message_stop""#);
        streams.last_mut().unwrap().push(event);
        if stop {
            streams.push(Vec::new());
        }
    }
    streams.retain(|stream| !stream.is_empty());
    streams
}

/// Events as the bytes an HTTP body would carry.
fn render_sse(events: &[Sse]) -> Vec<u8> {
    let mut out = String::new();
    for event in events {
        out.push_str("data: ");
        out.push_str(&event.data);
        out.push_str("\n\n");
    }
    out.into_bytes()
}

/// The tools the recordings call, with `get_weather` registered under another name.
fn tools() -> Arc<ToolTable> {
    Arc::new(
        ToolTable::new(vec![
            PreparedTool::new("weather.get", json!({"type": "object"}))
                .with_wire_name("get_weather"),
        ])
        .unwrap(),
    )
}

fn fold(events: &[ProviderEvent]) -> ProviderResponse {
    let mut fold = ResponseFold::new();
    for event in events {
        fold.push(event.clone());
    }
    fold.finish()
}

/// Decodes a recording: the response, and for a stream the events too.
fn decode_recording(
    recording: &Recording,
    tools: &Arc<ToolTable>,
) -> (
    Option<Vec<ProviderEvent>>,
    Result<ProviderResponse, prism::ProviderError>,
) {
    match recording {
        Recording::Stream { events, .. } => {
            let (out, result) = decode(&Anthropic, tools, events);
            (Some(out), result)
        }
        Recording::Whole(body) | Recording::Error { body, .. } => {
            (None, Anthropic.decode_response(body, tools))
        }
    }
}

fn check(row: &Row, response: &ProviderResponse) {
    let at = format!("{} #{}", row.file, row.part);
    assert_eq!(response.id.as_deref(), Some(row.id), "{at}");
    assert_eq!(response.stop_reason, row.stop, "{at}");
    let usage = response.usage.unwrap_or_else(|| panic!("{at}: no usage"));
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cached_input_tokens,
            usage.reasoning_tokens
        ),
        row.usage,
        "{at}"
    );
    let (length, head, tail) = row.text;
    assert_eq!(response.text.len(), length, "{at}");
    assert!(
        response.text.starts_with(head) && response.text.ends_with(tail),
        "{at}"
    );
    assert_eq!(
        response.tool_calls.len(),
        row.calls.len(),
        "{at}: {:?}",
        response.tool_calls
    );
    for (call, (id, name, arguments)) in response.tool_calls.iter().zip(row.calls) {
        assert_eq!((call.id.as_str(), call.name.as_str()), (*id, *name), "{at}");
        if *arguments == "!" {
            let error = call
                .arguments_error
                .as_deref()
                .unwrap_or_else(|| panic!("{at}: no error"));
            assert!(error.contains("EOF while parsing"), "{at}: {error}");
        } else {
            assert_eq!(call.arguments_error, None, "{at}");
            assert_eq!(
                call.arguments,
                serde_json::from_str::<Value>(arguments).unwrap(),
                "{at}"
            );
        }
    }
    match &response.replay {
        None => assert!(!row.replay && row.kept.is_empty(), "{at}: no replay state"),
        Some(state) => {
            assert!(row.replay, "{at}: unexpected replay state {state:?}");
            assert_eq!(state.format, "anthropic");
            let entries = state.data["content"].as_array().unwrap();
            let kept: Vec<&str> = entries
                .iter()
                .map(|entry| entry["type"].as_str().unwrap())
                .filter(|kind| !matches!(*kind, "text" | "tool_use"))
                .collect();
            assert_eq!(kept, row.kept, "{at}");
            let referenced: Vec<&str> = entries
                .iter()
                .filter(|entry| entry["type"] == "tool_use")
                .map(|entry| entry["id"].as_str().unwrap())
                .collect();
            let ids: Vec<&str> = row.calls.iter().map(|(id, _, _)| *id).collect();
            assert_eq!(
                referenced, ids,
                "{at}: every call, and only calls, by reference"
            );
            assert!(
                entries
                    .iter()
                    .all(|entry| entry.get("text").is_none() || entry["type"] != "text"),
                "{at}: text is kept on the message only"
            );
        }
    }
}

#[test]
fn every_recorded_response_decodes_to_what_the_recording_says() {
    let Some(dir) = payloads() else { return };
    let tools = tools();
    let mut checked = 0;
    for (file, part, recording) in recordings(&dir) {
        let Some(row) = ROWS.iter().find(|row| row.file == file && row.part == part) else {
            continue;
        };
        let (events, result) = decode_recording(&recording, &tools);
        let response = result.unwrap_or_else(|error| panic!("{file} #{part}: {error}"));
        check(row, &response);
        if let Some(events) = events {
            assert_eq!(
                fold(&events),
                response,
                "{file} #{part}: the response is the fold of its events"
            );
            let started = events
                .iter()
                .filter(|event| matches!(event, ProviderEvent::ResponseStarted { .. }))
                .count();
            assert_eq!(started, 1, "{file} #{part}");
        }
        checked += 1;
    }
    assert_eq!(checked, ROWS.len(), "every row was found in the data");
}

#[test]
fn every_data_file_has_a_row_or_a_test_of_its_own() {
    let Some(dir) = payloads() else { return };
    let own_tests = ["spliced-message-start.chunks.txt"];
    for file in files(&dir) {
        let covered = ROWS.iter().any(|row| row.file == file)
            || own_tests.iter().any(|name| file.ends_with(name));
        assert!(covered, "{file} is not checked");
    }
    assert_eq!(
        files(&dir).len(),
        53,
        "the data set changed: look at the new files"
    );
}

#[test]
fn error_bodies_map_to_kinds_with_the_providers_message() {
    let Some(dir) = payloads() else { return };
    let tools = tools();
    let mut seen = Vec::new();
    for (file, part, recording) in recordings(&dir) {
        let Recording::Error { status, body } = &recording else {
            continue;
        };
        let error = Anthropic.decode_response(body, &tools).unwrap_err();
        let expected = match status {
            429 => (
                ProviderErrorKind::RateLimited,
                "rate_limit_error: This request would exceed your organization's rate limit",
            ),
            400 => (
                ProviderErrorKind::InvalidRequest,
                "invalid_request_error: messages.0.content.1: unexpected `tool_use_id` found in `tool_result` blocks",
            ),
            other => panic!("{file}: status {other}"),
        };
        assert_eq!(error.kind(), expected.0, "{file} #{part}");
        assert!(
            error.message().starts_with(expected.1),
            "{file} #{part}: {}",
            error.message()
        );
        seen.push(*status);
    }
    seen.sort();
    assert_eq!(seen, [400, 429, 429, 429, 429]);
}

#[test]
fn an_error_event_ends_the_stream_with_its_kind_and_what_was_complete() {
    let Some(dir) = payloads() else { return };
    let bytes = read(
        &dir,
        "anthropic-sdk-python/tests/lib/streaming/fixtures/tool_use_response.txt",
    );
    let mut events = frame_sse(&bytes, &[]);
    let first_stop = events
        .iter()
        .position(|e| e.data.contains("content_block_stop"))
        .unwrap();
    for (kind, expected) in [
        ("overloaded_error", ProviderErrorKind::Overloaded),
        ("rate_limit_error", ProviderErrorKind::RateLimited),
        ("api_error", ProviderErrorKind::Overloaded),
        ("authentication_error", ProviderErrorKind::Authentication),
        ("invalid_request_error", ProviderErrorKind::InvalidRequest),
        ("billing_error", ProviderErrorKind::Other),
    ] {
        let mut cut = events[..=first_stop].to_vec();
        cut.push(Sse {
            event: Some("error".into()),
            data: format!(
                r#"{{"type": "error", "error": {{"type": "{kind}", "message": "Try later"}}}}"#
            ),
        });
        let (_, result) = decode(&Anthropic, &tools(), &cut);
        let error = result.unwrap_err();
        assert_eq!(error.kind(), expected, "{kind}");
        assert_eq!(error.message(), format!("{kind}: Try later"));
        let partial = error.partial().unwrap();
        assert_eq!(
            partial.text,
            "I'll check the current weather in Paris for you."
        );
        assert!(partial.tool_calls.is_empty());
    }
    events.clear();
}

#[test]
fn a_repeated_message_start_is_ignored_and_a_spliced_one_fails_the_stream() {
    let Some(dir) = payloads() else { return };
    let fixtures = "vercel-ai/packages/anthropic/src/__fixtures__";
    let text = String::from_utf8(read(
        &dir,
        &format!("{fixtures}/duplicate-message-start.chunks.txt"),
    ))
    .unwrap();
    let (events, result) = decode(&Anthropic, &tools(), &json_lines(&text));
    let response = result.unwrap();
    assert_eq!(response.text, "Hello, World!");
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, ProviderEvent::TextDelta { .. }))
            .count(),
        1
    );

    let text = String::from_utf8(read(
        &dir,
        &format!("{fixtures}/spliced-message-start.chunks.txt"),
    ))
    .unwrap();
    let (events, result) = decode(&Anthropic, &tools(), &json_lines(&text));
    let error = result.unwrap_err();
    assert_eq!(error.kind(), ProviderErrorKind::InvalidResponse);
    assert_eq!(
        error.message(),
        "message `msg_second` started while message `msg_first` was still open"
    );
    let partial = error.partial().unwrap();
    assert_eq!(partial.id.as_deref(), Some("msg_first"));
    assert!(
        partial.tool_calls.is_empty(),
        "the first message's call never completed"
    );
    assert_eq!(
        events,
        [
            ProviderEvent::ResponseStarted {
                id: Some("msg_first".into()),
                model: Some("claude-3-haiku-20240307".into())
            },
            ProviderEvent::Usage {
                usage: prism::run::Usage {
                    input_tokens: 17,
                    output_tokens: 1,
                    ..Default::default()
                }
            },
            ProviderEvent::ToolCallStarted {
                index: 0,
                id: "toolu_first".into(),
                name: "test-tool".into()
            },
            ProviderEvent::ToolCallArgumentsDelta {
                index: 0,
                delta: r#"{"value":"Spark"#.into()
            },
        ]
    );
}

/// A stream recording: its name, its SSE bytes and its events.
type Stream = (String, Vec<u8>, Vec<Sse>);

/// Every stream recording as SSE bytes, with its events.
fn streams(dir: &Path) -> Vec<Stream> {
    recordings(dir)
        .into_iter()
        .filter_map(|(file, part, recording)| match recording {
            Recording::Stream { events, sse } => Some((format!("{file} #{part}"), sse, events)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_stream_that_ends_early_is_truncated_and_keeps_only_complete_calls() {
    let Some(dir) = payloads() else { return };
    let tools = tools();
    for (name, _, events) in streams(&dir) {
        let (_, whole) = decode(&Anthropic, &tools, &events);
        let Ok(whole) = whole else { continue };
        let end = events
            .iter()
            .position(|e| e.data.contains("message_stop"))
            .unwrap();
        for cut in 0..end {
            let (emitted, result) = decode(&Anthropic, &tools, &events[..cut]);
            let error = result.unwrap_err();
            assert_eq!(
                error.kind(),
                ProviderErrorKind::TruncatedStream,
                "{name} cut at {cut}"
            );
            let Some(partial) = error.partial() else {
                assert!(
                    emitted.is_empty(),
                    "{name}: nothing started, nothing emitted"
                );
                continue;
            };
            assert_eq!(*partial, fold(&emitted), "{name} cut at {cut}");
            assert!(whole.text.starts_with(&partial.text), "{name} cut at {cut}");
            for call in &partial.tool_calls {
                assert!(
                    whole.tool_calls.contains(call),
                    "{name} cut at {cut}: {call:?} is not complete"
                );
            }
        }
    }
}

mod cut_anywhere {
    use super::*;
    use proptest::prelude::*;
    use std::sync::OnceLock;

    fn all() -> &'static [Stream] {
        static STREAMS: OnceLock<Vec<Stream>> = OnceLock::new();
        STREAMS.get_or_init(|| payloads().map(|dir| streams(&dir)).unwrap_or_default())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        #[test]
        fn a_stream_cut_at_any_bytes_decodes_the_same(
            pick in any::<prop::sample::Index>(),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..24),
        ) {
            let streams = all();
            if streams.is_empty() {
                return Ok(());
            }
            let (name, sse, events) = &streams[pick.index(streams.len())];
            let mut positions: Vec<usize> = cuts.iter().map(|cut| cut.index(sse.len() + 1)).collect();
            positions.sort_unstable();
            let framed = frame_sse(sse, &positions);
            prop_assert_eq!(&framed.iter().map(|e| &e.data).collect::<Vec<_>>(), &events.iter().map(|e| &e.data).collect::<Vec<_>>(), "{}", name);
            let tools = tools();
            let (expected_events, expected) = decode(&Anthropic, &tools, events);
            let (got_events, got) = decode(&Anthropic, &tools, &framed);
            prop_assert_eq!(got_events, expected_events, "{}", name);
            prop_assert_eq!(got, expected, "{}", name);
        }
    }
}
