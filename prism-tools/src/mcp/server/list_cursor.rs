//! The `nextCursor` of a `tools/list` page, and reading one back.
//!
//! A cursor is opaque text: base64url of the offset of the next page's first tool among the tools
//! listed, a digest of the names of the tools this request may list, in order, and a check over
//! both. Nothing in it is kept by the server, and the digest is of the list itself, not of the
//! process or its registry's change count, so any process serving the same tools to the same
//! scope reads the cursors of another (HTTP behind a load balancer, stateless requests).
//!
//! A cursor read back is refused when the check fails or the offset is one this server never
//! writes ("not one this server wrote": it was made up or changed on the way), and when the
//! digest is not that of the list this request may list now: a tool was registered or removed,
//! or the request's scope lists another set, since it was written, and its offset would skip a
//! tool or show one twice. The check is a fixed-seed hash, so it catches a made-up or edited
//! cursor, not a client that computes one; such a client only gets a page of the tools it may
//! list anyway.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// Bytes of the list's digest kept in a cursor: enough that two lists are told apart.
const LIST_DIGEST_LEN: usize = 8;
/// Bytes of the check kept in a cursor.
const CHECK_LEN: usize = 4;
/// A cursor's bytes: the offset (8, big-endian), the list's digest, the check.
const CURSOR_BYTES: usize = 8 + LIST_DIGEST_LEN + CHECK_LEN;
/// Longest cursor text read: the client's text is bounded before it is decoded. A cursor this
/// server writes is 27 characters.
const MAX_CURSOR_LEN: usize = 64;

/// Which list a cursor was written for: the names of the tools a request may list, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ListDigest([u8; LIST_DIGEST_LEN]);

impl ListDigest {
    /// The digest of `names`, in their order.
    pub(super) fn of<'n>(names: impl IntoIterator<Item = &'n str>) -> Self {
        let mut hash = Sha256::new();
        hash.update(b"prism tools/list names\0");
        for name in names {
            // Length-prefixed, so no two lists of names hash the same text.
            hash.update((name.len() as u64).to_be_bytes());
            hash.update(name.as_bytes());
        }
        let mut digest = [0; LIST_DIGEST_LEN];
        digest.copy_from_slice(&hash.finalize()[..LIST_DIGEST_LEN]);
        Self(digest)
    }
}

/// Why a cursor was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CursorRefused {
    /// Made up, changed, or cut: not text this server writes.
    NotWritten,
    /// Written for a list other than the one this request may list now.
    ListChanged,
}

impl CursorRefused {
    /// The error's message, which never quotes the cursor: it is the client's text and may
    /// carry anything, a secret included.
    pub(super) fn message(self) -> &'static str {
        match self {
            Self::NotWritten => "Invalid cursor: it is not one this server wrote",
            Self::ListChanged => {
                "Invalid cursor: the tool list changed since it was written; list again from the start"
            }
        }
    }
}

/// The cursor of the page starting at `offset` in the list `list`.
pub(super) fn write(offset: usize, list: ListDigest) -> String {
    let mut bytes = [0; CURSOR_BYTES];
    let offset = (offset as u64).to_be_bytes();
    bytes[..8].copy_from_slice(&offset);
    bytes[8..8 + LIST_DIGEST_LEN].copy_from_slice(&list.0);
    bytes[8 + LIST_DIGEST_LEN..].copy_from_slice(&check(offset, list));
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The offset `cursor` starts its page at, when it was written for `list`, of `listed` tools.
pub(super) fn read(cursor: &str, list: ListDigest, listed: usize) -> Result<usize, CursorRefused> {
    if cursor.len() > MAX_CURSOR_LEN {
        return Err(CursorRefused::NotWritten);
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| CursorRefused::NotWritten)?;
    let bytes: [u8; CURSOR_BYTES] = bytes.try_into().map_err(|_| CursorRefused::NotWritten)?;
    let mut offset = [0; 8];
    offset.copy_from_slice(&bytes[..8]);
    let mut written_for = ListDigest([0; LIST_DIGEST_LEN]);
    written_for
        .0
        .copy_from_slice(&bytes[8..8 + LIST_DIGEST_LEN]);
    if check(offset, written_for) != bytes[8 + LIST_DIGEST_LEN..] {
        return Err(CursorRefused::NotWritten);
    }
    if written_for != list {
        return Err(CursorRefused::ListChanged);
    }
    // Only the first page goes without a cursor, and a next page starts at a listed tool.
    match usize::try_from(u64::from_be_bytes(offset)) {
        Ok(offset) if offset > 0 && offset < listed => Ok(offset),
        _ => Err(CursorRefused::NotWritten),
    }
}

/// Ties the offset to the list, so neither is changed alone.
fn check(offset: [u8; 8], list: ListDigest) -> [u8; CHECK_LEN] {
    let mut hash = Sha256::new();
    hash.update(b"prism tools/list cursor\0");
    hash.update(offset);
    hash.update(list.0);
    let mut check = [0; CHECK_LEN];
    check.copy_from_slice(&hash.finalize()[..CHECK_LEN]);
    check
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(names: &[&str]) -> ListDigest {
        ListDigest::of(names.iter().copied())
    }

    #[test]
    fn a_cursor_reads_back_as_its_offset_on_the_same_list() {
        let tools = list(&["a", "b", "c", "d"]);
        for offset in 1..4 {
            let cursor = write(offset, tools);
            assert_eq!(cursor.len(), 27);
            assert!(cursor.len() <= MAX_CURSOR_LEN);
            assert_eq!(read(&cursor, list(&["a", "b", "c", "d"]), 4), Ok(offset));
        }
        assert_eq!(write(2, tools), write(2, list(&["a", "b", "c", "d"])));
    }

    #[test]
    fn a_cursor_for_another_list_is_refused_as_the_list_changed() {
        let cursor = write(2, list(&["a", "b", "c", "d"]));
        for other in [
            list(&["a", "c", "d"]),
            list(&["a", "b", "c", "d", "e"]),
            list(&["b", "a", "c", "d"]),
            // Names that run together the same way are still another list.
            list(&["ab", "c", "d"]),
        ] {
            assert_eq!(read(&cursor, other, 4), Err(CursorRefused::ListChanged));
        }
    }

    #[test]
    fn text_this_server_does_not_write_is_refused() {
        let tools = list(&["a", "b", "c", "d"]);
        let cursor = write(2, tools);
        let long = format!("{cursor}{}", "A".repeat(10_000));
        let mut edited = URL_SAFE_NO_PAD.decode(&cursor).unwrap();
        edited[7] = 3;
        let edited = URL_SAFE_NO_PAD.encode(edited);
        let cut = &cursor[..cursor.len() - 1];
        for forged in ["", "1", "2", "16", "-1", &long, &edited, cut, "cursor!"] {
            assert_eq!(
                read(forged, tools, 4),
                Err(CursorRefused::NotWritten),
                "{forged:?}"
            );
        }
        // Offsets this server never writes, even with a matching check.
        for offset in [0, 4, 5, usize::MAX] {
            assert_eq!(
                read(&write(offset, tools), tools, 4),
                Err(CursorRefused::NotWritten)
            );
        }
    }
}
