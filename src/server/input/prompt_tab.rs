//! What Tab does to the `:` prompt's text, as tmux users expect: one candidate completes (with
//! a space after it, or nothing after a directory's `/`); several complete their common start
//! and are listed on the status line; Tab again, with the text untouched since, cycles through
//! them. Pure: the candidates come from `prompt_complete`.

use super::prompt_complete::{self, Sources};

/// Several candidates being cycled through by repeated Tabs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabCycle {
    /// The line before the completed word.
    head: String,
    candidates: Vec<String>,
    /// The candidate in the line now (None: only their common start is).
    at: Option<usize>,
    /// The text this cycle last produced: any other text means the user edited, and the next
    /// Tab completes afresh.
    shown: String,
}

/// The prompt after a Tab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabOutcome {
    pub text: String,
    /// The candidates, for the status line (None when one or none matched).
    pub hint: Option<String>,
    /// Set while there are several candidates to cycle through.
    pub cycle: Option<TabCycle>,
}

/// Applies Tab to `text`, continuing `previous` when the text is still what it produced.
pub fn tab(text: &str, previous: Option<&TabCycle>, sources: &Sources) -> TabOutcome {
    if let Some(cycle) = previous.filter(|c| c.shown == text && !c.candidates.is_empty()) {
        let at = cycle.at.map_or(0, |i| (i + 1) % cycle.candidates.len());
        let text = format!(
            "{}{}",
            cycle.head,
            prompt_complete::escaped(&cycle.candidates[at])
        );
        let cycle = TabCycle {
            at: Some(at),
            shown: text.clone(),
            ..cycle.clone()
        };
        return TabOutcome {
            hint: Some(hint(&cycle.candidates, Some(at))),
            text,
            cycle: Some(cycle),
        };
    }
    let completion = prompt_complete::complete(text, sources);
    let head = text[..completion.start].to_string();
    match completion.candidates.as_slice() {
        [] => TabOutcome {
            text: text.to_string(),
            hint: None,
            cycle: None,
        },
        [only] => {
            let space = if only.ends_with('/') { "" } else { " " };
            TabOutcome {
                text: format!("{head}{}{space}", prompt_complete::escaped(only)),
                hint: None,
                cycle: None,
            }
        }
        several => {
            let common = prompt_complete::common_prefix(several);
            let grown = format!("{head}{}", prompt_complete::escaped(&common));
            // The common start never shortens what was typed (an escaped word may be longer).
            let text = if grown.len() > text.len() {
                grown
            } else {
                text.to_string()
            };
            TabOutcome {
                hint: Some(hint(several, None)),
                cycle: Some(TabCycle {
                    head,
                    candidates: several.to_vec(),
                    at: None,
                    shown: text.clone(),
                }),
                text,
            }
        }
    }
}

/// The candidates in one line, the one in the text bracketed; the status line cuts it to its
/// width.
fn hint(candidates: &[String], at: Option<usize>) -> String {
    candidates
        .iter()
        .enumerate()
        .map(|(i, c)| match Some(i) == at {
            true => format!("[{c}]"),
            false => c.clone(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources() -> Sources {
        Sources {
            targets: vec!["alpha".into(), "alpha:0".into(), "beta".into()],
            ..Default::default()
        }
    }

    #[test]
    fn one_candidate_completes_with_a_space() {
        let out = tab("kill-ses", None, &sources());
        assert_eq!(out.text, "kill-session ");
        assert_eq!((out.hint, out.cycle), (None, None));
        assert_eq!(
            tab("kill-pane -t be", None, &sources()).text,
            "kill-pane -t beta "
        );
    }

    #[test]
    fn several_complete_their_common_start_then_cycle() {
        let s = sources();
        let first = tab("kill-pane -t al", None, &s);
        assert_eq!(first.text, "kill-pane -t alpha");
        assert_eq!(first.hint.as_deref(), Some("alpha alpha:0"));
        let second = tab(&first.text, first.cycle.as_ref(), &s);
        assert_eq!(second.text, "kill-pane -t alpha");
        assert_eq!(second.hint.as_deref(), Some("[alpha] alpha:0"));
        let third = tab(&second.text, second.cycle.as_ref(), &s);
        assert_eq!(third.text, "kill-pane -t alpha:0");
        assert_eq!(third.hint.as_deref(), Some("alpha [alpha:0]"));
        // Round again to the first.
        let fourth = tab(&third.text, third.cycle.as_ref(), &s);
        assert_eq!(fourth.text, "kill-pane -t alpha");
    }

    #[test]
    fn an_edit_between_tabs_starts_afresh() {
        let s = sources();
        let first = tab("kill-pane -t al", None, &s);
        let edited = format!("{}:", first.text);
        let out = tab(&edited, first.cycle.as_ref(), &s);
        assert_eq!(out.text, "kill-pane -t alpha:0 ");
        assert_eq!(out.cycle, None);
    }

    #[test]
    fn nothing_matching_leaves_the_text() {
        let out = tab("frobnicate", None, &sources());
        assert_eq!(out.text, "frobnicate");
        assert_eq!((out.hint, out.cycle), (None, None));
    }
}
