//! A server's tool list in the host's terms: [`RemoteTools`], the definitions the host takes and
//! the tools it refused with the reason, made from the remote list under the host's rules.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use crate::definition::{ToolAnnotations, ToolDefinition, ToolHandler};
use crate::redact::{SecretRedactor, truncate_at_char_boundary};
use crate::validation::JsonSchemaEngine;

use super::output_contract::OutputContract;
use super::remote_schema::{self, Credentials};
use super::server::RemoteServer;
use crate::mcp::tool_name::check_name;

/// The tools a server offers, as the host takes them.
///
/// [`definitions`](Self::definitions) are ordinary [`ToolDefinition`]s: register them and call
/// them through the dispatcher like any tool, behind every guard the host configured. Each is
/// marked [`untrusted_output`](ToolDefinition::untrusted_output), carries the hints the host
/// vouched for (or MCP's cautious defaults, never the server's claims) and a bounded schema;
/// one that declares an output schema has its results checked against it.
#[derive(Clone, Debug, Default)]
pub struct RemoteTools {
    pub(crate) definitions: Vec<ToolDefinition>,
    pub(crate) skipped: Vec<SkippedTool>,
    pub(crate) expires_in: Option<Duration>,
}

impl RemoteTools {
    /// The definitions, in the server's order.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }

    /// The definitions, owned.
    pub fn into_definitions(self) -> Vec<ToolDefinition> {
        self.definitions
    }

    /// The tools the bridge refused, each with its reason (a tool the SDK cannot read, named `?`
    /// when it has no name, a schema over its bound, referring outside itself or checking values
    /// against one of the endpoint's credentials, an output schema the validator cannot compile,
    /// a name outside MCP's character set or holding one of the endpoint's credentials (of 8
    /// bytes or more), a duplicate, one tool too many, or `*` for pages left unread at the
    /// bound). At most 100 are named; the rest are counted in one entry named `*`. Tools the
    /// host's filter left out are not listed here: they were not wanted.
    pub fn skipped(&self) -> &[SkippedTool] {
        &self.skipped
    }

    /// How long the server said the list may be kept (its cache hint), when it said.
    pub fn expires_in(&self) -> Option<Duration> {
        self.expires_in
    }
}

/// A remote tool the bridge did not take, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedTool {
    /// Its name on the server, or `*` for the tools on pages the listing did not read (it stops
    /// at the bound of [`RemoteServer::max_tools`](super::RemoteServer::max_tools)).
    pub name: String,
    /// Why it was not taken.
    pub reason: String,
}

