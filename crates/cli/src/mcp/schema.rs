//! Tool input schemas that strict MCP clients accept.
//!
//! schemars describes `Option<T>` as `type: [T, "null"]` (or `anyOf` with a null branch), puts enums
//! under `$defs` behind `$ref`, and adds Rust-only `format`s such as `uint64`. Some clients reject or
//! warn about each of these (the OpenAPI subset used for function declarations has no `null` type, no
//! `$ref` and no `const`). A missing property already means "not given", so the schema says so by
//! leaving it out of `required`, with the effective default where there is one.

use serde_json::{Map, Value};

/// `format` values that JSON Schema defines; every other one (`uint64`, `double`, …) is dropped.
const STANDARD_FORMATS: [&str; 8] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "uri",
    "uuid",
    "regex",
];

/// The portable input schema of `T`, with `defaults` (property name, value) filled in.
pub fn input_schema<T: schemars::JsonSchema>(defaults: &[(&str, Value)]) -> Map<String, Value> {
    let schema = schemars::schema_for!(T);
    let mut root = match schema.to_value() {
        Value::Object(map) => map,
        // A derived struct schema is always an object.
        other => Map::from_iter([("schema".to_owned(), other)]),
    };
    let defs = root.remove("$defs").unwrap_or(Value::Null);
    root.remove("$schema");
    root.remove("title");
    // The tool's own description says what the parameters are for.
    root.remove("description");
    let mut value = Value::Object(root);
    inline_refs(&mut value, &defs, 0);
    make_portable(&mut value);
    let Value::Object(mut root) = value else {
        unreachable!("the root stays an object")
    };
    if let Some(Value::Object(properties)) = root.get_mut("properties") {
        for (name, default) in defaults {
            if let Some(Value::Object(property)) = properties.get_mut(*name) {
                property.insert("default".to_owned(), default.clone());
            }
        }
    }
    root
}

/// Replace every `{"$ref": "#/$defs/X", …}` by the definition of X (sibling keys such as a
/// description win over the definition's).
fn inline_refs(value: &mut Value, defs: &Value, depth: usize) {
    // Parameter types are not recursive; the bound only guards against a future self-reference.
    if depth > 32 {
        return;
    }
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref") {
                let name = target.trim_start_matches("#/$defs/");
                if let Some(Value::Object(def)) = defs.get(name) {
                    let def = def.clone();
                    map.remove("$ref");
                    for (k, v) in def {
                        map.entry(k).or_insert(v);
                    }
                }
            }
            for child in map.values_mut() {
                inline_refs(child, defs, depth + 1);
            }
        }
        Value::Array(items) => {
            for item in items {
                inline_refs(item, defs, depth + 1);
            }
        }
        _ => {}
    }
}

