//! Entity tags and the preconditions that carry them (RFC 9110 §8.8.3,
//! §13.1.1 If-Match, §13.1.2 If-None-Match), parsed strictly: a header
//! that is not the grammar is a 400 with the reason, never a guess.
use crate::i18n::Text;

/// An entity tag: the opaque tag (without its quotes), weak or strong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ETag {
    pub weak: bool,
    pub opaque: String,
}

impl ETag {
    pub fn strong(opaque: impl Into<String>) -> ETag {
        ETag {
            weak: false,
            opaque: opaque.into(),
        }
    }

    /// The API's tag for a row version: `"v{version}"`.
    pub fn of_version(version: i64) -> ETag {
        ETag::strong(format!("v{version}"))
    }

    /// The row version a strong tag of the API names (`"v3"` is 3); a weak
    /// tag names none: If-Match compares strongly (§13.1.1).
    pub fn strong_version(&self) -> Option<i64> {
        if self.weak {
            return None;
        }
        let digits = self.opaque.strip_prefix('v')?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    }

    /// The tag weakened, as a proxy that changes the body does (nginx's gzip).
    pub fn weakened(&self) -> ETag {
        ETag {
            weak: true,
            opaque: self.opaque.clone(),
        }
    }
}

impl std::fmt::Display for ETag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.weak {
            f.write_str("W/")?;
        }
        write!(f, "\"{}\"", self.opaque)
    }
}

/// An If-Match or If-None-Match value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// `*`: any current representation.
    Any,
    Tags(Vec<ETag>),
}

impl Condition {
    /// The row versions a strong comparison can match (If-Match).
    pub fn strong_versions(&self) -> Vec<i64> {
        match self {
            Condition::Any => Vec::new(),
            Condition::Tags(tags) => tags.iter().filter_map(ETag::strong_version).collect(),
        }
    }

    pub fn weak_tags(&self) -> Vec<&ETag> {
        match self {
            Condition::Any => Vec::new(),
            Condition::Tags(tags) => tags.iter().filter(|t| t.weak).collect(),
        }
    }
}

/// `etagc = "!" / %x23-7E / obs-text`.
fn etagc(b: u8) -> bool {
    b == 0x21 || (0x23..=0x7e).contains(&b) || b >= 0x80
}

/// One entity tag, exactly (no list, no `*`).
pub fn parse_tag(value: &str) -> Result<ETag, Text> {
    let v = value.trim_matches([' ', '\t']);
    let (weak, rest) = match v.strip_prefix("W/") {
        Some(r) => (true, r),
        None if v.starts_with("w/") => return Err(msg::lower_w(v)),
        None => (false, v),
    };
    let Some(inner) = rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return Err(msg::unquoted(v));
    };
    if rest.len() < 2 {
        return Err(msg::unquoted(v));
    }
    if let Some(bad) = inner.bytes().find(|b| !etagc(*b)) {
        return Err(msg::bad_char(v, format!("0x{bad:02x}")));
    }
    Ok(ETag {
        weak,
        opaque: inner.to_string(),
    })
}

/// `If-Match = "*" / #entity-tag` (the same grammar for If-None-Match). A
/// list may have empty elements (§5.6.1) but at least one tag.
pub fn parse_condition(header: &str, value: &str) -> Result<Condition, Text> {
    let v = value.trim_matches([' ', '\t']);
    if v == "*" {
        return Ok(Condition::Any);
    }
    let mut tags = Vec::new();
    for part in split_list(v) {
        let part = part.trim_matches([' ', '\t']);
        if part.is_empty() {
            continue;
        }
        if part == "*" {
            return Err(msg::star_in_list(header));
        }
        tags.push(parse_tag(part).map_err(|e| msg::in_header(header, e))?);
    }
    if tags.is_empty() {
        return Err(msg::empty(header));
    }
    Ok(Condition::Tags(tags))
}

/// Splits a list on the commas outside quoted tags (an opaque tag may hold commas).
fn split_list(v: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in v.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&v[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&v[start..]);
    parts
}

pub mod msg {
    crate::messages! {
        prefix "et";
        unquoted(value) {
            en: "{value} is not an entity tag: it must be in double quotes, e.g. \"v1\" or W/\"v1\"",
            tr: "{value} bir entity tag değil: çift tırnak içinde olmalı, örneğin \"v1\" ya da W/\"v1\"",
        }
        lower_w(value) {
            en: "{value}: the weak prefix is W/ (upper case)",
            tr: "{value}: zayıf önek W/ biçimindedir (büyük harf)",
        }
        bad_char(value, byte) {
            en: "{value}: byte {byte} is not allowed inside an entity tag",
            tr: "{value}: {byte} baytı bir entity tag içinde olamaz",
        }
        star_in_list(header) {
            en: "{header}: * stands alone; it cannot be listed with entity tags",
            tr: "{header}: * tek başına kullanılır; entity tag'lerle birlikte listelenemez",
        }
        empty(header) {
            en: "{header} is empty: send * or at least one entity tag",
            tr: "{header} boş: * ya da en az bir entity tag gönderin",
        }
        in_header(header, reason) {
            en: "{header}: {reason}",
            tr: "{header}: {reason}",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;

    fn tags(v: &str) -> Vec<String> {
        match parse_condition("If-Match", v).unwrap() {
            Condition::Any => vec!["*".into()],
            Condition::Tags(t) => t.iter().map(ETag::to_string).collect(),
        }
    }

    #[test]
    fn strong_weak_star_and_lists_parse() {
        assert_eq!(tags("\"v1\""), ["\"v1\""]);
        assert_eq!(tags(" W/\"v1\" "), ["W/\"v1\""]);
        assert_eq!(tags("*"), ["*"]);
        assert_eq!(tags("\"v1\", W/\"v2\",,\"a,b\""), ["\"v1\"", "W/\"v2\"", "\"a,b\""]);
        assert_eq!(tags("\"\""), ["\"\""]);
    }

    #[test]
    fn only_strong_api_tags_name_a_version() {
        let c = parse_condition("If-Match", "W/\"v1\", \"v2\", \"x3\", \"v\", \"v-1\"").unwrap();
        assert_eq!(c.strong_versions(), vec![2]);
        assert_eq!(c.weak_tags().len(), 1);
        assert_eq!(ETag::of_version(7).to_string(), "\"v7\"");
        assert_eq!(ETag::of_version(7).weakened().to_string(), "W/\"v7\"");
    }

    #[test]
    fn malformed_values_say_why() {
        let why = |v: &str| parse_condition("If-Match", v).unwrap_err().render(Lang::En);
        assert!(why("v1").contains("double quotes"), "{}", why("v1"));
        assert!(why("\"v1").contains("double quotes"));
        assert!(why("\"").contains("double quotes"));
        assert!(why("w/\"v1\"").contains("upper case"));
        assert!(why("\"v 1\"").contains("0x20"));
        assert!(why("*, \"v1\"").contains("stands alone"));
        assert!(why("").contains("empty"));
        assert!(why(" , ").contains("empty"));
    }
}