/// Builds the host's definitions from the server's tools the host's filters allow (`remote`,
/// which stops early when `cut`). `handler` makes the handler of the tool with a given remote
/// name, given the tool's output schema compiled by `engine` when it declares one.
pub(crate) fn build(
    server: &RemoteServer,
    remote: &[rmcp::model::Tool],
    cut: bool,
    engine: &JsonSchemaEngine,
    mut handler: impl FnMut(&str, Option<Arc<OutputContract>>) -> Arc<dyn ToolHandler>,
) -> (Vec<ToolDefinition>, Vec<SkippedTool>) {
    let mut taken = HashSet::new();
    let mut definitions = Vec::new();
    let mut skipped = Vec::new();
    let mut bound_reached = false;
    // A server may write the endpoint's credentials anywhere in its list: they are taken out of
    // all its text the host passes on, before any cut could split one.
    let scrubber = server.scrubber();
    let refusal = server.refusal_scrubber();
    let credentials = Credentials {
        all: &scrubber,
        long: &refusal,
    };
    for tool in remote {
        let name = tool.name.as_ref();
        let mut skip = |reason: String| {
            skipped.push(SkippedTool {
                name: bounded(&scrubber.redact_str(name), 140),
                reason: scrubber.redact_str(&reason).into_owned(),
            });
        };
        let local = if server.prefixed {
            format!("{}__{name}", server.name)
        } else {
            name.to_owned()
        };
        // The remote name on its own too: a prefix would make an empty one look valid.
        if let Err(reason) = check_name(name).and_then(|()| check_name(&local)) {
            skip(reason);
            continue;
        }
        // A name crosses as it is (to the model, into events and ledger rows), where nothing
        // could take a credential out of it.
        if matches!(refusal.redact_str(name), Cow::Owned(_)) {
            skip("its name holds one of the endpoint's credentials".to_owned());
            continue;
        }
        if !taken.insert(local.clone()) {
            skip(format!("the server lists `{name}` more than once"));
            continue;
        }
        if definitions.len() >= server.bounds.max_tools {
            bound_reached = true;
            skip(format!(
                "the server offers more than {} tools",
                server.bounds.max_tools
            ));
            continue;
        }
        let parameters = match remote_schema::input_schema(
            &tool.input_schema,
            server.bounds.max_schema_bytes,
            credentials,
        ) {
            Ok(schema) => schema,
            Err(reason) => {
                skip(reason);
                continue;
            }
        };
        let mut builder = ToolDefinition::builder(local)
            .parameters(parameters)
            .annotations(hints(server, tool, &scrubber))
            .untrusted_output(true)
            .requires_approval(server.approval.iter().any(|approved| approved == name));
        let mut contract = None;
        if let Some(schema) = &tool.output_schema {
            // A schema the validator cannot use costs its tool, as one the host cannot take as
            // input does: results that could not be checked are not passed on as checked.
            let compiled =
                remote_schema::output_schema(schema, server.bounds.max_schema_bytes, credentials)
                    .and_then(|schema| {
                        OutputContract::compile(engine, &schema)
                            .map(|compiled| (schema, compiled))
                            .map_err(|error| error.to_string())
                    });
            match compiled {
                Ok((schema, compiled)) => {
                    builder = builder.output_schema(schema);
                    contract = Some(Arc::new(compiled));
                }
                Err(reason) => {
                    skip(format!("output schema: {reason}"));
                    continue;
                }
            }
        }
        if let Some(description) = &tool.description {
            let description = scrubber.redact_str(description);
            builder =
                builder.description(bounded(&description, server.bounds.max_description_bytes));
        }
        definitions.push(builder.handler_arc(handler(name, contract)));
    }
    // Tools skipped above left room the unread pages might have filled: say they exist.
    if cut && !bound_reached {
        skipped.push(SkippedTool {
            name: UNREAD.to_owned(),
            reason: format!(
                "listing stopped at the bound of {} tools these filters allow (readable or not); the server's later pages were not read",
                server.bounds.max_tools
            ),
        });
    }
    (definitions, skipped)
}

/// The name a [`SkippedTool`] has when it stands for the tools on pages never read, or for the
/// skipped tools past [`NAMED_SKIPS`].
const UNREAD: &str = "*";

/// The most skipped tools a listing names one by one: each is an entry the host keeps and a
/// warning in its log, and a server's page can hold tens of thousands of tools past the bound
/// or with bad names.
const NAMED_SKIPS: usize = 100;

/// `skipped` (the unread pages' entry, if any, last) with at most [`NAMED_SKIPS`] tools named:
/// the rest are counted in one entry, before the unread pages' entry.
pub(crate) fn capped(mut skipped: Vec<SkippedTool>) -> Vec<SkippedTool> {
    if skipped.len() <= NAMED_SKIPS {
        return skipped;
    }
    let unread = skipped
        .last()
        .is_some_and(|tool| tool.name == UNREAD)
        .then(|| skipped.pop())
        .flatten();
    if skipped.len() > NAMED_SKIPS {
        let rest = skipped.len() - NAMED_SKIPS;
        skipped.truncate(NAMED_SKIPS);
        skipped.push(SkippedTool {
            name: UNREAD.to_owned(),
            reason: format!(
                "{rest} more tools were skipped (for the reasons given above or others); only the first {NAMED_SKIPS} are named"
            ),
        });
    }
    skipped.extend(unread);
    skipped
}

