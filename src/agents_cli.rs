//! Printing `calyx agents`.

use std::process::ExitCode;

use crate::protocol::Response;

/// Prints the agent rows as a table or JSON.
pub fn print(response: Response, json: bool) -> ExitCode {
    match response {
        Response::Json(value) => {
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&value).unwrap_or_default()
                );
            } else {
                let rows = value
                    .get("agents")
                    .and_then(|a| a.as_array())
                    .cloned()
                    .unwrap_or_default();
                if rows.is_empty() {
                    println!("no agents have reported");
                }
                for row in rows {
                    println!("{}", row);
                }
            }
            ExitCode::SUCCESS
        }
        Response::Error(e) => {
            eprintln!("calyx: {e}");
            ExitCode::FAILURE
        }
        _ => ExitCode::FAILURE,
    }
}