/// Drop null types and branches, non-standard formats, `default: null`, and turn a `oneOf` of string
/// constants into one `enum` whose choices are described in the description.
fn make_portable(value: &mut Value) {
    match value {
        Value::Object(map) => {
            drop_null_type(map);
            collapse_null_branch(map, "anyOf");
            collapse_null_branch(map, "oneOf");
            constants_to_enum(map);
            if map.get("default").is_some_and(Value::is_null) {
                map.remove("default");
            }
            if map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
            {
                map.remove("format");
            }
            for child in map.values_mut() {
                make_portable(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(make_portable),
        _ => {}
    }
}

/// `type: ["integer", "null"]` → `type: "integer"`.
fn drop_null_type(map: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".to_owned(), only);
        }
    }
}

/// `anyOf: [A, {type: null}]` → the keys of A merged into the schema itself.
fn collapse_null_branch(map: &mut Map<String, Value>, key: &str) {
    let Some(Value::Array(branches)) = map.get_mut(key) else {
        return;
    };
    let before = branches.len();
    branches.retain(|b| b.get("type").is_none_or(|t| t != "null"));
    if branches.len() == before || branches.len() != 1 {
        return;
    }
    let Some(Value::Object(only)) = branches.pop() else {
        return;
    };
    map.remove(key);
    for (k, v) in only {
        map.entry(k).or_insert(v);
    }
}

/// `oneOf: [{type: string, const: "a", description: "…"}, …]` → `type: string, enum: ["a", …]`,
/// each choice's description appended to the schema's own.
fn constants_to_enum(map: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = map.get("oneOf") else {
        return;
    };
    let mut choices = Vec::with_capacity(branches.len());
    let mut described = Vec::new();
    for branch in branches {
        let Some(constant) = branch.get("const").and_then(Value::as_str) else {
            return;
        };
        choices.push(Value::String(constant.to_owned()));
        if let Some(text) = branch.get("description").and_then(Value::as_str) {
            described.push(format!("`{constant}`: {}", text.trim_end_matches('.')));
        }
    }
    map.remove("oneOf");
    map.insert("type".to_owned(), Value::String("string".to_owned()));
    map.insert("enum".to_owned(), Value::Array(choices));
    if !described.is_empty() {
        let own = map.get("description").and_then(Value::as_str).unwrap_or("");
        let joined = described.join("; ");
        let text = if own.is_empty() {
            format!("{joined}.")
        } else {
            format!("{} {joined}.", own.trim_end())
        };
        map.insert("description".to_owned(), Value::String(text));
    }
}

/// The paths of every nullable shape left in `schema` (empty when it is portable).
#[cfg(test)]
fn nullable_shapes(schema: &Value) -> Vec<String> {
    fn walk(value: &Value, path: &str, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::Array(types)) = map.get("type")
                    && types.iter().any(|t| t == "null")
                {
                    found.push(format!("{path}/type"));
                }
                if map.get("type").is_some_and(|t| t == "null") {
                    found.push(format!("{path}/type"));
                }
                if map.get("default").is_some_and(Value::is_null) {
                    found.push(format!("{path}/default"));
                }
                for (k, v) in map {
                    walk(v, &format!("{path}/{k}"), found);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{path}/{i}"), found);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(schema, "", &mut found);
    found
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use shellgate::{BashParams, ProcessParams};

    use super::*;

    #[test]
    fn bash_schema_has_no_nullable_shapes_and_carries_defaults() {
        let schema = input_schema::<BashParams>(&[("timeout", json!(300))]);
        let value = Value::Object(schema.clone());
        assert_eq!(nullable_shapes(&value), Vec::<String>::new(), "{value:#}");
        assert!(!value.to_string().contains("$ref"), "{value:#}");
        assert!(!value.to_string().contains("uint64"), "{value:#}");
        let props = &schema["properties"];
        assert_eq!(props["timeout"]["type"], "number");
        assert_eq!(props["timeout"]["default"], 300);
        assert_eq!(props["head"]["type"], "integer");
        assert_eq!(props["cwd"]["type"], "string");
        assert_eq!(schema["required"], json!(["command"]));
        assert!(schema.get("$schema").is_none());
    }

    #[test]
    fn process_schema_inlines_the_action_enum() {
        let schema = Value::Object(input_schema::<ProcessParams>(&[]));
        assert_eq!(nullable_shapes(&schema), Vec::<String>::new(), "{schema:#}");
        let action = &schema["properties"]["action"];
        assert_eq!(action["type"], "string", "{action:#}");
        let choices = action["enum"].as_array().expect("enum");
        assert!(choices.contains(&json!("poll")) && choices.contains(&json!("send_keys")));
        assert!(
            action["description"]
                .as_str()
                .is_some_and(|d| d.contains("`poll`:")),
            "{action:#}"
        );
        assert!(schema.get("$defs").is_none());
        assert_eq!(schema["properties"]["bracketed"]["type"], "boolean");
    }

    #[test]
    fn null_branches_collapse_into_the_remaining_branch() {
        let mut value =
            json!({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}], "description": "d"});
        make_portable(&mut value);
        assert_eq!(
            value,
            json!({"type": "integer", "minimum": 0, "description": "d"})
        );
        let found = nullable_shapes(&json!({"properties": {"x": {"type": ["string", "null"]}}}));
        assert_eq!(found, vec!["/properties/x/type".to_owned()]);
    }
}
