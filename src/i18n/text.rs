//! Texts as data: a message (its key and its wording in every language) and
//! the values that fill it. Reports and errors hold [`Text`]s; only the
//! renderers and the error printer turn them into sentences, in the language
//! they are asked for. Messages are declared with [`messages!`](crate::messages):
//! each becomes a function whose name and parameters the compiler checks.
use std::fmt;

use serde::Serialize;

use super::lang::Lang;

/// One message: its key (stable, for machines) and its wording.
#[derive(Debug)]
pub struct Def {
    pub key: &'static str,
    pub en: &'static str,
    pub tr: &'static str,
    /// The placeholders the wording fills, in declaration order.
    pub params: &'static [&'static str],
}

impl Def {
    pub fn template(&self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => self.en,
            Lang::Tr => self.tr,
        }
    }
}

/// A value that fills a placeholder.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Int(i64),
    Float(f64),
    Str(String),
    /// A phrase that is itself translated (rendered in the same language).
    Text(Box<Text>),
    /// Phrases joined with ", ".
    List(Vec<Arg>),
    /// Phrases joined with another separator ("; ").
    Joined(Vec<Arg>, &'static str),
    /// Words a file gives in each language (a phenomenon's `# name:` and `# name-tr:`).
    Each {
        en: String,
        tr: String,
    },
}

impl Arg {
    pub fn render(&self, lang: Lang) -> String {
        match self {
            Arg::Int(i) => i.to_string(),
            Arg::Float(f) => f.to_string(),
            Arg::Str(s) => s.clone(),
            Arg::Text(t) => t.render(lang),
            Arg::List(v) => v.iter().map(|a| a.render(lang)).collect::<Vec<_>>().join(", "),
            Arg::Joined(v, sep) => v.iter().map(|a| a.render(lang)).collect::<Vec<_>>().join(sep),
            Arg::Each { en, tr } => match lang {
                Lang::En => en.clone(),
                Lang::Tr => tr.clone(),
            },
        }
    }
}

macro_rules! int_args {
    ($($t:ty),*) => {$(
        impl From<$t> for Arg {
            fn from(v: $t) -> Arg {
                Arg::Int(v as i64)
            }
        }
    )*};
}
int_args!(i8, i16, i32, i64, u8, u16, u32, u64, usize);

impl From<f64> for Arg {
    fn from(v: f64) -> Arg {
        Arg::Float(v)
    }
}

impl From<&str> for Arg {
    fn from(v: &str) -> Arg {
        Arg::Str(v.to_string())
    }
}

impl From<String> for Arg {
    fn from(v: String) -> Arg {
        Arg::Str(v)
    }
}

impl From<&String> for Arg {
    fn from(v: &String) -> Arg {
        Arg::Str(v.clone())
    }
}

impl From<Text> for Arg {
    fn from(v: Text) -> Arg {
        Arg::Text(Box::new(v))
    }
}

impl<T: Into<Arg>> From<Vec<T>> for Arg {
    fn from(v: Vec<T>) -> Arg {
        Arg::List(v.into_iter().map(Into::into).collect())
    }
}

/// A message with its values: what reports and errors carry instead of sentences.
#[derive(Debug, Clone)]
pub struct Text {
    def: &'static Def,
    args: Vec<(&'static str, Arg)>,
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.def.key == other.def.key && self.args == other.args
    }
}

impl Text {
    pub fn new(def: &'static Def, args: Vec<(&'static str, Arg)>) -> Text {
        Text { def, args }
    }

    pub fn key(&self) -> &'static str {
        self.def.key
    }

    pub fn render(&self, lang: Lang) -> String {
        fill(self.def.template(lang), &self.args, lang)
    }

    /// The English sentence: what machine outputs (JSON, JUnit) carry.
    pub fn en(&self) -> String {
        self.render(Lang::En)
    }
}

