//! Web tools: `web_fetch`, `web_extract` and `web_search` (feature `web`).
//!
//! Three narrow tools a host selects and registers like any other. They share one
//! [`UrlPolicy`]: http and https only, host allow and deny lists, no credentials in URLs, a
//! redirect limit, and no loopback, private, link-local, unique-local, multicast or cloud
//! metadata address, checked on IP literals, on every DNS answer and on every redirect hop,
//! unless the host allows a class explicitly ([`UrlPolicy::allow_addresses`]).
//!
//! Every output is bounded (bytes read, on the wire and decompressed; characters returned;
//! search results counted) and marked untrusted, so the provider wire formats fence it as data
//! and guardrails see the mark. The tools are read-only, open-world and idempotent, and never
//! exclusive.
//!
//! ```no_run
//! use prism::ToolRegistry;
//! use prism::tools::web::{UrlPolicy, WebFetcher, web_extract, web_fetch, DEFAULT_MAX_CHARS};
//!
//! let fetcher = WebFetcher::new(UrlPolicy::new().deny_host("intranet.example")).unwrap();
//! let registry = ToolRegistry::from_iter([
//!     web_fetch(fetcher.clone(), DEFAULT_MAX_CHARS),
//!     web_extract(fetcher, DEFAULT_MAX_CHARS),
//! ]);
//! # let _ = registry;
//! ```

mod address;
mod body;
mod brave;
mod charset;
mod client;
mod error;
mod extract;
mod extract_tool;
mod fetch;
mod fetch_tool;
mod page;
mod parse;
mod search;
mod search_tool;
mod searxng;
pub(crate) mod tool_base;
mod url_policy;

pub use address::{AddressClass, classify};
pub use brave::{BRAVE_ENDPOINT, BraveBackend};
pub use error::{WebError, WebErrorKind};
pub use extract::{ReadableArticle, extract_article};
pub use extract_tool::web_extract;
pub use fetch::{DEFAULT_MEDIA_TYPES, FetchLimits, FetchedPage, WebFetcher};
pub use fetch_tool::{DEFAULT_MAX_CHARS, web_fetch};
pub use page::TextFormat;
pub use search::{SearchBackend, SearchFuture, SearchHit, SearchQuery};
pub use search_tool::{DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS, web_search};
pub use searxng::SearxngBackend;
pub use url_policy::{DEFAULT_MAX_REDIRECTS, RESOLVE_TIMEOUT, UrlPolicy};
