//! [`LedgerLocation`]: where a program's ledger lives, chosen by one environment variable so that
//! examples and small hosts work with no set-up (a SQLite file in the user's own state directory)
//! and move to PostgreSQL by setting a URL.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::dispatch::{LedgerError, RunLedger, ToolCallRecord};
use crate::effects::BoxFuture;
use crate::storage::conninfo::{self, Conninfo};
use crate::storage::{LedgerReader, RecordQuery, SqliteLedger, StorageError};

/// The environment variable [`LedgerLocation::from_env`] reads.
pub const LEDGER_URL_VAR: &str = "PRISM_LEDGER_URL";

/// Where a ledger lives.
///
/// ```
/// use prism::storage::LedgerLocation;
///
/// let location = LedgerLocation::parse("sqlite:/tmp/agent.sqlite3").unwrap();
/// assert_eq!(location, LedgerLocation::Sqlite("/tmp/agent.sqlite3".into()));
/// assert_eq!(location.to_string(), "SQLite file /tmp/agent.sqlite3");
///
/// let postgres = LedgerLocation::parse("postgres://agent:s3cret@db.internal/agents").unwrap();
/// assert_eq!(postgres.to_string(), "PostgreSQL database agents");
/// assert!(!format!("{postgres:?}").contains("s3cret"));
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LedgerLocation {
    /// A SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL database, by connection URL or keyword/value string (feature `postgres`).
    Postgres(String),
}

impl LedgerLocation {
    /// `prism/ledger.sqlite3` in the user's own state directory: `$XDG_STATE_HOME` or
    /// `~/.local/state` on Linux, the local application data directory elsewhere. Not the temp
    /// directory, where any user could create that file first and read every row written to it;
    /// only without a home directory is it `prism-ledger.sqlite3` there.
    pub fn default_sqlite() -> Self {
        let path = match dirs::state_dir().or_else(dirs::data_local_dir) {
            Some(dir) => dir.join("prism").join("ledger.sqlite3"),
            None => std::env::temp_dir().join("prism-ledger.sqlite3"),
        };
        Self::Sqlite(path)
    }

    /// Reads [`LEDGER_URL_VAR`] (`PRISM_LEDGER_URL`); unset or empty means
    /// [`default_sqlite`](Self::default_sqlite).
    pub fn from_env() -> Result<Self, StorageError> {
        match std::env::var(LEDGER_URL_VAR) {
            Ok(url) if !url.trim().is_empty() => Self::parse(url.trim()),
            Ok(_) | Err(std::env::VarError::NotPresent) => Ok(Self::default_sqlite()),
            Err(std::env::VarError::NotUnicode(_)) => Err(StorageError::new(format!(
                "{LEDGER_URL_VAR} is not valid UTF-8"
            ))),
        }
    }

    /// `postgres://…`, `postgresql://…` or libpq's keyword/value form (`host=db dbname=agents
    /// user=agent`: `key=value` pairs, one key at least a libpq keyword) is PostgreSQL;
    /// `sqlite:PATH`, `sqlite://PATH` (so `sqlite://agent.db` is relative and
    /// `sqlite:///var/agent.db` absolute, as other tools read them) or a bare path is SQLite.
    /// Schemes are read in any case. A file whose name reads as a keyword string (`user=x.db`)
    /// takes the `sqlite:` prefix.
    ///
    /// A string that starts as a keyword string but cannot be read (a quote left open) is an
    /// error, which does not repeat the string: it may hold a password.
    pub fn parse(location: &str) -> Result<Self, StorageError> {
        let scheme = |name: &str| {
            location
                .get(..name.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(name))
                .then(|| &location[name.len()..])
        };
        if scheme("postgres://").is_some() || scheme("postgresql://").is_some() {
            return Ok(Self::Postgres(location.to_owned()));
        }
        match conninfo::classify(location) {
            Conninfo::Yes => return Ok(Self::Postgres(location.to_owned())),
            Conninfo::Unreadable => {
                return Err(StorageError::new(
                    "the ledger location starts as a PostgreSQL `key=value` connection string \
                     but cannot be read (a quote left open?); for a SQLite file of that name, \
                     write `sqlite:` before it",
                ));
            }
            Conninfo::No => {}
        }
        let path = scheme("sqlite://")
            .or_else(|| scheme("sqlite:"))
            .unwrap_or(location);
        if path.is_empty() {
            return Err(StorageError::new(
                "the SQLite ledger location names no file",
            ));
        }
        Ok(Self::Sqlite(PathBuf::from(path)))
    }

