//! Guardrails: content checks on a call's input (after middleware, before lookup) and on a tool's
//! raw output (before redaction, events, the ledger and the transcript): its value, then the
//! text of the content blocks it returned beside it.
//!
//! A guardrail either lets the call pass, blocks it (a blocked `guardrail_blocked` result the
//! model sees), or trips a wire (the dispatcher returns `Err(Tripwire)`, carrying the blocked
//! result still owed to the call, and the run is expected to stop).
//!
//! Most hosts write [`RulePack`]s: named rules whose refusals name the rule, as in
//! `Blocked by guardrail rule pack:pii/email: contains an e-mail address`. Messages are redacted
//! and then cut to 200 bytes at a character boundary.

use std::fmt;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder};
use serde_json::Value;

use crate::call::ContentBlock;

/// What a guardrail decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GuardrailDecision {
    /// Let the call or result through.
    Pass,
    /// Refuse it; the model sees a blocked result.
    Block(GuardrailHit),
    /// Refuse it and stop the run.
    Tripwire(GuardrailHit),
}

/// Which rule refused, and why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GuardrailHit {
    /// `(pack, rule)` for rule packs; `None` for hand-written guardrails.
    pub rule: Option<(Arc<str>, Arc<str>)>,
    /// An optional explanation appended to a rule pack's message
    /// (`Blocked by guardrail rule pack:<pack>/<rule>: <reason>`). Without a `rule` it is not
    /// shown: a hand-written guardrail's refusal always reads `Tool call blocked by guardrail`
    /// (or `Tool result blocked by guardrail`).
    pub reason: Option<String>,
}

impl GuardrailDecision {
    /// A block from a hand-written guardrail.
    pub fn block() -> Self {
        Self::Block(GuardrailHit::default())
    }

    /// A tripwire from a hand-written guardrail.
    pub fn tripwire() -> Self {
        Self::Tripwire(GuardrailHit::default())
    }
}

impl GuardrailHit {
    /// The message the model and the events see, before redaction and bounding.
    pub(crate) fn message(&self, output: bool) -> String {
        match (&self.rule, &self.reason) {
            (Some((pack, rule)), Some(reason)) => {
                format!("Blocked by guardrail rule pack:{pack}/{rule}: {reason}")
            }
            (Some((pack, rule)), None) => format!("Blocked by guardrail rule pack:{pack}/{rule}"),
            (None, _) if output => "Tool result blocked by guardrail".to_owned(),
            (None, _) => "Tool call blocked by guardrail".to_owned(),
        }
    }
}

/// A content check on calls and results.
pub trait Guardrail: Send + Sync + 'static {
    /// Checks a call after middleware, before lookup.
    fn check_input(&self, _tool: &str, _arguments: &Value) -> GuardrailDecision {
        GuardrailDecision::Pass
    }

    /// Checks a tool's raw, successful output.
    fn check_output(&self, _tool: &str, _output: &Value) -> GuardrailDecision {
        GuardrailDecision::Pass
    }

    /// Checks the content blocks a tool returned beside its value (asked only when there are
    /// some, after [`check_output`](Self::check_output) passed the value).
    ///
    /// By default each text in them goes through [`check_output`](Self::check_output) as a JSON
    /// string, so a rule on output text also sees it: a text block's text, an embedded
    /// resource's text, and a resource link's URI, name and description. Binary data (base64
    /// images, audio, blobs) is not given to guardrails; override this method to look at it.
    fn check_output_content(&self, tool: &str, content: &[ContentBlock]) -> GuardrailDecision {
        for text in content_texts(content) {
            match self.check_output(tool, &Value::String(text.to_owned())) {
                GuardrailDecision::Pass => {}
                refused => return refused,
            }
        }
        GuardrailDecision::Pass
    }
}

/// The texts of content blocks a guardrail sees, in order.
fn content_texts(content: &[ContentBlock]) -> impl Iterator<Item = &str> {
    content
        .iter()
        .flat_map(|block| block.texts().into_iter().flatten())
}

/// What a matching rule does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleAction {
    /// Block the call or result.
    Block,
    /// Block and stop the run.
    Tripwire,
}

type Predicate = Arc<dyn Fn(&str, &Value) -> bool + Send + Sync>;

#[derive(Clone)]
enum RuleCheck {
    Input(Predicate),
    Output(Predicate),
}

/// One named rule of a [`RulePack`].
#[derive(Clone)]
pub struct GuardrailRule {
    name: Arc<str>,
    reason: Option<String>,
    action: RuleAction,
    check: RuleCheck,
}

impl GuardrailRule {
    /// A rule on calls: `matches(tool, arguments)` returning true refuses the call.
    pub fn on_input<F>(name: impl Into<Arc<str>>, matches: F) -> Self
    where
        F: Fn(&str, &Value) -> bool + Send + Sync + 'static,
    {
        Self::new(name, RuleCheck::Input(Arc::new(matches)))
    }

    /// A rule on results: `matches(tool, output)` returning true refuses the result.
    pub fn on_output<F>(name: impl Into<Arc<str>>, matches: F) -> Self
    where
        F: Fn(&str, &Value) -> bool + Send + Sync + 'static,
    {
        Self::new(name, RuleCheck::Output(Arc::new(matches)))
    }

