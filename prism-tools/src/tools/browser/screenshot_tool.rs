//! `browser_screenshot`: the page's viewport or one element as an image content block, bounded
//! in pixels and bytes.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::browser_tools::BrowserTools;
use super::element::resolve;
use super::error::{BrowserError, BrowserErrorKind};
use super::page_info::{call_on, evaluate};
use super::run_context::RunContext;
use super::tool_base::{browser_tool, run_call};
use crate::call::{ContentBlock, ToolOutput};
use crate::definition::ToolDefinition;
use crate::tools::web::tool_base::decode_args;

/// Arguments of `browser_screenshot`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ScreenshotArgs {
    /// An element's ref from the latest browser_snapshot; the visible page when absent.
    #[serde(default, rename = "ref")]
    reference: Option<String>,
}

/// The `browser_screenshot` tool: the visible part of the page, or one element, as an image
/// content block beside `{width, height, media_type, bytes}`. Captures wider or taller than
/// [`BrowserLimits::screenshot_max_pixels`](super::BrowserLimits::screenshot_max_pixels) are
/// scaled down; a PNG over
/// [`BrowserLimits::screenshot_max_bytes`](super::BrowserLimits::screenshot_max_bytes) is
/// retried as JPEG, then at half the scale, then refused as `too_large`.
pub fn browser_screenshot(tools: BrowserTools) -> ToolDefinition {
    browser_tool::<ScreenshotArgs>(
        "browser_screenshot",
        "Takes a screenshot of the visible page, or of one element by its ref from the latest \
         browser_snapshot, and returns it as an image.",
        true,
    )
    .run_output(move |arguments, ctx| {
        let tools = tools.clone();
        async move {
            let args: ScreenshotArgs = decode_args(arguments)?;
            run_call(&ctx, async {
                let run = tools.context_for(&ctx).await?;
                let limit = run.limits.action_timeout;
                run.bounded(
                    "the screenshot",
                    limit,
                    screenshot(&run, args.reference.as_deref()),
                )
                .await
            })
            .await
        }
    })
}

/// A region of the page in CSS pixels, in document coordinates.
#[derive(Clone, Copy, Debug)]
struct Region {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
}

const ELEMENT_REGION: &str = "function() {
  this.scrollIntoView({ block: 'center', inline: 'center' });
  const box = this.getBoundingClientRect();
  return { x: box.left + window.scrollX, y: box.top + window.scrollY,
           width: box.width, height: box.height };
}";

const VIEWPORT_REGION: &str = "({ x: window.scrollX, y: window.scrollY, \
    width: window.innerWidth, height: window.innerHeight })";

async fn screenshot(run: &RunContext, reference: Option<&str>) -> Result<ToolOutput, BrowserError> {
    let refs = run.lock().await;
    let region = match reference {
        Some(reference) => {
            let element = resolve(run, &refs, reference).await?;
            region(call_on(run, &element.object_id, ELEMENT_REGION, &[]).await?)?
        }
        None => region(evaluate(run, VIEWPORT_REGION).await?)?,
    };
    if region.width < 1.0 || region.height < 1.0 {
        return Err(BrowserError::new(
            BrowserErrorKind::Action,
            "the element has no visible size to capture",
        ));
    }
    let (max_width, max_height) = run.limits.screenshot_max_pixels;
    let fit = (f64::from(max_width) / region.width)
        .min(f64::from(max_height) / region.height)
        .min(1.0);
    let max_bytes = run.limits.screenshot_max_bytes;
    for (format, quality, scale) in [
        ("png", None, fit),
        ("jpeg", Some(80), fit),
        ("jpeg", Some(60), fit / 2.0),
    ] {
        let mut params = json!({
            "format": format,
            "captureBeyondViewport": reference.is_some(),
            "clip": {"x": region.x, "y": region.y, "width": region.width,
                     "height": region.height, "scale": scale},
        });
        if let Some(quality) = quality {
            params["quality"] = json!(quality);
        }
        let answer = run.call("Page.captureScreenshot", params).await?;
        let data = answer
            .get("data")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let bytes = STANDARD.decode(data).map_err(|error| {
            BrowserError::protocol("Page.captureScreenshot", format!("bad image data: {error}"))
        })?;
        if bytes.len() > max_bytes {
            continue;
        }
        let media_type = format!("image/{format}");
        let (width, height) = png_size(&bytes).unwrap_or((
            (region.width * scale).round() as u32,
            (region.height * scale).round() as u32,
        ));
        let value = json!({
            "width": width,
            "height": height,
            "media_type": media_type,
            "bytes": bytes.len(),
            "ref": reference,
        });
        let image = ContentBlock::image_base64(data, media_type);
        return Ok(ToolOutput::new(value).with_content([image]));
    }
    Err(BrowserError::new(
        BrowserErrorKind::TooLarge,
        format!("the screenshot stays over {max_bytes} bytes even as a half-scale JPEG"),
    ))
}

fn region(value: Value) -> Result<Region, BrowserError> {
    let number = |field: &str| value.get(field).and_then(Value::as_f64);
    match (number("x"), number("y"), number("width"), number("height")) {
        (Some(x), Some(y), Some(width), Some(height)) => Ok(Region {
            x,
            y,
            width,
            height,
        }),
        _ => Err(BrowserError::protocol("measuring the capture", "no box")),
    }
}

/// A PNG's width and height, from its header.
fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" {
        return None;
    }
    let width = u32::from_be_bytes(bytes[16..20].try_into().ok()?);
    let height = u32::from_be_bytes(bytes[20..24].try_into().ok()?);
    Some((width, height))
}
