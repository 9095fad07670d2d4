//! A local HTTP/1.1 server for the web tool tests: binds 127.0.0.x, answers each request by a
//! handler over its path, one request per connection.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How the server answers one request.
pub enum Reply {
    /// A whole answer.
    Bytes {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Headers, then one byte of `a` every `every`, `count` of them.
    Trickle { every: Duration, count: usize },
    /// A body of `length` bytes of text, written in 64 KiB chunks until the client hangs up.
    Endless { length: u64 },
    /// No answer at all for `wait`, then a hang-up.
    Stall { wait: Duration },
}

impl Reply {
    /// 200 with `content_type` and `body`.
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Reply::Bytes {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
        }
    }

    /// A redirect to `location`.
    pub fn redirect(status: u16, location: &str) -> Self {
        Reply::Bytes {
            status,
            headers: vec![("Location".into(), location.into())],
            body: Vec::new(),
        }
    }

    /// `status` with a JSON body and extra headers.
    pub fn json(status: u16, body: &serde_json::Value, headers: &[(&str, &str)]) -> Self {
        let mut all = vec![("Content-Type".to_string(), "application/json".to_string())];
        all.extend(headers.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        Reply::Bytes {
            status,
            headers: all,
            body: body.to_string().into_bytes(),
        }
    }
}

/// The request line's target (path and query) and the request head.
#[derive(Clone, Debug)]
pub struct Request {
    pub target: String,
    pub head: String,
}

/// Starts a server on `ip` (port chosen by the system) and returns its address.
pub async fn serve(
    ip: &str,
    handler: impl Fn(&Request) -> Reply + Send + Sync + 'static,
) -> SocketAddr {
    let listener = TcpListener::bind((ip, 0)).await.expect("bind a local port");
    let address = listener.local_addr().unwrap();
    let handler = Arc::new(handler);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let handler = handler.clone();
            tokio::spawn(async move {
                let _ = answer(stream, &*handler).await;
            });
        }
    });
    address
}

async fn answer(
    mut stream: TcpStream,
    handler: &(dyn Fn(&Request) -> Reply + Send + Sync),
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let read = stream.read(&mut buffer).await?;
        if read == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let target = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
    match handler(&Request { target, head }) {
        Reply::Bytes {
            status,
            headers,
            body,
        } => {
            let mut out = format!(
                "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                out.push_str(&format!("{name}: {value}\r\n"));
            }
            out.push_str("\r\n");
            stream.write_all(out.as_bytes()).await?;
            stream.write_all(&body).await?;
        }
        Reply::Trickle { every, count } => {
            let out = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {count}\r\nConnection: close\r\n\r\n"
            );
            stream.write_all(out.as_bytes()).await?;
            for _ in 0..count {
                tokio::time::sleep(every).await;
                stream.write_all(b"a").await?;
            }
        }
        Reply::Stall { wait } => tokio::time::sleep(wait).await,
        Reply::Endless { length } => {
            let out = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
            );
            stream.write_all(out.as_bytes()).await?;
            let chunk = vec![b'a'; 64 * 1024];
            let mut sent = 0u64;
            while sent < length {
                let take = chunk.len().min((length - sent) as usize);
                stream.write_all(&chunk[..take]).await?;
                sent += take as u64;
            }
        }
    }
    stream.shutdown().await
}