    /// Opens the ledger, creating and migrating its database as needed.
    pub async fn open(&self) -> Result<DurableLedger, StorageError> {
        match self {
            Self::Sqlite(path) => {
                create_private_parent(path)?;
                Ok(DurableLedger::Sqlite(SqliteLedger::open(path.clone())?))
            }
            #[cfg(feature = "postgres")]
            Self::Postgres(url) => {
                let options = crate::storage::PostgresOptions::new(url)?;
                let ledger = crate::storage::PostgresLedger::connect(options).await?;
                Ok(DurableLedger::Postgres(ledger))
            }
            #[cfg(not(feature = "postgres"))]
            Self::Postgres(_) => Err(StorageError::new(
                "this build has no PostgreSQL support: enable the `postgres` feature",
            )),
        }
    }
}

impl fmt::Display for LedgerLocation {
    /// Never shows a password: a PostgreSQL location prints only its database name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sqlite(path) => write!(f, "SQLite file {}", path.display()),
            Self::Postgres(url) => {
                // The path of a URL (never its query, which may hold `password=`), or the
                // `dbname` of a keyword string.
                let database = match url.split_once("://") {
                    Some((_, rest)) => rest
                        .split('?')
                        .next()
                        .and_then(|rest| rest.split_once('/'))
                        .map(|(_, path)| path),
                    // Read as pairs: a quoted password may hold ` dbname=`.
                    None => conninfo::raw_value(url, "dbname"),
                }
                .filter(|name| !name.is_empty() && !name.contains(['@', '=', '\'', '\\']))
                .unwrap_or("(default)");
                write!(f, "PostgreSQL database {database}")
            }
        }
    }
}

impl fmt::Debug for LedgerLocation {
    /// As [`Display`](fmt::Display): a connection URL may hold a password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LedgerLocation({self})")
    }
}

/// The ledger a [`LedgerLocation`] opened: either backend, behind one type. Cheap to clone.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum DurableLedger {
    /// A SQLite ledger.
    Sqlite(SqliteLedger),
    /// A PostgreSQL ledger.
    #[cfg(feature = "postgres")]
    Postgres(crate::storage::PostgresLedger),
}

impl RunLedger for DurableLedger {
    fn append(&self, record: &ToolCallRecord) {
        match self {
            Self::Sqlite(ledger) => ledger.append(record),
            #[cfg(feature = "postgres")]
            Self::Postgres(ledger) => ledger.append(record),
        }
    }

    fn flush(&self) -> Result<(), LedgerError> {
        match self {
            Self::Sqlite(ledger) => ledger.flush(),
            #[cfg(feature = "postgres")]
            Self::Postgres(ledger) => ledger.flush(),
        }
    }
}

impl LedgerReader for DurableLedger {
    fn read<'a>(
        &'a self,
        query: &'a RecordQuery,
    ) -> BoxFuture<'a, Result<Vec<ToolCallRecord>, LedgerError>> {
        match self {
            Self::Sqlite(ledger) => ledger.read(query),
            #[cfg(feature = "postgres")]
            Self::Postgres(ledger) => ledger.read(query),
        }
    }
}