/// Fills `{name}` placeholders with the values' renderings in `lang`.
pub fn fill(template: &str, args: &[(&str, Arg)], lang: Lang) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let name = &after[..close];
                match args.iter().find(|(n, _)| *n == name) {
                    Some((_, v)) => out.push_str(&v.render(lang)),
                    None => {
                        out.push('{');
                        out.push_str(name);
                        out.push('}');
                    }
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The placeholders of a template, in order of first appearance.
pub fn placeholders(template: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        let name = &after[..close];
        if !out.contains(&name) {
            out.push(name);
        }
        rest = &after[close + 1..];
    }
    out
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.en())
    }
}

impl std::error::Error for Text {}

impl Serialize for Text {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.en())
    }
}

/// A [`Text`] that frames the error it came from (what lab was doing when
/// something underneath failed).
#[derive(Debug)]
pub struct Framed {
    pub text: Text,
    pub source: anyhow::Error,
}

impl fmt::Display for Framed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.text.fmt(f)
    }
}

impl std::error::Error for Framed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.source.as_ref())
    }
}

/// `.ctx(|| msg::...)` on results and options: the error then says what lab
/// was doing, in the language of whoever prints it.
pub trait Context<T> {
    fn ctx(self, text: impl FnOnce() -> Text) -> anyhow::Result<T>;
}

impl<T, E: Into<anyhow::Error>> Context<T> for Result<T, E> {
    fn ctx(self, text: impl FnOnce() -> Text) -> anyhow::Result<T> {
        self.map_err(|e| {
            anyhow::Error::new(Framed {
                text: text(),
                source: e.into(),
            })
        })
    }
}

impl<T> Context<T> for Option<T> {
    fn ctx(self, text: impl FnOnce() -> Text) -> anyhow::Result<T> {
        self.ok_or_else(|| anyhow::Error::new(text()))
    }
}

/// Why lab itself ended a connection (see [`closed_because`]).
static CLOSED_BECAUSE: std::sync::Mutex<Option<Text>> = std::sync::Mutex::new(None);

/// lab ended a connection of its own for `why` (a request on it went
/// unanswered too long): a request on it only learns "connection closed",
/// so the error line that reports it says `why` instead.
pub fn closed_because(why: Text) {
    *CLOSED_BECAUSE.lock().unwrap() = Some(why);
}

/// An error with something more to say after it, on the same line (what
/// lab's clean-up could not do after the run failed).
#[derive(Debug)]
pub struct Appended {
    error: anyhow::Error,
    note: Text,
}

impl Appended {
    pub fn to(error: anyhow::Error, note: Text) -> anyhow::Error {
        anyhow::Error::new(Appended { error, note })
    }
}

impl fmt::Display for Appended {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.error, self.note)
    }
}

impl std::error::Error for Appended {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.error.as_ref())
    }
}

/// An error as one line in `lang`: lab's own texts translated, what libraries
/// and the server say quoted as they said it.
pub fn error_line(err: &anyhow::Error, lang: Lang) -> String {
    if let Some(a) = err.downcast_ref::<Appended>() {
        return format!("{}; {}", error_line(&a.error, lang), a.note.render(lang));
    }
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err.as_ref());
    while let Some(e) = cur {
        let part = if let Some(f) = e.downcast_ref::<Framed>() {
            f.text.render(lang)
        } else if let Some(t) = e.downcast_ref::<Text>() {
            t.render(lang)
        } else if let Some(why) = e
            .downcast_ref::<tokio_postgres::Error>()
            .filter(|pg| pg.is_closed())
            .and_then(|_| CLOSED_BECAUSE.lock().unwrap().clone())
        {
            // The request only learnt that its connection closed; lab closed it, and said why.
            why.render(lang)
        } else {
            e.to_string()
        };
        // Some libraries repeat their cause in their own message.
        if !part.is_empty() && !parts.last().is_some_and(|l| l.ends_with(&part)) {
            parts.push(part);
        }
        cur = e.source();
    }
    parts.join(": ").replace('\n', " ")
}

