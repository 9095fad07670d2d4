//! Ledgers under what real files and databases meet: a last row without its newline, a
//! database busy with another process, a host database with its own `user_version`, an id the
//! database's text type refuses, a commit whose answer was lost with the connection.

mod support;

use std::time::Duration;

use prism_tools::storage::{LedgerReader, RecordQuery};
use prism_tools::{JsonlLedger, RecordStatus, RunLedger, ToolCallRecord};

fn row(call: &str) -> ToolCallRecord {
    let mut row = ToolCallRecord::new(call.into(), "echo".into(), RecordStatus::Started);
    row.run_id = Some("run".into());
    row
}

async fn call_ids(ledger: &impl LedgerReader) -> Vec<String> {
    let rows = ledger.read(&RecordQuery::all()).await.unwrap();
    rows.iter()
        .map(|row| row.tool_call_id.to_string())
        .collect()
}

/// The call ids a JSONL ledger of rows `calls` reads after its file lost only its final newline
/// (saved by an editor that adds none, or joined by a tool) and it was opened again.
async fn reopened_without_final_newline(calls: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.jsonl");
    {
        let ledger = JsonlLedger::open(&path).unwrap();
        for call in calls {
            ledger.append(&row(call));
        }
        ledger.flush().unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.trim_end_matches('\n')).unwrap();
    let ledger = JsonlLedger::open(&path).unwrap();
    call_ids(&ledger).await
}

/// A whole, flushed last row whose newline alone is missing is kept, not cut as a torn write.
#[tokio::test]
async fn jsonl_reopen_keeps_a_whole_last_row_that_lacks_its_newline() {
    assert_eq!(
        reopened_without_final_newline(&["a", "b"]).await,
        ["a", "b"]
    );
    assert_eq!(reopened_without_final_newline(&["only"]).await, ["only"]);
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use super::*;
    use prism_tools::storage::{SqliteLedger, SqliteOptions};

    /// A batch refused while another process holds the write lock longer than the busy timeout
    /// is kept, not lost: the flush says how many rows wait, and once the lock is free the next
    /// flush stores them, in order, before the rows appended after them.
    #[test]
    fn rows_refused_while_the_database_is_busy_are_stored_once_it_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prism.sqlite3");
        let ledger = SqliteLedger::open_with(
            SqliteOptions::new(&path)
                .busy_timeout(Duration::from_millis(50))
                .max_batch(1),
        )
        .unwrap();
        let blocker = rusqlite::Connection::open(&path).unwrap();
        blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
        for call in ["a", "b", "c"] {
            ledger.append(&row(call));
        }
        let error = ledger.flush().unwrap_err();
        assert!(
            error.0.starts_with("3 rows are waiting to be stored"),
            "three rows wait but the flush said: {}",
            error.0
        );
        blocker.execute_batch("COMMIT").unwrap();
        ledger.append(&row("d"));
        ledger
            .flush()
            .expect("the lock is free: every waiting row is stored");
        let ids = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(call_ids(&ledger));
        assert_eq!(ids, ["a", "b", "c", "d"]);
    }

    /// The tables are prefixed `prism_` so that they can live in a host's own database. A host
    /// database whose `user_version` the host uses for its own schema (as rusqlite_migration and
    /// most SQLite migration tools do) must either get prism's tables or be refused at open; it
    /// must not open fine and then lose every row.
    #[test]
    fn a_host_database_with_its_own_user_version_gets_the_ledger_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("app.sqlite3");
        let host = rusqlite::Connection::open(&path).unwrap();
        host.execute_batch(
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);
             PRAGMA user_version = 1;",
        )
        .unwrap();
        drop(host);
        let Ok(ledger) = SqliteLedger::open(&path) else {
            return; // a clear refusal at open would be acceptable
        };
        ledger.append(&row("a"));
        ledger
            .flush()
            .expect("the ledger opened, so its rows must be stored");
    }
}

