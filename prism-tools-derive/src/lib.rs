use proc_macro::TokenStream as _T;
