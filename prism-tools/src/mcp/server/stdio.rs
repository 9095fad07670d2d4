//! Serving over stdio: the transport a desktop client uses when it starts the server itself.

use rmcp::ServiceExt;
use rmcp::service::RoleServer;
use rmcp::transport::IntoTransport;

use super::line_transport::LineTransport;
use super::{McpServer, McpServerError};

impl McpServer {
    /// Serves one client on this process's stdin and stdout until it disconnects. Nothing else
    /// may write to stdout meanwhile (log to stderr).
    ///
    /// When both are pipes, as when a client starts the server, they are read and written
    /// without blocking, through the runtime's I/O driver (rmcp's
    /// [`stdio_pipes`](rmcp::transport::stdio_pipes), on Linux): Tokio's `stdin()` and
    /// `stdout()` would hand every read and write to a blocking thread. On their own open file
    /// descriptions, so the process's standard streams keep their blocking mode. Anything else (a
    /// terminal, a file, another platform) is read and written as Tokio's `stdin()` and
    /// `stdout()`.
    ///
    /// Messages are framed and bounded as rmcp's line transport frames them (one per line, at
    /// most 16 MiB), and every line is read with rmcp's own types; a `tools/call` line is read
    /// as that request directly rather than tried against each kind of client message in turn,
    /// which is most of what reading a call costs.
    ///
    /// A client going away does not stop a call of a tool with an effect (only its cancellation
    /// does), so this returns once every such call that started has also recorded its outcome:
    /// a host that exits when serving ends does not drop an effect half done. A tool that never
    /// ends keeps it waiting; MCP's shutdown sequence has a client that cannot wait end the
    /// process.
    ///
    /// # Errors
    ///
    /// [`McpServerError::Transport`] when the session could not start (stdin closed, or the
    /// client's first message was not a valid handshake) or ended abnormally.
    pub async fn serve_stdio(self) -> Result<(), McpServerError> {
        let (read, write) = rmcp::transport::stdio_pipes();
        self.serve_one(LineTransport::new(read, write)).await
    }

    /// Serves one client on `transport` as [`serve_stdio`](Self::serve_stdio) does.
    async fn serve_one<T, E, A>(self, transport: T) -> Result<(), McpServerError>
    where
        T: IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let failed = |error: String| McpServerError::Transport(std::io::Error::other(error));
        let running = self
            .for_session()
            .serve(transport)
            .await
            .map_err(|error| failed(error.to_string()))?;
        let ended = running.waiting().await;
        self.shared.detached.finished().await;
        ended.map(drop).map_err(|error| failed(error.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tokio::sync::{Notify, Semaphore};

    use super::*;
    use crate::definition::ToolDefinition;
    use crate::dispatch::Dispatcher;
    use crate::effects::{EffectPolicy, InMemoryEffectStore};
    use crate::registry::ToolRegistry;

    const REQUESTS: &str = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pay","arguments":{}}}"#,
        "\n",
    );

    /// rmcp gives in-flight requests a few seconds once the client has gone; an effect may take
    /// longer. The clock is paused, so those seconds pass as soon as every task waits.
    #[tokio::test(start_paused = true)]
    async fn serving_ends_once_a_started_effect_recorded_its_outcome() {
        let started = Arc::new(Notify::new());
        let gate = Arc::new(Semaphore::new(0));
        let paid = Arc::new(AtomicBool::new(false));
        let pay = {
            let (started, gate, paid) = (started.clone(), gate.clone(), paid.clone());
            ToolDefinition::builder("pay")
                .parameters(json!({"type": "object"}))
                .effect(EffectPolicy::default())
                .run(move |_: Value, _ctx| {
                    let (started, gate, paid) = (started.clone(), gate.clone(), paid.clone());
                    async move {
                        started.notify_one();
                        let _ = gate.acquire().await;
                        paid.store(true, Ordering::SeqCst);
                        Ok(json!("paid"))
                    }
                })
        };
        let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([pay]))
            .effects(InMemoryEffectStore::new())
            .build();
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        let mut serving = tokio::spawn(
            McpServer::new(dispatcher).serve_one(LineTransport::new(server_read, server_write)),
        );
        let (_client_read, mut client_write) = tokio::io::split(client);
        client_write.write_all(REQUESTS.as_bytes()).await.unwrap();
        started.notified().await;
        // The client goes away while the effect runs.
        client_write.shutdown().await.unwrap();
        let early = tokio::time::timeout(Duration::from_secs(60), &mut serving).await;
        assert!(early.is_err(), "serving ended while an effect still ran");
        gate.add_permits(1);
        let ended = tokio::time::timeout(Duration::from_secs(600), serving).await;
        ended
            .expect("serving ends once the effect did")
            .unwrap()
            .unwrap();
        assert!(paid.load(Ordering::SeqCst));
    }

    const HANDSHAKE: &str = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
    );

    /// Waits (thirty seconds at most) until `done` holds.
    async fn eventually(what: &str, done: impl Fn() -> bool) {
        let waited = tokio::time::timeout(Duration::from_secs(30), async {
            while !done() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        assert!(waited.is_ok(), "timed out waiting until {what}");
    }

    /// The session's announcing task holds the registry's change counter: the count of its
    /// holders says whether that task still runs.
    #[tokio::test]
    async fn a_session_announces_tool_list_changes_and_its_task_ends_with_it() {
        let tool = |name: &str| {
            ToolDefinition::builder(name)
                .parameters(json!({"type": "object"}))
                .run_sync(|_, _| Ok(Value::Null))
        };
        let registry = ToolRegistry::from_iter([tool("a")]);
        let changes = Arc::clone(registry.changes());
        let server = McpServer::new(Dispatcher::builder(registry.clone()).build());
        let before = Arc::strong_count(&changes);

        let (client, server_end) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server_end);
        let serving = tokio::spawn(server.serve_one(LineTransport::new(server_read, server_write)));
        let (client_read, mut client_write) = tokio::io::split(client);
        client_write.write_all(HANDSHAKE.as_bytes()).await.unwrap();
        let mut lines = BufReader::new(client_read).lines();
        let answer = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the handshake is answered")
            .unwrap()
            .unwrap();
        assert!(answer.contains(r#""listChanged":true"#), "{answer}");
        eventually("the session waits for changes", || {
            Arc::strong_count(&changes) == before + 1
        })
        .await;

        registry.register(tool("b")).unwrap();
        let told = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the change is announced")
            .unwrap()
            .unwrap();
        assert!(told.contains("notifications/tools/list_changed"), "{told}");

        // The client goes away: the session ends, and its task with it.
        client_write.shutdown().await.unwrap();
        drop(lines);
        tokio::time::timeout(Duration::from_secs(30), serving)
            .await
            .expect("serving ends with the session")
            .unwrap()
            .unwrap();
        eventually("the session's task ended", || {
            Arc::strong_count(&changes) == before
        })
        .await;
    }
}
