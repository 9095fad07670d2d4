//! Serving over stdio: the transport a desktop client uses when it starts the server itself.

use rmcp::ServiceExt;

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
    /// # Errors
    ///
    /// [`McpServerError::Transport`] when the session could not start (stdin closed, or the
    /// client's first message was not a valid handshake) or ended abnormally.
    pub async fn serve_stdio(self) -> Result<(), McpServerError> {
        let running = self
            .for_session()
            .serve(rmcp::transport::stdio_pipes())
            .await
            .map_err(|error| McpServerError::Transport(std::io::Error::other(error.to_string())))?;
        running
            .waiting()
            .await
            .map(drop)
            .map_err(|error| McpServerError::Transport(std::io::Error::other(error.to_string())))
    }
}
