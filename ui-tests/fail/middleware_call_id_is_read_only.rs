//! Middleware may rename a call and rewrite its arguments, but never change its id.
use prism::{call::CallId, guard::call_middleware};

fn main() {
    let _forger = call_middleware(|call| {
        call.id = &CallId::new("forged");
    });
}
