//! Every key of `#[tool(...)]`.

use std::time::Duration;

use prism::tool;
use prism::effects::EffectPolicy;

/// Not what the model reads.
#[tool(
    name = "files.delete",
    description = "Deletes a file.",
    title = "Delete file",
    destructive,
    idempotent = true,
    read_only = false,
    open_world = false,
    exclusive,
    effect = EffectPolicy::new(Duration::from_secs(60)).with_scope("files")
)]
fn delete_file(path: String) -> bool {
    !path.is_empty()
}

/// Sends an email at most once.
#[tool(effect, open_world)]
async fn send_email(to: String) -> String {
    to
}

fn main() {
    let definition = delete_file::definition();
    assert_eq!(definition.name(), "files.delete");
    assert_eq!(definition.description(), Some("Deletes a file."));
    let hints = definition.annotations();
    assert_eq!(hints.title.as_deref(), Some("Delete file"));
    assert_eq!(
        (hints.destructive, hints.idempotent, hints.read_only, hints.open_world),
        (Some(true), Some(true), Some(false), Some(false))
    );
    assert!(definition.is_exclusive());
    let effect = definition.effect().unwrap();
    assert_eq!((effect.lease, effect.scope.as_deref()), (Duration::from_secs(60), Some("files")));

    let definition = send_email::definition();
    assert_eq!(definition.effect(), Some(&EffectPolicy::default()));
    assert_eq!(definition.annotations().open_world, Some(true));
    assert!(!definition.is_exclusive());
    assert_eq!(definition.annotations().title, None);
}
