//! Splitting one typed line into arguments the way a shell would, for the two places calyx
//! reads a line it does not hand to a shell: the `:` prompt (`split-window -c "/my files"`) and
//! a hosted stdio server's "Arguments" string (`--root "/my files" -v` is three arguments). No
//! expansion happens (`$HOME` stays literal): what is typed is what the command gets.

use thiserror::Error;

/// Why an argument string cannot be split.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SplitError {
    /// `column` is 1-based and counts characters, so it matches what the user sees.
    #[error("the arguments have an unclosed {quote} quote at column {column}: close it or escape it with a backslash")]
    UnclosedQuote { quote: &'static str, column: usize },
    #[error("the arguments end with a lone backslash at column {column}: escape it as \\\\ or remove it")]
    TrailingBackslash { column: usize },
}

/// Splits `line` into arguments: whitespace separates them; `'...'` keeps everything inside
/// literally; `"..."` keeps everything but lets a backslash escape `"`, `\`, `$` and `` ` ``
/// (POSIX); outside quotes a backslash makes the next character literal. `''` and `""` give an
/// empty argument.
pub fn split_args(line: &str) -> Result<Vec<String>, SplitError> {
    let chars: Vec<char> = line.chars().collect();
    let mut args = Vec::new();
    let mut current = String::new();
    // Whether `current` is an argument even if empty (it saw a quote pair).
    let mut started = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => {
                if started {
                    args.push(std::mem::take(&mut current));
                    started = false;
                }
                i += 1;
            }
            '\'' => {
                let close = chars[i + 1..].iter().position(|&c| c == '\'').ok_or(
                    SplitError::UnclosedQuote {
                        quote: "single",
                        column: i + 1,
                    },
                )?;
                current.extend(&chars[i + 1..i + 1 + close]);
                started = true;
                i += close + 2;
            }
            '"' => {
                let open = i;
                i += 1;
                loop {
                    match chars.get(i) {
                        None => {
                            return Err(SplitError::UnclosedQuote {
                                quote: "double",
                                column: open + 1,
                            })
                        }
                        Some('"') => break,
                        Some('\\') if matches!(chars.get(i + 1), Some('"' | '\\' | '$' | '`')) => {
                            current.push(chars[i + 1]);
                            i += 2;
                        }
                        Some(&other) => {
                            current.push(other);
                            i += 1;
                        }
                    }
                }
                started = true;
                i += 1;
            }
            '\\' => {
                let next = chars
                    .get(i + 1)
                    .ok_or(SplitError::TrailingBackslash { column: i + 1 })?;
                current.push(*next);
                started = true;
                i += 2;
            }
            other => {
                current.push(other);
                started = true;
                i += 1;
            }
        }
    }
    if started {
        args.push(current);
    }
    Ok(args)
}

/// The inverse for display and editing: each argument quoted only when it needs to be, so
/// `split_args(&join_args(a)) == a`.
pub fn join_args(args: &[String]) -> String {
    args.iter()
        .map(|arg| quote_arg(arg))
        .collect::<Vec<_>>()
        .join(" ")
}

fn quote_arg(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| !c.is_whitespace() && !matches!(c, '\'' | '"' | '\\'));
    if plain {
        return arg.to_string();
    }
    // Single quotes keep everything but a single quote, which is closed, escaped and reopened.
    format!("'{}'", arg.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ok(line: &str) -> Vec<String> {
        split_args(line).expect("splits")
    }

    #[test]
    fn whitespace_separates_and_quotes_group() {
        assert_eq!(ok("  a  b\tc "), ["a", "b", "c"]);
        assert_eq!(
            ok(r#"--root "/my files" -v"#),
            ["--root", "/my files", "-v"]
        );
        assert_eq!(ok("'it''s' x"), ["its", "x"]);
        assert_eq!(ok(r#"a"b c"d"#), ["ab cd"]);
        assert_eq!(ok(r#"'' """#), ["", ""]);
        assert!(ok("   ").is_empty());
    }

    #[test]
    fn backslashes_escape() {
        assert_eq!(ok(r"a\ b"), ["a b"]);
        assert_eq!(ok(r#""say \"hi\" \n""#), [r#"say "hi" \n"#]);
        assert_eq!(ok(r"'no \escape'"), [r"no \escape"]);
        assert_eq!(ok(r"\'"), ["'"]);
    }

    #[test]
    fn nothing_is_expanded() {
        assert_eq!(ok("$HOME ~ *.js --"), ["$HOME", "~", "*.js", "--"]);
    }

    #[test]
    fn unclosed_quote_names_its_column() {
        let err = split_args(r#"--a "b c"#).expect_err("unclosed");
        assert_eq!(
            err,
            SplitError::UnclosedQuote {
                quote: "double",
                column: 5
            }
        );
        assert_eq!(
            err.to_string(),
            "the arguments have an unclosed double quote at column 5: close it or escape it with a backslash"
        );
        // Columns count characters, not bytes.
        let err = split_args("é 'x").expect_err("unclosed");
        assert_eq!(
            err,
            SplitError::UnclosedQuote {
                quote: "single",
                column: 3
            }
        );
        assert_eq!(
            split_args(r"a \"),
            Err(SplitError::TrailingBackslash { column: 3 })
        );
    }

    proptest! {
        #[test]
        fn join_then_split_gives_the_arguments_back(args in proptest::collection::vec(".{0,12}", 0..6)) {
            prop_assert_eq!(split_args(&join_args(&args)), Ok(args));
        }

        #[test]
        fn never_panics(line in ".{0,40}") {
            let _ = split_args(&line);
        }
    }
}
