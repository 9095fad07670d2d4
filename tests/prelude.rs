//! `use prism::prelude::*;` alone makes the methods of the traits a host calls on the values it
//! holds callable: stores, ledgers, providers, wire formats, clocks.

use std::sync::Arc;
use std::time::Duration;

use prism::dispatch::SystemClock;
use prism::effects::{ClaimRequest, EffectKey, EffectPolicy, InMemoryEffectStore};
use prism::prelude::*;
use prism::provider::openai_chat::OpenAiChat;
use prism::provider::wire::ToolTable;
use serde_json::json;

#[tokio::test]
async fn the_prelude_brings_the_methods_hosts_call() {
    let store = InMemoryEffectStore::new();
    let key = EffectKey::new("pay", &EffectPolicy::default(), &json!({"cents": 100}));
    let lease = Duration::from_secs(60);
    store
        .claim(ClaimRequest {
            key: &key,
            owner: "worker-1",
            now: 0,
            lease,
        })
        .await
        .unwrap();
    // EffectRecovery: the host's side of "say unknown".
    let unknown = store.unknown_effects(60_000, 10).await.unwrap();
    assert_eq!(unknown[0].key, key);

    // WireFormat and StreamDecoder: a host wrapping a format in its own provider.
    let format = OpenAiChat::new();
    assert_eq!(format.name(), "openai-chat");
    let decoder = format.stream_decoder(Arc::new(ToolTable::default()));
    assert!(
        decoder.finish(&mut Vec::new()).is_err(),
        "an empty stream is no answer"
    );

    // Clock.
    assert!(SystemClock.now_millis() > 0);
}
