//! The readable part of an HTML page (what a reader view shows), with its metadata, by
//! dom_smoothie, a port of Mozilla's Readability. The README's web section has the comparison
//! with another port on the 65 reference pages that led to it.

use dom_smoothie::{Config, Readability, ReadabilityError, TextMode};

use super::error::{WebError, WebErrorKind};
use super::page::{MAX_NESTING, TextFormat, deeper_than, tidy_lines};
use super::parse::parse_page;

/// The article of a page and its metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadableArticle {
    /// The article's title.
    pub title: String,
    /// The author line.
    pub byline: Option<String>,
    /// The site's name.
    pub site_name: Option<String>,
    /// The document language (`en`, `fr-FR`).
    pub lang: Option<String>,
    /// The text direction (`ltr`, `rtl`), when the page says.
    pub dir: Option<String>,
    /// When the article was published, as the page writes it.
    pub published_time: Option<String>,
    /// A short summary (the page's description, or the first paragraph).
    pub excerpt: Option<String>,
    /// The article as markdown or text, links resolved against the page's URL.
    pub content: String,
}

/// Extracts the article of `html`, whose address is `base_url` (relative links in the content
/// are resolved against it; `None` leaves them as written). A page whose elements nest more than
/// 256 levels deep is [`NotReadable`](WebErrorKind::NotReadable): no article is that deep, and
/// the extractor would recurse past the end of the stack.
///
/// ```
/// use prism::tools::web::{TextFormat, extract_article};
///
/// let html = "<html lang='en'><head><title>Tides</title></head><body><article>\
///     <h1>Tides</h1><p>The tide rises twice a day, pulled by the moon and, less, by the sun. \
///     Spring tides come when both pull together; neap tides when they pull at right angles.</p>\
///     <p>See <a href='/moon'>the moon page</a> for the orbit, and the tables for times.</p>\
///     </article></body></html>";
/// let article = extract_article(html, Some("https://example.org/sea/"), TextFormat::Markdown).unwrap();
/// assert_eq!(article.lang.as_deref(), Some("en"));
/// assert!(article.content.contains("https://example.org/moon"), "{}", article.content);
/// ```
pub fn extract_article(
    html: &str,
    base_url: Option<&str>,
    format: TextFormat,
) -> Result<ReadableArticle, WebError> {
    let config = Config {
        text_mode: match format {
            TextFormat::Markdown => TextMode::Markdown,
            TextFormat::Text => TextMode::Formatted,
        },
        ..Config::default()
    };
    let document = parse_page(html)?;
    if deeper_than(&document, MAX_NESTING) {
        return Err(WebError::new(
            WebErrorKind::NotReadable,
            format!("no readable article: elements nest more than {MAX_NESTING} levels deep"),
        ));
    }
    let mut readability =
        Readability::with_document(document, base_url, Some(config)).map_err(extract_error)?;
    let article = readability.parse().map_err(extract_error)?;
    let content = match format {
        TextFormat::Markdown => article.text_content.trim().to_owned(),
        TextFormat::Text => tidy_lines(&article.text_content),
    };
    Ok(ReadableArticle {
        title: article.title,
        byline: article.byline,
        site_name: article.site_name,
        lang: article.lang,
        dir: article.dir,
        published_time: article.published_time,
        excerpt: article.excerpt,
        content,
    })
}

fn extract_error(error: ReadabilityError) -> WebError {
    match error {
        ReadabilityError::BadDocumentURL => WebError::new(
            WebErrorKind::InvalidUrl,
            "the page's base URL must be absolute",
        ),
        other => WebError::new(
            WebErrorKind::NotReadable,
            format!("no readable article: {other}"),
        ),
    }
}
