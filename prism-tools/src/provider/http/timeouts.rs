//! [`Timeouts`]: how long each phase of a provider turn may take.

use std::time::Duration;

/// The limits of one provider turn. Each one that fires is a
/// [`Transport`](crate::run::ProviderErrorKind::Transport) error naming it; connect and first-byte
/// timeouts are retried like a failed connection, the others end the turn.
///
/// ```
/// use std::time::Duration;
/// use prism::provider::http::Timeouts;
///
/// let timeouts = Timeouts::default().with_gap(Duration::from_secs(20));
/// assert_eq!(timeouts.connect, Duration::from_secs(10));
/// assert_eq!(timeouts.gap, Duration::from_secs(20));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timeouts {
    /// Opening the connection (TCP and TLS).
    pub connect: Duration,
    /// From sending the request to the answer's head and on to its first event (for a whole
    /// answer, the first piece of its body), one limit for both: a reasoning model may think a
    /// while before it says anything.
    pub first_byte: Duration,
    /// Between two events of a stream, or two pieces of a whole body.
    pub gap: Duration,
    /// The whole turn, retries and their waits included.
    pub turn: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_secs(120),
            gap: Duration::from_secs(90),
            turn: Duration::from_secs(600),
        }
    }
}

impl Timeouts {
    /// Sets the connect timeout.
    pub fn with_connect(mut self, limit: Duration) -> Self {
        self.connect = limit;
        self
    }

    /// Sets the first-byte timeout.
    pub fn with_first_byte(mut self, limit: Duration) -> Self {
        self.first_byte = limit;
        self
    }

    /// Sets the longest gap between two events.
    pub fn with_gap(mut self, limit: Duration) -> Self {
        self.gap = limit;
        self
    }

    /// Sets the limit of the whole turn.
    pub fn with_turn(mut self, limit: Duration) -> Self {
        self.turn = limit;
        self
    }
}
