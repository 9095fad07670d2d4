use prism::guard::permission_fn;

fn main() {
    // A refusal needs `.into()`: the closure's error type is fixed to `Refusal`, which is what
    // lets `Ok(())` compile without an annotation.
    let _ = permission_fn(|tool, _args, _ctx| {
        if tool.name() == "delete" {
            Err("deleting needs a person")
        } else {
            Ok(())
        }
    });
}
