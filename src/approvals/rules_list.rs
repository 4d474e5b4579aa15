//! The keys of the panel's list of "always" rules (`r` in the approval panel): move the
//! selection, revoke the selected rule, go back to the request.

use super::queue::ApprovalQueue;
use crate::keys::{Key, KeyCode};

/// Acts on `key` in the rules list with rule `selected` (an index) selected; returns the
/// selection after it, or None when the list closes.
pub fn rules_list_key(queue: &mut ApprovalQueue, selected: usize, key: &Key) -> Option<usize> {
    let count = queue.rules().len();
    let last = count.saturating_sub(1);
    let selected = selected.min(last);
    if key.ctrl || key.alt {
        return Some(selected);
    }
    match key.code {
        KeyCode::Down | KeyCode::Char('j') => Some((selected + 1).min(last)),
        KeyCode::Up | KeyCode::Char('k') => Some(selected.saturating_sub(1)),
        KeyCode::Char('d') | KeyCode::Delete => {
            if let Some(id) = queue.rules().get(selected).map(|r| r.id) {
                queue.revoke(id);
            }
            Some(selected.min(count.saturating_sub(2)))
        }
        KeyCode::Char('r' | 'q') | KeyCode::Escape => None,
        _ => Some(selected),
    }
}