    /// A rule refusing calls whose arguments contain any of `needles` in a string (ASCII
    /// case-insensitive), searched with one automaton over every string in the arguments.
    pub fn input_contains<I, S>(name: impl Into<Arc<str>>, needles: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        let matcher = StringMatcher::new(needles);
        Self::on_input(name, move |_, arguments| matcher.matches(arguments))
    }

    /// A rule refusing results that contain any of `needles` in a string (ASCII
    /// case-insensitive).
    pub fn output_contains<I, S>(name: impl Into<Arc<str>>, needles: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        let matcher = StringMatcher::new(needles);
        Self::on_output(name, move |_, output| matcher.matches(output))
    }

    /// A rule refusing calls to any of these tools.
    pub fn deny_tools<I, S>(name: impl Into<Arc<str>>, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let tools: std::collections::HashSet<String> = tools.into_iter().map(Into::into).collect();
        Self::on_input(name, move |tool, _| tools.contains(tool))
    }

    /// Appends an explanation to the refusal message.
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// Makes the rule stop the run rather than only block the call.
    pub fn tripwire(mut self) -> Self {
        self.action = RuleAction::Tripwire;
        self
    }

    fn new(name: impl Into<Arc<str>>, check: RuleCheck) -> Self {
        Self {
            name: name.into(),
            reason: None,
            action: RuleAction::Block,
            check,
        }
    }
}

impl fmt::Debug for GuardrailRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GuardrailRule")
            .field("name", &self.name)
            .field("reason", &self.reason)
            .field("action", &self.action)
            .field(
                "stage",
                &match self.check {
                    RuleCheck::Input(_) => "input",
                    RuleCheck::Output(_) => "output",
                },
            )
            .finish()
    }
}

/// A named set of rules. The first matching rule decides.
///
/// ```
/// use prism::guard::{Guardrail, GuardrailDecision, GuardrailRule, RulePack};
/// use serde_json::json;
///
/// let pack = RulePack::new("shell")
///     .rule(GuardrailRule::input_contains("rm", ["rm -rf"]).with_reason("recursive delete"));
/// let decision = pack.check_input("run", &json!({"cmd": "RM -RF /"}));
/// assert!(matches!(decision, GuardrailDecision::Block(_)));
/// ```
#[derive(Clone, Debug)]
pub struct RulePack {
    name: Arc<str>,
    rules: Vec<GuardrailRule>,
}

impl RulePack {
    /// An empty pack.
    pub fn new(name: impl Into<Arc<str>>) -> Self {
        Self {
            name: name.into(),
            rules: Vec::new(),
        }
    }

    /// Adds a rule.
    pub fn rule(mut self, rule: GuardrailRule) -> Self {
        self.rules.push(rule);
        self
    }

    fn decide(&self, tool: &str, value: &Value, output: bool) -> GuardrailDecision {
        for rule in &self.rules {
            let matched = match (&rule.check, output) {
                (RuleCheck::Input(matches), false) | (RuleCheck::Output(matches), true) => {
                    matches(tool, value)
                }
                _ => false,
            };
            if matched {
                let hit = GuardrailHit {
                    rule: Some((Arc::clone(&self.name), Arc::clone(&rule.name))),
                    reason: rule.reason.clone(),
                };
                return match rule.action {
                    RuleAction::Block => GuardrailDecision::Block(hit),
                    RuleAction::Tripwire => GuardrailDecision::Tripwire(hit),
                };
            }
        }
        GuardrailDecision::Pass
    }
}

impl Guardrail for RulePack {
    fn check_input(&self, tool: &str, arguments: &Value) -> GuardrailDecision {
        self.decide(tool, arguments, false)
    }

    fn check_output(&self, tool: &str, output: &Value) -> GuardrailDecision {
        self.decide(tool, output, true)
    }
}

enum StringMatcher {
    Nothing,
    Needles(AhoCorasick),
    // The needles are host configuration; an automaton that cannot be built (absurdly many or
    // long needles) matches everything, so the rule fails closed instead of silently passing.
    Everything,
}

impl StringMatcher {
    fn new<I, S>(needles: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        let needles: Vec<S> = needles
            .into_iter()
            .filter(|needle| !needle.as_ref().is_empty())
            .collect();
        if needles.is_empty() {
            return Self::Nothing;
        }
        match AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .build(needles)
        {
            Ok(automaton) => Self::Needles(automaton),
            Err(_) => Self::Everything,
        }
    }

    fn matches(&self, value: &Value) -> bool {
        match self {
            Self::Nothing => false,
            Self::Needles(automaton) => any_string(value, &|text| automaton.is_match(text)),
            Self::Everything => true,
        }
    }
}

/// Whether `test` holds for any string or object key in `value`. The walk keeps its pending
/// containers on the heap, so a value of any depth is walked without exhausting the stack.
fn any_string(value: &Value, test: &dyn Fn(&str) -> bool) -> bool {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::String(text) if test(text) => return true,
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => {
                for (key, item) in map {
                    if test(key) {
                        return true;
                    }
                    pending.push(item);
                }
            }
            _ => {}
        }
    }
    false
}