/// Makes the directory `path` is in when it is missing, readable and writable by its owner
/// alone (on Unix): ledger rows are the host's to read.
fn create_private_parent(path: &Path) -> Result<(), StorageError> {
    let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    else {
        return Ok(());
    };
    if parent.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(parent).map_err(|error| {
        StorageError::new(format!(
            "could not create the ledger's directory {}: {error}",
            parent.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::LedgerLocation;
    use std::path::PathBuf;

    /// Every user can write to the temp directory, so a fixed name there is a file another user
    /// can create first, and read. With a home directory the default is under it instead.
    #[test]
    fn the_default_ledger_is_not_in_the_shared_temp_directory() {
        if std::env::var_os("HOME").is_none() {
            eprintln!("skipped: no home directory to hold the default ledger");
            return;
        }
        let LedgerLocation::Sqlite(path) = LedgerLocation::default_sqlite() else {
            panic!("the default is SQLite");
        };
        assert!(
            !path.starts_with(std::env::temp_dir()),
            "{}",
            path.display()
        );
        assert!(path.ends_with("prism/ledger.sqlite3"), "{}", path.display());
    }

    /// A ledger's directory is made when it is missing, readable by its owner alone.
    #[tokio::test]
    async fn opening_makes_the_ledger_directory_private() {
        let dir = tempfile::tempdir().unwrap();
        let parent = dir.path().join("state").join("prism");
        let location = LedgerLocation::Sqlite(parent.join("ledger.sqlite3"));
        let ledger = location.open().await.unwrap();
        drop(ledger);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&parent).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        }
    }

    #[test]
    fn sqlite_urls_are_read_as_other_tools_write_them() {
        for (location, path) in [
            ("sqlite://agent.db", "agent.db"),
            ("sqlite:///var/lib/agent.db", "/var/lib/agent.db"),
            ("sqlite:agent.db", "agent.db"),
            ("SQLite:/tmp/a.db", "/tmp/a.db"),
            ("agent.db", "agent.db"),
        ] {
            match LedgerLocation::parse(location).unwrap() {
                LedgerLocation::Sqlite(parsed) => assert_eq!(parsed, PathBuf::from(path)),
                other => panic!("{location}: {other:?}"),
            }
        }
        assert!(matches!(
            LedgerLocation::parse("POSTGRES://db.internal/agents").unwrap(),
            LedgerLocation::Postgres(_)
        ));
    }

    #[test]
    fn a_postgres_location_never_shows_a_password_wherever_the_url_holds_it() {
        for (url, database) in [
            ("postgres://agent:s3cret@db.internal/agents", "agents"),
            (
                "postgres://agent@/agents?host=/var/run/postgresql&password=s3cret",
                "agents",
            ),
            (
                "postgresql://agent:s3cret@db.internal?host=/x/s3cret",
                "(default)",
            ),
            ("host=/var/run dbname=agents password=s3cret", "agents"),
            ("password='x dbname=s3cret' dbname=agents", "agents"),
            ("password='s3cret?' dbname=agents", "agents"),
        ] {
            let location = LedgerLocation::Postgres(url.to_owned());
            let shown = format!("{location} {location:?}");
            assert!(!shown.contains("s3cret"), "{url}: {shown}");
            assert_eq!(
                location.to_string(),
                format!("PostgreSQL database {database}")
            );
        }
    }

    /// libpq's keyword/value form is PostgreSQL, as its URL form is; a file path that holds `=`
    /// but is no such string stays a SQLite file.
    #[test]
    fn a_libpq_keyword_value_string_is_postgres_not_a_file_name() {
        for location in [
            "host=localhost dbname=prism user=me",
            "dbname=prism",
            "  host = /var/run/postgresql port=5433 ",
            "host=db password='a \\'secret\\' here' sslmode=require",
            "service=agents application_name=prism",
        ] {
            assert!(
                matches!(
                    LedgerLocation::parse(location),
                    Ok(LedgerLocation::Postgres(_))
                ),
                "{location}"
            );
        }
        for path in [
            "a=b.db",
            "/tmp/x=y/ledger.sqlite3",
            "ledger=1.db other",
            "colour=blue size=big",
            "./host=db",
        ] {
            match LedgerLocation::parse(path) {
                Ok(LedgerLocation::Sqlite(parsed)) => assert_eq!(parsed, PathBuf::from(path)),
                other => panic!("{path}: {other:?}"),
            }
        }
    }

    /// A keyword string that cannot be read (an unclosed quote) is refused, not taken as a file
    /// name, and the refusal does not repeat the password.
    #[test]
    fn an_unreadable_keyword_string_is_refused_without_its_password() {
        let error = LedgerLocation::parse("host=db password='s3cret").unwrap_err();
        assert!(!error.message().contains("s3cret"), "{}", error.message());
    }
}