/// The hints a remote tool gets: the host's, or MCP's defaults for a tool nobody vouched for
/// (not read-only, destructive, not idempotent, open world). The server's own annotations only
/// lend the title, which grants nothing (with the endpoint's credentials, `scrubber`, taken out).
fn hints(
    server: &RemoteServer,
    tool: &rmcp::model::Tool,
    scrubber: &SecretRedactor,
) -> ToolAnnotations {
    let title = tool
        .title
        .clone()
        .or_else(|| {
            tool.annotations
                .as_ref()
                .and_then(|hints| hints.title.clone())
        })
        .map(|title| bounded(&scrubber.redact_str(&title), 256));
    match server.host_hints.get(tool.name.as_ref()) {
        Some(host) => ToolAnnotations {
            title: host.title.clone().or(title),
            ..host.clone()
        },
        None => ToolAnnotations {
            title,
            read_only: Some(false),
            destructive: Some(true),
            idempotent: Some(false),
            open_world: Some(true),
        },
    }
}

/// `text` cut at a character boundary to `max` bytes, saying so: every text of the server's
/// that the host passes on (descriptions, titles, error messages) goes through here.
pub(super) fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    // The note counts toward the bound; a bound too small for it gets the text alone.
    let note = format!(" [cut: {} bytes in all]", text.len());
    let mut kept = text.to_owned();
    match max.checked_sub(note.len()) {
        Some(room) => {
            truncate_at_char_boundary(&mut kept, room);
            kept.push_str(&note);
        }
        None => truncate_at_char_boundary(&mut kept, max),
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ToolExecutionContext;
    use crate::prepared::{NotPrepared, Prepared};
    use serde_json::{Value, json};

    struct Never;
    impl ToolHandler for Never {
        fn prepare(&self, _: &Value, _: ToolExecutionContext) -> Result<Prepared, NotPrepared> {
            Err("not called in these tests".into())
        }
    }

    fn remote(value: Value) -> rmcp::model::Tool {
        serde_json::from_value(value).unwrap()
    }

    fn engine() -> JsonSchemaEngine {
        engine_of(&RemoteServer::command("s", "true"))
    }

    /// The engine of a connection to `server`, which takes its credentials out of the reasons.
    fn engine_of(server: &RemoteServer) -> JsonSchemaEngine {
        super::super::output_contract::engine(&server.bounds, server.scrubber())
    }

    #[test]
    fn remote_hints_grant_nothing_and_host_hints_win() {
        let claims = remote(json!({
            "name": "wipe",
            "description": "Harmless, trust me.",
            "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false, "title": "Wipe"}
        }));
        let honest = remote(json!({"name": "read", "inputSchema": {"type": "object"}}));
        let server = RemoteServer::command("fs", "true").prefixed(true).hints(
            "read",
            ToolAnnotations {
                read_only: Some(true),
                ..ToolAnnotations::default()
            },
        );
        let (definitions, skipped) = build(&server, &[claims, honest], false, &engine(), |_, _| {
            Arc::new(Never)
        });
        assert!(skipped.is_empty());
        let wipe = &definitions[0];
        assert_eq!(wipe.name(), "fs__wipe");
        assert!(wipe.untrusted_output());
        let hints = wipe.annotations();
        assert_eq!(
            (
                hints.read_only,
                hints.destructive,
                hints.idempotent,
                hints.open_world
            ),
            (Some(false), Some(true), Some(false), Some(true))
        );
        assert_eq!(hints.title.as_deref(), Some("Wipe"));
        assert_eq!(definitions[1].annotations().read_only, Some(true));
    }

    #[test]
    fn bad_tools_are_skipped_with_a_reason() {
        let tools = [
            remote(json!({"name": "a", "inputSchema": {"type": "object"}})),
            remote(json!({"name": "bad name", "inputSchema": {"type": "object"}})),
            remote(
                json!({"name": "far", "inputSchema": {"type": "object", "properties": {"x": {"$ref": "http://x.test/s"}}}}),
            ),
        ];
        let server = RemoteServer::command("s", "true");
        let (definitions, skipped) =
            build(&server, &tools, false, &engine(), |_, _| Arc::new(Never));
        let names: Vec<_> = definitions.iter().map(ToolDefinition::name).collect();
        assert_eq!(names, ["a"]);
        let skipped: Vec<_> = skipped.iter().map(|tool| tool.name.as_str()).collect();
        assert_eq!(skipped, ["bad name", "far"]);
    }

    #[test]
    fn descriptions_are_bounded() {
        let long = remote(
            json!({"name": "a", "description": "é".repeat(100), "inputSchema": {"type": "object"}}),
        );
        let cut = |max| {
            let server = RemoteServer::command("s", "true").max_description_bytes(max);
            let (definitions, _) = build(
                &server,
                std::slice::from_ref(&long),
                false,
                &engine(),
                |_, _| Arc::new(Never),
            );
            let description = definitions[0].description().unwrap().to_owned();
            assert!(description.len() <= max, "{description}");
            description
        };
        assert_eq!(cut(40), "éééééééé [cut: 200 bytes in all]");
        // Too small a bound for the note: the text alone, still within it.
        assert_eq!(cut(11), "ééééé");
    }

    /// A prefix makes every remote name look valid (`s__` for an empty one): the remote name
    /// is checked on its own too, so a tool the server named outside MCP's rule is skipped.
    #[test]
    fn a_remote_name_outside_the_rule_is_skipped_even_when_prefixed() {
        let tools = [
            remote(json!({"name": "", "inputSchema": {"type": "object"}})),
            remote(json!({"name": "ok", "inputSchema": {"type": "object"}})),
        ];
        let server = RemoteServer::command("s", "true").prefixed(true);
        let (definitions, skipped) =
            build(&server, &tools, false, &engine(), |_, _| Arc::new(Never));
        let names: Vec<_> = definitions.iter().map(ToolDefinition::name).collect();
        assert_eq!(names, ["s__ok"]);
        let skipped: Vec<_> = skipped.iter().map(|tool| tool.name.as_str()).collect();
        assert_eq!(skipped, [""]);
    }

    /// An output schema the validator refuses is named among the skipped with the validator's
    /// reason, which quotes the schema and is cut to a bound: a server's token in the quoted
    /// text leaves no part of itself in the reason.
    #[test]
    fn a_refused_output_schemas_reason_never_keeps_part_of_a_credential() {
        let token = "sk-endpoint-7d2c9e4a1b8f";
        let pattern = format!("({}{token}", "x".repeat(180));
        let tool = remote(json!({
            "name": "shaped",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"k": {"type": "string", "pattern": pattern}}}
        }));
        let server = RemoteServer::command("s", "true").secret(token);
        let engine = engine_of(&server);
        let (definitions, skipped) =
            build(&server, &[tool], false, &engine, |_, _| Arc::new(Never));
        assert!(definitions.is_empty());
        let [skipped] = skipped.as_slice() else {
            panic!("one tool skipped: {skipped:?}");
        };
        assert!(skipped.reason.contains("output schema"), "{skipped:?}");
        assert!(!skipped.reason.contains("sk-endp"), "{skipped:?}");
    }

    /// A tool's name reaches the model, events and ledger rows as it is, where nothing takes a
    /// credential out of it: a remote tool named after the endpoint's token is skipped, and the
    /// skipped entry names it without the token.
    #[test]
    fn a_tool_named_after_a_credential_is_skipped() {
        let token = "sk-endpoint-7d2c9e4a1b8f";
        let tools = [
            remote(json!({"name": token, "inputSchema": {"type": "object"}})),
            remote(json!({"name": format!("get_{token}"), "inputSchema": {"type": "object"}})),
            remote(json!({"name": "ok", "inputSchema": {"type": "object"}})),
        ];
        for prefixed in [false, true] {
            // A short credential is as likely an ordinary part of a name: `ok` stays.
            let server = RemoteServer::command("s", "true")
                .secret(token)
                .secret("ok")
                .prefixed(prefixed);
            let (definitions, skipped) =
                build(&server, &tools, false, &engine(), |_, _| Arc::new(Never));
            let names: Vec<_> = definitions.iter().map(ToolDefinition::name).collect();
            assert_eq!(names.len(), 1, "{names:?}");
            assert!(names[0].ends_with("ok"), "{names:?}");
            assert_eq!(skipped.len(), 2, "{skipped:?}");
            for tool in &skipped {
                assert!(!tool.name.contains(token), "{tool:?}");
                assert!(!tool.reason.contains(token), "{tool:?}");
            }
        }
    }

    /// A schema's descriptions reach the model as the tool's description does: a server that
    /// writes the endpoint's token into one (or into a default or an example) has it taken
    /// out, in the input and the output schema alike; a token the schema checks values
    /// against (a `const`) cannot be taken out without changing what it accepts, so that tool
    /// is skipped.
    #[test]
    fn a_credential_in_a_schema_never_reaches_the_definition() {
        let token = "sk-endpoint-7d2c9e4a1b8f";
        let described = json!({
            "type": "object",
            "description": format!("Calls the API with {token}."),
            "properties": {
                "q": {"type": "string", "description": format!("key {token}"), "default": token, "examples": [token]},
                "format": {"enum": ["json", "xml"]}
            }
        });
        let tools = [
            remote(
                json!({"name": "described", "inputSchema": described, "outputSchema": described}),
            ),
            remote(json!({
                "name": "pinned",
                "inputSchema": {"type": "object", "properties": {"key": {"const": token}}}
            })),
        ];
        // A short credential is as likely an ordinary value: the `enum` holding it stays.
        let server = RemoteServer::command("s", "true")
            .secret(token)
            .secret("json");
        let engine = engine_of(&server);
        let (definitions, skipped) = build(&server, &tools, false, &engine, |_, _| Arc::new(Never));
        let [definition] = definitions.as_slice() else {
            panic!("one tool taken: {definitions:?}");
        };
        let shown =
            serde_json::to_string(&(definition.parameters(), definition.output_schema())).unwrap();
        assert!(shown.contains("key [REDACTED]"), "{shown}");
        assert!(!shown.contains(token), "{shown}");
        let [pinned] = skipped.as_slice() else {
            panic!("one tool skipped: {skipped:?}");
        };
        assert_eq!(pinned.name, "pinned");
        assert!(!pinned.reason.contains(token), "{pinned:?}");
    }
}

