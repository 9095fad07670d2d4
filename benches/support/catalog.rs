//! A synthetic catalog of tools for the search benchmarks: deterministic, sized like a large
//! real host (snake_case names, two sentences of description, three documented parameters
//! each). Words are drawn from a vocabulary of about 14,000 words with Zipf's law (the word of
//! rank r has weight 1/r), as in natural text: a few words are everywhere, most are rare.

use prism::ToolDefinition;
use serde_json::{Value, json};

const SYLLABLES: [&str; 24] = [
    "ka", "lo", "mer", "tis", "vun", "dra", "pel", "son", "qui", "bar", "nex", "tor", "fal", "rim",
    "gus", "hel", "cor", "ymp", "wes", "ant", "obi", "lux", "zen", "dor",
];

const COMMON: [&str; 32] = [
    "search",
    "create",
    "update",
    "delete",
    "list",
    "send",
    "read",
    "write",
    "file",
    "email",
    "calendar",
    "event",
    "weather",
    "stock",
    "price",
    "user",
    "account",
    "report",
    "image",
    "document",
    "message",
    "invoice",
    "order",
    "customer",
    "ticket",
    "project",
    "task",
    "note",
    "map",
    "route",
    "payment",
    "translate",
];

/// A small deterministic generator (a linear congruential step), so runs compare exactly.
struct Sequence {
    state: u64,
    vocabulary: Vec<String>,
    /// Cumulative Zipf weights of `vocabulary`, for sampling by binary search.
    cumulative: Vec<f64>,
}

impl Sequence {
    fn new(seed: u64) -> Self {
        let mut vocabulary: Vec<String> = COMMON.iter().map(|word| (*word).to_owned()).collect();
        for a in SYLLABLES {
            for b in SYLLABLES {
                vocabulary.push(format!("{a}{b}"));
                for c in SYLLABLES {
                    vocabulary.push(format!("{a}{b}{c}"));
                }
            }
        }
        let mut total = 0.0;
        let cumulative = (1..=vocabulary.len())
            .map(|rank| {
                total += 1.0 / rank as f64;
                total
            })
            .collect();
        Self {
            state: seed,
            vocabulary,
            cumulative,
        }
    }

    fn next(&mut self) -> u64 {
        self.state = self
            .state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.state >> 11
    }

    fn word(&mut self) -> &str {
        let total = self.cumulative[self.cumulative.len() - 1];
        let target = (self.next() as f64 / (1u64 << 53) as f64) * total;
        let rank = self.cumulative.partition_point(|&sum| sum < target);
        &self.vocabulary[rank.min(self.vocabulary.len() - 1)]
    }

    fn sentence(&mut self, words: usize) -> String {
        (0..words)
            .map(|_| self.word().to_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// `count` tools with distinct names.
pub fn tools(count: usize) -> Vec<ToolDefinition> {
    let mut sequence = Sequence::new(0x5eed);
    (0..count)
        .map(|i| {
            let name = format!("{}_{i}", sequence.sentence(2).replace(' ', "_"));
            let description = format!("{}. {}.", sequence.sentence(12), sequence.sentence(10));
            let mut properties = serde_json::Map::new();
            for _ in 0..3 {
                properties.insert(
                    sequence.word().to_owned(),
                    json!({"type": "string", "description": sequence.sentence(6)}),
                );
            }
            ToolDefinition::builder(name)
                .description(description)
                .parameters(json!({"type": "object", "properties": properties}))
                .run_sync(|_, _| Ok(Value::Null))
        })
        .collect()
}

/// A 12-word query mixing common and rare words.
pub fn twelve_word_query() -> String {
    let mut sequence = Sequence::new(0xfeed);
    sequence.sentence(12)
}
