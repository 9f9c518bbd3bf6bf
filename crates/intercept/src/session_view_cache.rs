//! Reading a session's saved state into a [`SessionView`] parses its functions and aliases, which
//! costs more than judging a command (hundreds of microseconds for a state with many functions),
//! and the state is unchanged between most calls: the views of the last few states read are kept,
//! keyed by the whole text (a changed state is read afresh).

use std::sync::{Arc, LazyLock, Mutex};

use crate::SessionView;

/// How many states' views are kept.
const KEPT: usize = 16;

/// Saved states and their views, the most recently used first.
type Kept = Vec<(String, Arc<SessionView>)>;

static VIEWS: LazyLock<Mutex<Kept>> = LazyLock::new(Mutex::default);

impl SessionView {
    /// The view of a saved state, as [`SessionView::from_saved_state`] reads it: the same text
    /// gives the same (shared) view without reading it again.
    pub fn of_saved_state(text: &str) -> Arc<SessionView> {
        if let Ok(mut kept) = VIEWS.lock()
            && let Some(i) = kept.iter().position(|(t, _)| t == text)
        {
            let entry = kept.remove(i);
            let view = Arc::clone(&entry.1);
            kept.insert(0, entry);
            return view;
        }
        let view = Arc::new(SessionView::from_saved_state(text));
        if let Ok(mut kept) = VIEWS.lock() {
            kept.truncate(KEPT - 1);
            kept.insert(0, (text.to_owned(), Arc::clone(&view)));
        }
        view
    }
}

impl SessionView {
    /// The view of the sessions of one name together: `busy` when one of them runs a command now,
    /// and what each of their saved states (`texts`) holds.
    pub fn of_saved_states<'a>(busy: bool, texts: impl IntoIterator<Item = &'a str>) -> SessionView {
        let mut view = SessionView {
            busy,
            ..SessionView::default()
        };
        for text in texts {
            view.merge(SessionView::clone(&SessionView::of_saved_state(text)));
        }
        view
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_gives_the_same_view_and_another_text_its_own() {
        let a = "declare -- x=\"1\"\n#shellgate-state-functions\n";
        let b = "declare -- x=\"2\"\n#shellgate-state-functions\nalias ll='ls'\n";
        assert!(Arc::ptr_eq(
            &SessionView::of_saved_state(a),
            &SessionView::of_saved_state(a)
        ));
        assert_eq!(*SessionView::of_saved_state(b), SessionView::from_saved_state(b));
        assert!(SessionView::of_saved_state(b).aliases.contains_key("ll"));
    }
}
