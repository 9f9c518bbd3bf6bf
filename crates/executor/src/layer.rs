//! Launch layers: wrappers that rewrite a [`LaunchSpec`] into another (a command prefix, a sandbox
//! helper, `ssh`, `docker exec`, …), composed into one [`LayerStack`] applied once before spawning —
//! for one-shot runs, terminal runs, jobs and session shells alike, so a wrapper can never be skipped.
//!
//! A layer is plain data in, plain data out (shaped like `tower-layer`), so it is tested as data:
//!
//! ```
//! use shellgate_executor::{LaunchSpec, LayerStack, PrefixLayer};
//!
//! let stack = LayerStack::new().with(PrefixLayer::new(["nice", "-n", "5"]));
//! let spec = stack.apply(LaunchSpec::new("bash", ["-c", "make"], "/src"));
//! assert_eq!(spec.program, "nice");
//! assert_eq!(spec.args, ["-n", "5", "bash", "-c", "make"]);
//! ```

use std::sync::Arc;

use crate::LaunchSpec;

/// Rewrites a launch spec (see the module docs).
pub trait LaunchLayer: Send + Sync {
    /// The spec to start instead of `spec`.
    fn wrap(&self, spec: LaunchSpec) -> LaunchSpec;
}

impl<F> LaunchLayer for F
where
    F: Fn(LaunchSpec) -> LaunchSpec + Send + Sync,
{
    fn wrap(&self, spec: LaunchSpec) -> LaunchSpec {
        self(spec)
    }
}

/// Layers applied in order: the first added wraps the command first, the last added is outermost.
#[derive(Clone, Default)]
pub struct LayerStack {
    layers: Vec<Arc<dyn LaunchLayer>>,
}

impl std::fmt::Debug for LayerStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LayerStack")
            .field("layers", &self.layers.len())
            .finish()
    }
}

impl LayerStack {
    /// An empty stack (specs pass unchanged).
    pub fn new() -> Self {
        Self::default()
    }

    /// Add `layer` outside the ones added before.
    #[must_use]
    pub fn with(mut self, layer: impl LaunchLayer + 'static) -> Self {
        self.layers.push(Arc::new(layer));
        self
    }

    /// Add `layer` in place.
    pub fn push(&mut self, layer: impl LaunchLayer + 'static) {
        self.layers.push(Arc::new(layer));
    }

    /// Whether the stack has no layers.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// `spec` wrapped by every layer.
    pub fn apply(&self, spec: LaunchSpec) -> LaunchSpec {
        self.layers.iter().fold(spec, |spec, layer| layer.wrap(spec))
    }

    /// A stack of these layers with `outer`'s outside them.
    #[must_use]
    pub fn then(&self, outer: &LayerStack) -> LayerStack {
        let mut layers = self.layers.clone();
        layers.extend(outer.layers.iter().cloned());
        Self { layers }
    }
}

/// A [`LayerStack`] with a name, for values that must compare and hash (a session key carrying its
/// own wrappers, such as a sandbox chosen for that session). Values compare by `id` alone: whoever
/// builds them gives equal ids only to stacks that wrap alike.
#[derive(Debug, Clone, Default)]
pub struct NamedLayers {
    /// What identifies the stack (`""` for the empty default).
    pub id: String,
    /// The layers.
    pub stack: LayerStack,
}

impl NamedLayers {
    /// `stack`, known as `id`.
    pub fn new(id: impl Into<String>, stack: LayerStack) -> Self {
        Self { id: id.into(), stack }
    }
}

impl PartialEq for NamedLayers {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for NamedLayers {}

impl std::hash::Hash for NamedLayers {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

/// Runs the command through a fixed argv prefix (`nice -n 5`, `stdbuf -oL`, a wrapper script).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixLayer {
    prefix: Vec<String>,
}

impl PrefixLayer {
    /// A layer that puts `prefix` before the program and its arguments.
    pub fn new(prefix: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self {
            prefix: prefix.into_iter().map(Into::into).collect(),
        }
    }
}

impl LaunchLayer for PrefixLayer {
    fn wrap(&self, mut spec: LaunchSpec) -> LaunchSpec {
        let Some((program, rest)) = self.prefix.split_first() else {
            return spec;
        };
        let mut args = rest.to_vec();
        args.push(std::mem::take(&mut spec.program));
        args.append(&mut spec.args);
        spec.program.clone_from(program);
        spec.args = args;
        spec
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_apply_in_order_and_keep_the_rest_of_the_spec() {
        let mut spec = LaunchSpec::new("bash", ["-c", "ls"], "/w").with_env("K", "v");
        spec.pty = true;
        let stack = LayerStack::new()
            .with(PrefixLayer::new(["inner"]))
            .with(|mut s: LaunchSpec| {
                s.args
                    .insert(0, std::mem::replace(&mut s.program, "outer".into()));
                s
            });
        let wrapped = stack.apply(spec);
        assert_eq!(wrapped.program, "outer");
        assert_eq!(wrapped.args, ["inner", "bash", "-c", "ls"]);
        assert_eq!(wrapped.cwd, std::path::PathBuf::from("/w"));
        assert!(wrapped.pty);
        assert_eq!(wrapped.env.get("K").map(String::as_str), Some("v"));
        let inner = LayerStack::new().with(PrefixLayer::new(["a"]));
        let outer = LayerStack::new().with(PrefixLayer::new(["b"]));
        let chained = inner.then(&outer).apply(LaunchSpec::new("x", ["y"], "/"));
        assert_eq!(
            (chained.program.as_str(), chained.args.as_slice()),
            ("b", &["a".to_owned(), "x".to_owned(), "y".to_owned()][..])
        );
        assert_eq!(NamedLayers::new("s", inner.clone()), NamedLayers::new("s", outer));
        assert_ne!(NamedLayers::new("s", inner), NamedLayers::default());
        let empty = PrefixLayer::new(Vec::<String>::new()).wrap(LaunchSpec::new("x", ["y"], "/"));
        assert_eq!(
            (empty.program.as_str(), empty.args.as_slice()),
            ("x", &["y".to_owned()][..])
        );
    }
}
