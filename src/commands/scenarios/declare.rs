//! How a scenario is declared: its name, texts, variants (each with its
//! run function) and options; the registry in `catalogue` lists them.
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use anyhow::Result;
use clap::{ArgMatches, Args, FromArgMatches};

use super::context::{Cx, Identity, Params, RunOpts};
use crate::engine::{Deviation, Env};
use crate::i18n::Text;
use crate::report::VariantReport;

/// A variant's run: records into `cx` what the server did and what that means.
pub type RunFn = for<'a, 'b> fn(&'a mut Cx<'b>) -> Pin<Box<dyn Future<Output = Result<()>> + 'a>>;

/// Wraps `async fn f(cx: &mut Cx<'_>) -> Result<()>` as a [`RunFn`].
#[macro_export]
macro_rules! run_fn {
    ($f:path) => {{
        fn run<'a, 'b>(
            cx: &'a mut $crate::commands::scenarios::Cx<'b>,
        ) -> ::std::pin::Pin<Box<dyn ::std::future::Future<Output = ::anyhow::Result<()>> + 'a>> {
            Box::pin($f(cx))
        }
        run
    }};
}

/// Declares a scenario's variants, each once: the identifier of its run
/// function (`async fn NAME(cx: &mut Cx<'_>) -> Result<()>` in the same
/// module: the compiler ties the two), its name, and its texts in every
/// language: the documented outcome and the explanation. An outcome that
/// names the scenario's options lists them and says how they are read from
/// the run's options: `expected(stock, requests) = |p| (...)`. Expands to
/// `VARIANTS`, and registers the texts with every other message.
#[macro_export]
macro_rules! variants {
    (prefix $prefix:literal;
     $(
        $(#[$meta:meta])*
        $run:ident $name:literal {
            expected $( ( $($p:ident),* ) = $from:expr )? => { en: $een:literal, tr: $etr:literal $(,)? },
            explain => { en: $xen:literal, tr: $xtr:literal $(,)? } $(,)?
        }
     )*
    ) => {
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Clone, Copy)]
        enum VariantIx { $($run),* }

        /// The variants' texts: the documented outcome, then the explanation, of each.
        static VARIANT_TEXTS: &[$crate::i18n::Def] = &[$(
            $crate::i18n::Def {
                key: concat!($prefix, ".", stringify!($run), ".expected"),
                en: $een,
                tr: $etr,
                params: &[$($(stringify!($p)),*)?],
            },
            $crate::i18n::Def {
                key: concat!($prefix, ".", stringify!($run), ".explain"),
                en: $xen,
                tr: $xtr,
                params: &[],
            },
        )*];

        #[$crate::i18n::linkme::distributed_slice($crate::i18n::MESSAGE_BLOCKS)]
        #[linkme(crate = $crate::i18n::linkme)]
        static REGISTERED_VARIANTS: &[$crate::i18n::Def] = VARIANT_TEXTS;

        $(
            /// The variant's texts (its run function has its name too).
            #[allow(dead_code)]
            pub mod $run {
                /// The documented outcome, with these values (a run that
                /// could not use the ones asked for says what it used).
                pub fn expected($($($p: impl Into<$crate::i18n::Arg>),*)?) -> $crate::i18n::Text {
                    $crate::i18n::Text::new(
                        &super::VARIANT_TEXTS[2 * super::VariantIx::$run as usize],
                        vec![$($((stringify!($p), $p.into())),*)?],
                    )
                }

                pub fn explain() -> $crate::i18n::Text {
                    $crate::i18n::Text::new(&super::VARIANT_TEXTS[2 * super::VariantIx::$run as usize + 1], Vec::new())
                }
            }
        )*

        pub static VARIANTS: &[$crate::commands::scenarios::Variant] = &[$(
            $crate::commands::scenarios::Variant {
                name: $name,
                expected: $crate::__variant_expected!($run; $( ($($p),*) $from )?),
                explain: $run::explain,
                run: $crate::run_fn!($run),
            }
        ),*];
    };
}

/// The documented outcome of a [`variants!`] entry, with the options it names.
#[doc(hidden)]
#[macro_export]
macro_rules! __variant_expected {
    ($run:ident;) => {
        |_| $run::expected()
    };
    ($run:ident; ($($p:ident),*) $from:expr) => {
        |params| {
            #[allow(unused_parens)]
            let ($($p),*) = ($from)(params);
            $run::expected($($p),*)
        }
    };
}