#[cfg(feature = "postgres")]
mod postgres {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpListener, TcpStream};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use prism_tools::storage::{PostgresLedger, PostgresOptions};

    /// One row whose call id (chosen by the model) holds a NUL character, which PostgreSQL's
    /// text columns refuse, must not take the other rows of its batch down with it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_row_with_a_nul_in_its_call_id_does_not_lose_the_rest_of_its_batch() {
        let Some(url) = support::postgres_url("postgres a_row_with_a_nul_in_its_call_id") else {
            return;
        };
        let schema = support::unique_schema("nul");
        let options = PostgresOptions::new(&url).unwrap().schema(&schema).unwrap();
        let ledger = PostgresLedger::connect(options).await.unwrap();
        let (ledger, flushed) = tokio::task::spawn_blocking(move || {
            ledger.append(&row("a"));
            ledger.append(&row("b\u{0}c"));
            ledger.append(&row("d"));
            let flushed = ledger.flush();
            (ledger, flushed)
        })
        .await
        .unwrap();
        flushed.expect("every row is stored");
        assert_eq!(call_ids(&ledger).await, ["a", "b\u{0}c", "d"]);
    }

    /// The server committed a batch, but the connection was lost before its answer arrived: the
    /// ledger cannot tell it from a batch that was never stored and writes it again, which must
    /// not store its rows a second time.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_retried_after_its_commit_answer_was_lost_stores_each_row_once() {
        let Some(url) = support::postgres_url("postgres a_batch_retried_after_its_commit_answer")
        else {
            return;
        };
        let schema = support::unique_schema("lost_answer");
        let _guard = support::SchemaGuard {
            url: url.clone(),
            schema: schema.clone(),
        };
        let proxy = LosingProxy::start(&url);
        let options = PostgresOptions::new(&proxy.connection)
            .unwrap()
            .schema(&schema)
            .unwrap();
        let ledger = PostgresLedger::connect(options).await.unwrap();
        let (ledger, flushed) = tokio::task::spawn_blocking(move || {
            for call in ["a", "b", "c"] {
                ledger.append(&row(call));
            }
            // The first flush meets the lost answer; the rows wait and a later one retries them
            // over a new connection (which may take a moment to be seen as needed).
            let mut flushed = ledger.flush();
            for _ in 0..50 {
                if flushed.is_ok() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
                flushed = ledger.flush();
            }
            (ledger, flushed)
        })
        .await
        .unwrap();
        assert!(
            proxy.answer_lost(),
            "the proxy never saw the ledger's INSERT answered"
        );
        flushed.expect("the retry stores the rows");
        assert_eq!(call_ids(&ledger).await, ["a", "b", "c"]);
    }

    /// A TCP proxy to a PostgreSQL server that forwards both ways, except that the first time
    /// the server answers an `INSERT` into the ledger table it drops both connections without
    /// relaying the answer: the commit happened, the client never hears of it.
    struct LosingProxy {
        /// A connection string for the ledger, pointing at the proxy.
        connection: String,
        lost: Arc<AtomicBool>,
    }

    impl LosingProxy {
        fn start(url: &str) -> Self {
            let config: tokio_postgres::Config = url.parse().unwrap();
            let upstream = match (config.get_hosts(), config.get_ports()) {
                ([tokio_postgres::config::Host::Tcp(host), ..], [port, ..]) => {
                    format!("{host}:{port}")
                }
                ([tokio_postgres::config::Host::Tcp(host), ..], []) => format!("{host}:5432"),
                _ => panic!(
                    "the proxy needs a TCP host in {}",
                    support::POSTGRES_URL_VAR
                ),
            };
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let port = listener.local_addr().unwrap().port();
            let quote =
                |value: &str| format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"));
            let mut connection = format!("host=127.0.0.1 port={port}");
            if let Some(user) = config.get_user() {
                connection += &format!(" user={}", quote(user));
            }
            if let Some(dbname) = config.get_dbname() {
                connection += &format!(" dbname={}", quote(dbname));
            }
            if let Some(password) = config.get_password() {
                connection += &format!(" password={}", quote(&String::from_utf8_lossy(password)));
            }
            let lost = Arc::new(AtomicBool::new(false));
            let tripped = Arc::clone(&lost);
            std::thread::spawn(move || {
                for client in listener.incoming() {
                    let Ok(client) = client else { return };
                    let server = TcpStream::connect(&upstream).unwrap();
                    let tripped = Arc::clone(&tripped);
                    std::thread::spawn(move || relay(client, server, &tripped));
                }
            });
            Self { connection, lost }
        }

        fn answer_lost(&self) -> bool {
            self.lost.load(Ordering::SeqCst)
        }
    }

    /// Relays one connection until either side closes it or the first ledger `INSERT` is
    /// answered (then both sides are cut).
    fn relay(client: TcpStream, server: TcpStream, tripped: &AtomicBool) {
        let inserting = Arc::new(AtomicBool::new(false));
        let upstream = {
            let (mut client, mut server) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            let inserting = Arc::clone(&inserting);
            std::thread::spawn(move || {
                const MARK: &[u8] = b"INSERT INTO prism_tool_calls";
                // The tail of the previous read, so a mark split across two reads is seen.
                let mut seen = Vec::new();
                let mut buffer = [0; 8192];
                while let Ok(read @ 1..) = client.read(&mut buffer) {
                    seen.extend_from_slice(&buffer[..read]);
                    if seen.windows(MARK.len()).any(|window| window == MARK) {
                        inserting.store(true, Ordering::SeqCst);
                    }
                    seen.drain(..seen.len().saturating_sub(MARK.len()));
                    if server.write_all(&buffer[..read]).is_err() {
                        break;
                    }
                }
                let _ = server.shutdown(Shutdown::Both);
                let _ = client.shutdown(Shutdown::Both);
            })
        };
        // Server messages: a type byte, then a big-endian length that counts itself.
        let (mut from, mut to) = (server.try_clone().unwrap(), client.try_clone().unwrap());
        let mut pending = Vec::new();
        let mut buffer = [0; 8192];
        'relay: while let Ok(read @ 1..) = from.read(&mut buffer) {
            pending.extend_from_slice(&buffer[..read]);
            while pending.len() >= 5 {
                let length = u32::from_be_bytes(pending[1..5].try_into().unwrap()) as usize;
                if pending.len() < 1 + length {
                    break;
                }
                let message: Vec<u8> = pending.drain(..1 + length).collect();
                let insert_done = message[0] == b'C' && message[5..].starts_with(b"INSERT");
                if insert_done
                    && inserting.load(Ordering::SeqCst)
                    && !tripped.swap(true, Ordering::SeqCst)
                {
                    break 'relay;
                }
                if to.write_all(&message).is_err() {
                    break 'relay;
                }
            }
        }
        let _ = server.shutdown(Shutdown::Both);
        let _ = client.shutdown(Shutdown::Both);
        let _ = upstream.join();
    }
}
