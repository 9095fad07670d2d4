//! Test support: an MCP server written as a few lines of `sh`, for answers the SDK's own
//! server types cannot produce (a malformed tool, a content block of an unknown kind).

use serde_json::json;

use super::connect::ProtocolEra;
use super::mcp_client::McpClient;
use super::outcome::RemoteOutcome;
use super::server::RemoteServer;
use crate::call::ToolOutput;
use crate::context::ToolExecutionContext;

/// A server named `name` over stdio that runs `cases` (`case` arms of `sh`, matching on
/// `$line`, with the request's id in `$id`), answers `initialize` in the 2025-11-25 era,
/// ignores notifications and answers any other request with `-32601`. The cases come first, so
/// one may answer `initialize` its own way.
pub(super) fn scripted_server(name: &str, cases: &str) -> RemoteServer {
    let script = format!(
        r#"
while IFS= read -r line; do
  id=${{line#*\"id\":}}; id=${{id%%[,\}}]*}}
  case "$line" in
{cases}
    *'"method":"initialize"'*) printf '{{"jsonrpc":"2.0","id":%s,"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"{name}","version":"1"}}}}}}\n' "$id" ;;
    *'"method":"notifications/'*) ;;
    *'"id":'*) printf '{{"jsonrpc":"2.0","id":%s,"error":{{"code":-32601,"message":"unknown"}}}}\n' "$id" ;;
  esac
done
"#
    );
    RemoteServer::command(name, "sh").args(["-c", &script])
}

/// `server`, connected in the 2025-11-25 era, the one the scripts answer in.
pub(super) async fn connected(server: RemoteServer) -> McpClient {
    McpClient::connect_with(server, ProtocolEra::Handshake)
        .await
        .unwrap()
}

/// What a call of `tool`, with no arguments, gives when it must complete.
pub(super) async fn completed(client: &McpClient, tool: &str) -> ToolOutput {
    let ctx = ToolExecutionContext::new();
    match client.call(tool, json!({}), &ctx).await.unwrap() {
        RemoteOutcome::Complete(output) => output,
        other => panic!("a complete result: {other:?}"),
    }
}