pub struct Variant {
    pub name: &'static str,
    /// The documented outcome, with the run's parameters.
    pub expected: fn(&Params) -> Text,
    /// What happens and why (the mechanism), and the fix.
    pub explain: fn() -> Text,
    pub run: RunFn,
}

/// Options some scenarios take (clap `Args`), with a check of their values.
pub trait ScenarioOptions: Args + FromArgMatches + Clone + Send + Sync + 'static {
    /// Refuses values the scenario cannot run with (a usage error, exit 2).
    fn check(&self) -> Result<()>;

    /// Whether these options run `variant` (an option may narrow the
    /// scenario to some of its variants); all by default.
    fn selects(&self, _variant: &str) -> bool {
        true
    }
}

/// A scenario's options as the catalogue holds them.
pub struct Options {
    pub augment: fn(clap::Command) -> clap::Command,
    pub parse: fn(&ArgMatches) -> Result<Params>,
    /// Whether the parsed options run a variant ([`ScenarioOptions::selects`]).
    pub selects: fn(&Params, &str) -> bool,
    /// Turkish help for each option, by its id (English is on the type's doc comments).
    pub help_tr: &'static [(&'static str, &'static str)],
}

impl Options {
    pub const fn of<T: ScenarioOptions>(help_tr: &'static [(&'static str, &'static str)]) -> Options {
        Options {
            augment: <T as Args>::augment_args,
            parse: parse::<T>,
            selects: selects::<T>,
            help_tr,
        }
    }
}

fn parse<T: ScenarioOptions>(m: &ArgMatches) -> Result<Params> {
    let o = T::from_arg_matches(m)?;
    o.check()?;
    Ok(Arc::new(o))
}

fn selects<T: ScenarioOptions>(p: &Params, variant: &str) -> bool {
    p.downcast_ref::<T>().is_none_or(|o| o.selects(variant))
}

impl std::fmt::Debug for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Variant({})", self.name)
    }
}

pub struct Scenario {
    pub name: &'static str,
    /// One line: the subcommand's help.
    pub about: fn() -> Text,
    /// One line: what `lab list` says of it.
    pub summary: fn() -> Text,
    /// What it shows, for the scenario table of docs/GUIDE.md (English, Markdown).
    pub readme: &'static str,
    /// The spec file (under lab/) holding its straight-line variants.
    pub spec: Option<&'static str>,
    pub variants: &'static [Variant],
    pub options: Option<Options>,
}

impl Scenario {
    pub fn variant(&'static self, name: &str) -> Option<&'static Variant> {
        self.variants.iter().find(|v| v.name == name)
    }

    pub fn variant_names(&self) -> Vec<&'static str> {
        self.variants.iter().map(|v| v.name).collect()
    }

    /// The scenario's options at their defaults (what `lab all` runs with).
    pub fn default_params(&self) -> Result<Params> {
        match &self.options {
            None => Ok(Arc::new(())),
            Some(o) => {
                let cmd = (o.augment)(clap::Command::new(self.name));
                let m = cmd.try_get_matches_from([self.name])?;
                (o.parse)(&m)
            }
        }
    }
}

/// Runs one variant on a freshly built schema and returns its report. A
/// deviation (the server answered what nobody allowed) ends the variant "not
/// as documented" with its timeline; anything else is lab's own failure.
pub async fn run_variant(
    env: &Env,
    opts: &RunOpts,
    scenario: &'static Scenario,
    variant: &'static Variant,
    params: Params,
) -> Result<VariantReport> {
    opts.files.build_schema(&env.control, &env.schema).await?;
    let id = Identity {
        scenario: scenario.name,
        variant: variant.name,
        spec: scenario.spec,
        expected: (variant.expected)(&params),
        explain: (variant.explain)(),
    };
    let mut cx = Cx::new(env, opts, id, params);
    let pooled_before = match &env.pooler {
        Some(p) => Some(p.transactions(&env.schema).await?),
        None => None,
    };
    let r = (variant.run)(&mut cx).await;
    if let (Some(p), Some(before)) = (&env.pooler, pooled_before) {
        // What went through lab's PgBouncer: evidence that the sessions did.
        cx.metric("pooler", p.describe());
        cx.metric("pooler_transactions", p.transactions(&env.schema).await? - before);
    }
    match r {
        Ok(()) => cx.close(false).await,
        Err(e) => {
            let deviation = e.chain().find_map(|c| c.downcast_ref::<Deviation>()).cloned();
            match deviation {
                Some(d) => {
                    cx.check(false, d.0);
                    cx.close(true).await
                }
                None => {
                    let _ = cx.close(true).await;
                    Err(e)
                }
            }
        }
    }
}
