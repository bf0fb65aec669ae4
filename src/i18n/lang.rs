//! The languages lab speaks, and which one the environment asks for.
use clap::ValueEnum;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    En,
    Tr,
}

impl Lang {
    /// The language of the environment (LC_ALL, then LC_MESSAGES, then LANG),
    /// English unless it is Turkish.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Lang {
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .find_map(|v| env(v).filter(|s| !s.is_empty()));
        match locale {
            Some(l) if l.to_ascii_lowercase().starts_with("tr") => Lang::Tr,
            _ => Lang::En,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_comes_from_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        assert_eq!(Lang::from_env(&env(&[("LANG", "tr_TR.UTF-8")])), Lang::Tr);
        assert_eq!(
            Lang::from_env(&env(&[("LANG", "tr_TR.UTF-8"), ("LC_ALL", "C")])),
            Lang::En
        );
        assert_eq!(Lang::from_env(&env(&[("LANG", "de_DE.UTF-8")])), Lang::En);
        assert_eq!(Lang::from_env(&env(&[])), Lang::En);
    }
}
