pub use prism_tools::*;
