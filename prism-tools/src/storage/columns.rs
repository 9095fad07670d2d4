//! How a [`ToolCallRecord`] is laid out in a SQL table: the whole row as JSON text (so nothing is
//! lost and new fields need no migration) beside the columns that queries filter on.

use crate::dispatch::{LedgerError, ToolCallRecord};

/// The stored form of one row.
pub(crate) struct RowColumns {
    pub(crate) session_id: Option<String>,
    pub(crate) run_id: Option<String>,
    pub(crate) tool_call_id: String,
    pub(crate) tool_name: String,
    pub(crate) status: &'static str,
    pub(crate) tenant_id: Option<String>,
    pub(crate) user_id: Option<String>,
    pub(crate) record: String,
}

impl RowColumns {
    pub(crate) fn encode(row: &ToolCallRecord) -> Result<Self, LedgerError> {
        let record = serde_json::to_string(row)
            .map_err(|error| LedgerError(format!("could not encode a row: {error}")))?;
        let ownership = row.ownership.as_deref();
        Ok(Self {
            session_id: row.session_id.as_deref().map(str::to_owned),
            run_id: row.run_id.as_deref().map(str::to_owned),
            tool_call_id: row.tool_call_id.as_str().to_owned(),
            tool_name: row.tool_name.to_string(),
            status: row.status.as_str(),
            tenant_id: ownership.and_then(|scope| scope.tenant_id.clone()),
            user_id: ownership.and_then(|scope| scope.user_id.clone()),
            record,
        })
    }
}

/// `WHERE a = ?1 AND b = ?2 …` over the query's set columns, with placeholders made by
/// `placeholder(position)`; empty when the query selects everything.
pub(crate) fn where_clause(
    query: &crate::storage::RecordQuery,
    placeholder: impl Fn(usize) -> String,
) -> (String, Vec<String>) {
    let mut clause = String::new();
    let mut values = Vec::new();
    for (position, (column, value)) in query.columns().enumerate() {
        clause.push_str(if position == 0 { " WHERE " } else { " AND " });
        clause.push_str(column);
        clause.push_str(" = ");
        clause.push_str(&placeholder(position + 1));
        values.push(value.to_owned());
    }
    (clause, values)
}