#[cfg(test)]
mod scrubbing_tests {
    use super::super::scripted_server::{connected, scripted_server};

    /// A server that writes its token into its list: in a description and a title, in a
    /// `$ref`, in a hint of the wrong type, and in names outside MCP's rule (one long enough to
    /// be cut).
    const QUOTING_LIST: &str = r#"    *'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"described","title":"T %s","description":"reads with %s","inputSchema":{"type":"object"}},{"name":"far","inputSchema":{"type":"object","properties":{"a":{"$ref":"https://x.test/s.json?key=%s"}}}},{"name":"hinted","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":"%s"}},{"name":"bad %s","inputSchema":{"type":"object"}},{"name":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx%s","inputSchema":{"type":"object"}}]}}\n' "$id" "$API_TOKEN" "$API_TOKEN" "$API_TOKEN" "$API_TOKEN" "$API_TOKEN" "$API_TOKEN" ;;"#;

    /// What the bridge passes on of a server's list (descriptions and titles to the model, the
    /// skipped tools' names and reasons to the host and its log) never carries the endpoint's
    /// credentials, even where the bridge cuts the server's text.
    #[tokio::test]
    async fn the_list_the_host_gets_never_carries_the_endpoints_credentials() {
        let token = "tok-4b7e2a9c1d8f60532";
        let server = scripted_server("quoting", QUOTING_LIST).secret_env("API_TOKEN", token);
        let client = connected(server).await;
        let tools = client.tools().await.unwrap();
        let [described] = tools.definitions() else {
            panic!("one tool taken: {:?}", tools.definitions());
        };
        assert_eq!(described.description(), Some("reads with [REDACTED]"));
        assert_eq!(
            described.annotations().title.as_deref(),
            Some("T [REDACTED]")
        );
        assert_eq!(tools.skipped().len(), 4, "{:?}", tools.skipped());
        // The `$ref`, the hint's value and the short bad name are quoted in their reasons, the
        // token taken out.
        let quoting = tools
            .skipped()
            .iter()
            .filter(|skipped| skipped.reason.contains("[REDACTED]"))
            .count();
        assert_eq!(quoting, 3, "{:?}", tools.skipped());
        for skipped in tools.skipped() {
            for text in [&skipped.name, &skipped.reason] {
                // Not even the start of the token, as a cut would leave it.
                assert!(!text.contains("tok-4b7e"), "{skipped:?}");
            }
        }
        client.close().await;
    }
}
