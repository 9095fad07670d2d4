use prism::tools;

struct Wrapper<T>(T);

#[tools]
impl<T: Send + Sync + 'static> Wrapper<T> {
    /// Says hello.
    #[tool]
    fn hello(&self) -> String {
        "hello".to_owned()
    }
}

trait Greeter {
    fn greet(&self) -> String;
}

struct English;

#[tools]
impl Greeter for English {
    /// Greets.
    #[tool]
    fn greet(&self) -> String {
        "hello".to_owned()
    }
}

struct Empty;

#[tools]
impl Empty {
    fn helper(&self) {}
}

fn main() {}
