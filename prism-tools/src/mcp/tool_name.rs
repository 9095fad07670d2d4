//! MCP's rule for a tool's name, which a remote tool's local name, a prefixing server's name and
//! every tool a server lists follow.

/// Whether `name` follows MCP's tool name rule: 1 to 128 of `A-Z a-z 0-9 _ - .`.
pub(super) fn is_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.'))
}

/// [`is_tool_name`], with the reason a name does not follow the rule.
pub(super) fn check_name(name: &str) -> Result<(), String> {
    if is_tool_name(name) {
        Ok(())
    } else if name.len() <= 128 {
        Err(format!(
            "`{name}` is not a valid tool name (1 to 128 of A-Z a-z 0-9 _ - .)"
        ))
    } else {
        // Not quoted: a cut could split a credential the server wrote in it.
        Err(format!(
            "a name of {} bytes is not a valid tool name (1 to 128 of A-Z a-z 0-9 _ - .)",
            name.len()
        ))
    }
}
