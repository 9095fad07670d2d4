//! `McpServer::serve_stdio` on both kinds of standard streams a server meets: pipes, as a client
//! that starts the server connects them (read and written without blocking, through the
//! runtime's I/O driver), and a stdout that is a file (served through Tokio's blocking `stdin()`
//! and `stdout()` instead). Either way a `tools/call` is answered, and the session ends when
//! stdin closes. This test binary is also the server, started again with `--serve-mcp-stdio`.

mod mcp_server_support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any one step may take: far beyond what it needs, and never a hang.
const LIMIT: Duration = Duration::from_secs(60);

/// A handshake, then a call of the fixture's `add`.
const REQUESTS: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stdio-test","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#,
    "\n",
);

fn main() -> ExitCode {
    if let Some(served) = mcp_server_support::serve_stdio_when_asked() {
        return served;
    }
    let checks: [(&str, Check); 2] = [
        ("stdin and stdout are pipes", over_pipes),
        ("stdout is a file", stdout_to_a_file),
    ];
    let mut failed = 0;
    for (name, check) in checks {
        match check() {
            Ok(()) => println!("passed: {name}"),
            Err(why) => {
                println!("FAILED: {name}: {why}");
                failed += 1;
            }
        }
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// One way of connecting the server; `Err` says what went wrong.
type Check = fn() -> Result<(), String>;

fn server(stdout: Stdio) -> Result<Child, String> {
    let me = std::env::current_exe().map_err(|error| error.to_string())?;
    Command::new(me)
        .arg(mcp_server_support::SERVE_STDIO)
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|error| format!("could not start the server: {error}"))
}

fn over_pipes() -> Result<(), String> {
    let mut child = server(Stdio::piped())?;
    let stdout = child.stdout.take().expect("piped stdout");
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    send_requests(&mut child)?;
    let started = Instant::now();
    let answer = loop {
        let left = LIMIT.saturating_sub(started.elapsed());
        let line = received
            .recv_timeout(left)
            .map_err(|_| "no answer to the call".to_owned())?;
        if let Some(answer) = answer_to_call(&line) {
            break answer;
        }
    };
    finish(child)?;
    check_answer(&answer)
}

fn stdout_to_a_file() -> Result<(), String> {
    let output = std::env::temp_dir().join(format!("prism-mcp-stdio-{}.out", std::process::id()));
    let file = std::fs::File::create(&output).map_err(|error| error.to_string())?;
    let answered = answer_in_file(&output, file);
    let _ = std::fs::remove_file(&output);
    check_answer(&answered?)
}

fn answer_in_file(output: &std::path::Path, file: std::fs::File) -> Result<Value, String> {
    let mut child = server(Stdio::from(file))?;
    send_requests(&mut child)?;
    let started = Instant::now();
    let answer = loop {
        let written = std::fs::read_to_string(output).map_err(|e| e.to_string())?;
        if let Some(answer) = written.lines().find_map(answer_to_call) {
            break answer;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            return Err(format!(
                "no answer to the call; the server wrote {written:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    finish(child)?;
    Ok(answer)
}

fn send_requests(child: &mut Child) -> Result<(), String> {
    let stdin = child.stdin.as_mut().expect("piped stdin");
    stdin
        .write_all(REQUESTS.as_bytes())
        .and_then(|()| stdin.flush())
        .map_err(|error| format!("could not write the requests: {error}"))
}

/// The JSON-RPC answer to request 2, if `line` is it.
fn answer_to_call(line: &str) -> Option<Value> {
    let message: Value = serde_json::from_str(line).ok()?;
    (message["id"] == json!(2)).then_some(message)
}

fn check_answer(answer: &Value) -> Result<(), String> {
    let result = &answer["result"];
    if result["isError"] == json!(false) && result["content"][0]["text"] == json!("5") {
        Ok(())
    } else {
        Err(format!("unexpected answer {answer}"))
    }
}

/// Closes the server's stdin and waits for it to end the session and exit.
fn finish(mut child: Child) -> Result<(), String> {
    drop(child.stdin.take());
    let started = Instant::now();
    loop {
        match child.try_wait().map_err(|error| error.to_string())? {
            Some(status) if status.success() => return Ok(()),
            Some(status) => return Err(format!("the server exited with {status}")),
            None if started.elapsed() > LIMIT => {
                let _ = child.kill();
                return Err("the server did not exit after stdin closed".into());
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}
