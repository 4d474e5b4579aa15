//! The `ui://` resources read on one hosted connection, so a second call of a view's tool does
//! not read its HTML again (issue 17: "cached per alias and URI for the life of the
//! connection, dropped on `notifications/resources/list_changed`"). It lives in the
//! connection's client handler, which hears that notification, and dies with the connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

/// Successful `resources/read` results by URI. Cloning shares them.
#[derive(Clone, Default, Debug)]
pub struct ResourceCache(Arc<Mutex<HashMap<String, Value>>>);

impl ResourceCache {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Value>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cached result for `uri`.
    pub fn get(&self, uri: &str) -> Option<Value> {
        self.lock().get(uri).cloned()
    }

    /// Keeps a successful read of `uri`.
    pub fn put(&self, uri: &str, result: Value) {
        self.lock().insert(uri.to_string(), result);
    }

    /// Forgets `uri` (a reload reads it again).
    pub fn forget(&self, uri: &str) {
        self.lock().remove(uri);
    }

    /// Forgets everything: the server said its resources changed.
    pub fn clear(&self) {
        self.lock().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_until_forgotten_or_cleared_and_shared_by_clones() {
        let cache = ResourceCache::default();
        let other = cache.clone();
        cache.put("ui://a", serde_json::json!({"contents": []}));
        cache.put("ui://b", serde_json::json!(1));
        assert_eq!(
            other.get("ui://a"),
            Some(serde_json::json!({"contents": []}))
        );
        other.forget("ui://a");
        assert_eq!(cache.get("ui://a"), None);
        assert_eq!(cache.get("ui://b"), Some(serde_json::json!(1)));
        cache.clear();
        assert_eq!(other.get("ui://b"), None);
    }
}
