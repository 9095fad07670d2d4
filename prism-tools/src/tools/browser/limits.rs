//! [`BrowserLimits`]: how long each step may take and how much each output may hold.

use std::time::Duration;

/// The bounds every browser tool works within. Start from [`BrowserLimits::default`] and change
/// what the host needs:
///
/// ```
/// use std::time::Duration;
/// use prism::tools::browser::BrowserLimits;
///
/// let limits = BrowserLimits {
///     navigation_timeout: Duration::from_secs(60),
///     snapshot_max_chars: 20_000,
///     ..BrowserLimits::default()
/// };
/// assert_eq!(limits.viewport, (1280, 800));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrowserLimits {
    /// A navigation, from the request to the page's load event. Default 30 s.
    pub navigation_timeout: Duration,
    /// One action, a snapshot or a screenshot. Default 15 s.
    pub action_timeout: Duration,
    /// After a click, a key press or a choice, how long to watch for a navigation it started
    /// before answering (each such action takes at least this long). Default 500 ms.
    pub settle_window: Duration,
    /// Characters of snapshot text; the tree is cut at a line and marked truncated. Default
    /// 40,000.
    pub snapshot_max_chars: usize,
    /// Characters of one name or value in a snapshot. Default 200.
    pub snapshot_max_text: usize,
    /// The page's viewport in CSS pixels, width and height. Default 1280 x 800.
    pub viewport: (u32, u32),
    /// A screenshot's largest width and height in pixels; larger captures are scaled down.
    /// Default 1280 x 1280.
    pub screenshot_max_pixels: (u32, u32),
    /// A screenshot's largest encoded size; PNG first, then JPEG, then scaled down. Default
    /// 1 MiB.
    pub screenshot_max_bytes: usize,
    /// Browser contexts open at once (one per run). Default 16.
    pub max_contexts: usize,
}

impl Default for BrowserLimits {
    fn default() -> Self {
        BrowserLimits {
            navigation_timeout: Duration::from_secs(30),
            action_timeout: Duration::from_secs(15),
            settle_window: Duration::from_millis(500),
            snapshot_max_chars: 40_000,
            snapshot_max_text: 200,
            viewport: (1280, 800),
            screenshot_max_pixels: (1280, 1280),
            screenshot_max_bytes: 1 << 20,
            max_contexts: 16,
        }
    }
}