/// Declares messages: each `name(params) { en: "...", tr: "..." }` becomes a
/// function `name(params) -> Text`, and the module gets `DEFS`, every
/// message it declares (the completeness tests read them). Keys are
/// `<prefix>.<name>`.
#[macro_export]
macro_rules! messages {
    (prefix $prefix:literal; $( $(#[$meta:meta])* $name:ident ( $($p:ident),* $(,)? ) { en: $en:literal, tr: $tr:literal $(,)? } )* ) => {
        #[allow(non_camel_case_types, dead_code, clippy::upper_case_acronyms)]
        #[derive(Clone, Copy)]
        enum MessageId { $($name),* }

        /// Every message this module declares.
        pub static DEFS: &[$crate::i18n::Def] = &[$(
            $crate::i18n::Def {
                key: concat!($prefix, ".", stringify!($name)),
                en: $en,
                tr: $tr,
                params: &[$(stringify!($p)),*],
            }
        ),*];

        #[$crate::i18n::linkme::distributed_slice($crate::i18n::MESSAGE_BLOCKS)]
        #[linkme(crate = $crate::i18n::linkme)]
        static REGISTERED: &[$crate::i18n::Def] = DEFS;

        $(
            $(#[$meta])*
            #[allow(dead_code, clippy::too_many_arguments)]
            pub fn $name($($p: impl Into<$crate::i18n::Arg>),*) -> $crate::i18n::Text {
                $crate::i18n::Text::new(
                    &DEFS[MessageId::$name as usize],
                    vec![$((stringify!($p), $p.into())),*],
                )
            }
        )*
    };
}

/// Checks a module's messages: placeholders match the parameters in every
/// language, no wording is empty, and the Turkish is not the English copied.
pub fn check_defs(defs: &[Def]) -> Vec<String> {
    let mut problems = Vec::new();
    for d in defs {
        let mut params: Vec<&str> = d.params.to_vec();
        params.sort_unstable();
        for (lang, t) in [("en", d.en), ("tr", d.tr)] {
            let mut holes = placeholders(t);
            holes.sort_unstable();
            if holes != params {
                problems.push(format!(
                    "{} ({lang}): placeholders {holes:?}, parameters {params:?}",
                    d.key
                ));
            }
            if t.trim().is_empty() {
                problems.push(format!("{} ({lang}) is empty", d.key));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    mod sample {
        crate::messages! {
            prefix "zz";
            hello(who) { en: "hello {who}", tr: "merhaba {who}" }
            waited(ms, who) { en: "{who} waited {ms} ms", tr: "{who} {ms} ms bekledi" }
            bare() { en: "plain", tr: "düz" }
        }
    }

    #[test]
    fn messages_render_in_the_language_asked_for() {
        let t = sample::waited(12, sample::hello("A"));
        assert_eq!(t.key(), "zz.waited");
        assert_eq!(t.render(Lang::En), "hello A waited 12 ms");
        assert_eq!(t.render(Lang::Tr), "merhaba A 12 ms bekledi");
        assert_eq!(serde_json::to_string(&t).unwrap(), "\"hello A waited 12 ms\"");
        assert_eq!(sample::bare().render(Lang::Tr), "düz");
        assert!(check_defs(sample::DEFS).is_empty());
    }

    #[test]
    fn declarations_are_checked() {
        static BAD: &[Def] = &[Def {
            key: "zz.bad",
            en: "{a} and {b}",
            tr: "{a}",
            params: &["a", "b"],
        }];
        let p = check_defs(BAD);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("(tr)"));
    }

    #[test]
    fn errors_are_printed_in_the_language_asked_for() {
        let inner: anyhow::Result<()> = Err(anyhow::Error::new(sample::hello("B")));
        let err = inner.ctx(sample::bare).unwrap_err();
        assert_eq!(error_line(&err, Lang::Tr), "düz: merhaba B");
        assert_eq!(error_line(&err, Lang::En), "plain: hello B");
        let io: Result<(), std::io::Error> = Err(std::io::Error::other("disk full"));
        assert_eq!(
            error_line(&io.ctx(sample::bare).unwrap_err(), Lang::Tr),
            "düz: disk full"
        );
    }

    #[test]
    fn fill_leaves_unknown_placeholders_and_braces_alone() {
        assert_eq!(fill("{a} {x} {", &[("a", Arg::Int(1))], Lang::En), "1 {x} {");
        assert_eq!(placeholders("{a} {b} {a}"), ["a", "b"]);
    }
}
