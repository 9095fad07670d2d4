//! The wire-format tests' SSE framing gives the same events wherever the bytes are cut.

mod provider_support;

use provider_support::{Sse, frame_sse, json_lines};

#[test]
fn framing_does_not_depend_on_where_the_bytes_are_cut() {
    let bytes =
        b"event: message_start\ndata: {\"a\":1}\n\ndata: {\"b\":\n data2\n\ndata: [DONE]\n\n";
    let whole = frame_sse(bytes, &[]);
    assert_eq!(
        whole[0],
        Sse {
            event: Some("message_start".into()),
            data: r#"{"a":1}"#.into()
        }
    );
    assert_eq!(whole.len(), 3);
    for cut in 0..bytes.len() {
        assert_eq!(frame_sse(bytes, &[cut]), whole, "cut at {cut}");
    }
    assert_eq!(json_lines("{\"x\":1}\n\n{\"y\":2}\n").len(), 2);
}
