//! What a tool body hands back: [`ToolOutput`], a JSON value with content blocks beside it, and
//! [`IntoToolOutput`], the conversion every tool's return type goes through.
//!
//! Most tools return one `Serialize` value, which becomes the result's value. A tool may also
//! return content blocks (an image, audio, a link, an embedded resource; see [`ContentBlock`]):
//! alone ([`ContentBlock`] or `Vec<ContentBlock>`, whose result value is `null`), or beside a
//! value ([`ToolOutput`]).
//!
//! Without specialisation, one blanket conversion for every `Serialize` type cannot sit beside
//! conversions for `ContentBlock` and `Vec<ContentBlock>` (both serialise too), so the blanket
//! conversion asks the value's type first: those two types are taken as content, every other type
//! is serialised. The question is answered when the code is compiled (the two type ids are
//! constants), so a plain value pays nothing for it.

use std::any::{Any, TypeId};

use serde::Serialize;
use serde_json::Value;

use crate::call::ContentBlock;

/// Content blocks as the pipeline carries them: behind one pointer, so an output without any
/// (most of them) moves no larger than its value. The box is the point, hence the allow.
#[allow(clippy::box_collection)]
pub(crate) type Blocks = Option<Box<Vec<ContentBlock>>>;

/// The blocks of `blocks`, in order.
#[inline]
pub(crate) fn blocks(blocks: &Blocks) -> &[ContentBlock] {
    blocks.as_deref().map_or(&[], Vec::as_slice)
}

/// A tool's output: a JSON value and content blocks.
///
/// `ToolOutput` (that is, `ToolOutput<Value>`) is what every tool body produces once erased;
/// `ToolOutput<T>` with a typed value is what a `#[tool]` function or a typed [`Tool`](crate::Tool)
/// returns to pair a structured value with blocks. The value is serialised when the tool returns.
///
/// ```
/// use prism::call::{ContentBlock, ToolOutput};
/// use prism::tool;
/// use serde::Serialize;
///
/// #[derive(Serialize)]
/// struct Chart {
///     points: usize,
/// }
///
/// /// Draws the sales chart.
/// #[tool]
/// fn sales_chart() -> ToolOutput<Chart> {
///     let png = ContentBlock::image_bytes(&[0x89, b'P', b'N', b'G'], "image/png");
///     ToolOutput::new(Chart { points: 12 }).with_content([png])
/// }
/// # let _ = sales_chart::definition();
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput<T = Value> {
    /// The structured value (`null` for a tool that returned only content).
    pub value: T,
    /// The content blocks.
    blocks: Blocks,
}

impl<T> ToolOutput<T> {
    /// A value without content blocks.
    pub fn new(value: T) -> Self {
        Self {
            value,
            blocks: None,
        }
    }

    /// Adds content blocks after the ones already there.
    pub fn with_content(mut self, content: impl IntoIterator<Item = ContentBlock>) -> Self {
        let mut content = content.into_iter().peekable();
        if content.peek().is_some() {
            self.blocks.get_or_insert_default().extend(content);
        }
        self
    }

    /// The content blocks, in order.
    pub fn content(&self) -> &[ContentBlock] {
        blocks(&self.blocks)
    }

    /// The value and the content blocks.
    pub fn into_parts(self) -> (T, Vec<ContentBlock>) {
        (
            self.value,
            self.blocks.map(|blocks| *blocks).unwrap_or_default(),
        )
    }

    /// The value and the content blocks as the pipeline carries them.
    #[inline]
    pub(crate) fn into_raw(self) -> (T, Blocks) {
        (self.value, self.blocks)
    }
}

impl ToolOutput {
    /// Content blocks alone; the value is `null`.
    pub fn blocks(content: impl IntoIterator<Item = ContentBlock>) -> Self {
        Self::new(Value::Null).with_content(content)
    }
}

impl From<Value> for ToolOutput {
    #[inline]
    fn from(value: Value) -> Self {
        Self::new(value)
    }
}

impl From<ContentBlock> for ToolOutput {
    fn from(block: ContentBlock) -> Self {
        Self::blocks([block])
    }
}

impl From<Vec<ContentBlock>> for ToolOutput {
    fn from(content: Vec<ContentBlock>) -> Self {
        Self::blocks(content)
    }
}

/// A type a tool can return: any `Serialize` type (its JSON is the result's value),
/// [`ContentBlock`] and `Vec<ContentBlock>` (content alone, value `null`), and [`ToolOutput<T>`]
/// (a value and content).
///
/// Implement it for a type of your own that does not implement `Serialize` (a chart type that
/// renders itself as an image, say).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's output",
    label = "a tool's output is serialised to JSON, or given as content blocks",
    note = "derive `serde::Serialize` for `{Self}`, or return `ContentBlock`, `Vec<ContentBlock>` or `ToolOutput<T>`"
)]
pub trait IntoToolOutput: Send + 'static {
    /// The erased output; an error when the value cannot be serialised.
    fn into_tool_output(self) -> Result<ToolOutput, serde_json::Error>;
}

#[diagnostic::do_not_recommend]
impl<T: Serialize + Send + 'static> IntoToolOutput for T {
    #[inline]
    fn into_tool_output(self) -> Result<ToolOutput, serde_json::Error> {
        let this = match cast::<T, ContentBlock>(self) {
            Ok(block) => return Ok(ToolOutput::from(block)),
            Err(this) => this,
        };
        let this = match cast::<T, Vec<ContentBlock>>(this) {
            Ok(blocks) => return Ok(ToolOutput::from(blocks)),
            Err(this) => this,
        };
        to_value(this).map(ToolOutput::new)
    }
}

impl<T: Serialize + Send + 'static> IntoToolOutput for ToolOutput<T> {
    #[inline]
    fn into_tool_output(self) -> Result<ToolOutput, serde_json::Error> {
        Ok(ToolOutput {
            value: to_value(self.value)?,
            blocks: self.blocks,
        })
    }
}

/// `value` as JSON; a [`Value`] is taken as it is rather than copied through serde.
#[inline(always)]
fn to_value<T: Serialize + 'static>(value: T) -> Result<Value, serde_json::Error> {
    match cast::<T, Value>(value) {
        Ok(value) => Ok(value),
        Err(value) => serde_json::to_value(value),
    }
}

/// `value` as a `U` when `T` is `U`, or back unchanged. Both types are known when the caller is
/// compiled, so the test folds away.
#[inline(always)]
fn cast<T: 'static, U: 'static>(value: T) -> Result<U, T> {
    if TypeId::of::<T>() != TypeId::of::<U>() {
        return Err(value);
    }
    let mut slot = Some(value);
    let taken = (&mut slot as &mut dyn Any)
        .downcast_mut::<Option<U>>()
        .and_then(Option::take);
    match (taken, slot) {
        (Some(cast), _) => Ok(cast),
        (None, Some(value)) => Err(value),
        (None, None) => unreachable!("a value is only taken when it is cast"),
    }
}
