//! What a database holds, for specs run in a database lab did not make
//! (`--in-database`, `--use-existing`, a role without CREATEDB): a
//! snapshot before each spec and one after say what the spec left behind,
//! and `--clean` drops exactly that (never anything that was there before).
//! Objects are told apart by their OIDs, not their names: a table that was
//! there before and that the spec renamed is the same table under another
//! name (reported, never dropped), and one the spec dropped is reported gone.
use std::collections::BTreeMap;

/// One object, as `pg_identify_object` names it: its kind (`table`,
/// `function`, `role` ...) and its identity (`public.t`, `public.f(integer)`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Object {
    pub kind: String,
    pub identity: String,
}

impl Object {
    /// The statement that drops this object alone (no CASCADE: what depends
    /// on it must go first, or it stays).
    pub fn drop_sql(&self) -> String {
        match self.kind.as_str() {
            "prepared transaction" => format!("ROLLBACK PREPARED {}", crate::sql_lexer::literal(&self.identity)),
            "foreign-data wrapper" => format!("DROP FOREIGN DATA WRAPPER {}", self.identity),
            kind => format!("DROP {} {}", kind.to_uppercase(), self.identity),
        }
    }
}

impl std::fmt::Display for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.kind, self.identity)
    }
}

/// Every object a spec can create and leave behind: relations, types,
/// functions, schemas, operators and the like in this database (not the
/// parts that go with another: indexes, a table's row type, an array type,
/// a serial's sequence, an extension's members; not the sessions'
/// temporary schemas), the roles the server has, prepared transactions here.
const SNAPSHOT: &str = "\
WITH objs(classid, objid) AS (
    SELECT 'pg_class'::regclass, oid FROM pg_class WHERE relkind IN ('r', 'v', 'm', 'S', 'f', 'p')
    UNION ALL SELECT 'pg_type'::regclass, oid FROM pg_type
    UNION ALL SELECT 'pg_proc'::regclass, oid FROM pg_proc
    UNION ALL SELECT 'pg_namespace'::regclass, oid FROM pg_namespace
    UNION ALL SELECT 'pg_operator'::regclass, oid FROM pg_operator
    UNION ALL SELECT 'pg_opclass'::regclass, oid FROM pg_opclass
    UNION ALL SELECT 'pg_opfamily'::regclass, oid FROM pg_opfamily
    UNION ALL SELECT 'pg_collation'::regclass, oid FROM pg_collation
    UNION ALL SELECT 'pg_conversion'::regclass, oid FROM pg_conversion
    UNION ALL SELECT 'pg_ts_config'::regclass, oid FROM pg_ts_config
    UNION ALL SELECT 'pg_ts_dict'::regclass, oid FROM pg_ts_dict
    UNION ALL SELECT 'pg_extension'::regclass, oid FROM pg_extension
    UNION ALL SELECT 'pg_event_trigger'::regclass, oid FROM pg_event_trigger
    UNION ALL SELECT 'pg_publication'::regclass, oid FROM pg_publication
    UNION ALL SELECT 'pg_foreign_data_wrapper'::regclass, oid FROM pg_foreign_data_wrapper
    UNION ALL SELECT 'pg_foreign_server'::regclass, oid FROM pg_foreign_server
    UNION ALL SELECT 'pg_language'::regclass, oid FROM pg_language
    UNION ALL SELECT 'pg_authid'::regclass, oid FROM pg_roles
)
SELECT o.type, o.identity, objs.classid::oid::text, objs.objid::text
  FROM objs, pg_identify_object(objs.classid, objs.objid, 0) o
 WHERE objs.objid >= 16384
   AND NOT EXISTS (SELECT 1 FROM pg_depend d
                    WHERE d.classid = objs.classid AND d.objid = objs.objid
                      AND d.deptype IN ('i', 'a', 'e')
                      -- (a partitioned table depends on its own key columns)
                      AND NOT (d.refclassid = d.classid AND d.refobjid = d.objid))
   -- (pg_temp: the connection's own, named so from inside)
   AND coalesce(o.schema, o.identity) <> 'pg_temp'
   AND coalesce(o.schema, o.identity) NOT LIKE 'pg\\_temp\\_%'
   AND coalesce(o.schema, o.identity) NOT LIKE 'pg\\_toast\\_temp\\_%'
UNION ALL
SELECT 'prepared transaction', gid, NULL, NULL FROM pg_prepared_xacts WHERE database = current_database()";

/// What tells an object apart from every other over a spec's run: its
/// catalogue and OID (a rename keeps them), or a prepared transaction's GID.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    Oid(u32, u32),
    Prepared(String),
}

/// What a database holds, each object by its [`Key`].
pub type Snapshot = BTreeMap<Key, Object>;

/// What a spec did to the database given, from the snapshots before and after it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Objects that were not there before: what `--clean` drops.
    pub made: Vec<Object>,
    /// Objects that were there before under another name (as before, as after).
    pub renamed: Vec<(Object, Object)>,
    /// Objects that were there before and are not any more.
    pub gone: Vec<Object>,
}

impl Changes {
    /// Nothing made, renamed or dropped.
    pub fn is_empty(&self) -> bool {
        self.made.is_empty() && self.renamed.is_empty() && self.gone.is_empty()
    }
}

/// What the database holds. `reset`: sent ahead in the same message
/// (through a transaction pooler, whose server connection may carry a
/// session's SETs: [`crate::engine::env::pooled_reset`]; else empty).
pub async fn snapshot(client: &tokio_postgres::Client, reset: &str) -> Result<Snapshot, tokio_postgres::Error> {
    let msgs = client.simple_query(&format!("{reset}{SNAPSHOT}")).await?;
    Ok(crate::postgres::connect::text_rows(&msgs)
        .into_iter()
        .map(|r| {
            let col = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
            let oid = |i: usize| col(i).parse::<u32>().ok();
            let object = Object {
                kind: col(0),
                identity: col(1),
            };
            let key = match (oid(2), oid(3)) {
                (Some(class), Some(id)) => Key::Oid(class, id),
                _ => Key::Prepared(object.identity.clone()),
            };
            (key, object)
        })
        .collect())
}

/// What the spec made, renamed and dropped, going by the objects' keys;
/// made in the order the names sort (the drop order is worked out by [`clean`]).
pub fn changes(before: &Snapshot, after: &Snapshot) -> Changes {
    let mut c = Changes::default();
    for (key, now) in after {
        match before.get(key) {
            None => c.made.push(now.clone()),
            Some(was) if was != now => c.renamed.push((was.clone(), now.clone())),
            Some(_) => {}
        }
    }
    c.gone = before
        .iter()
        .filter(|(key, _)| !after.contains_key(key))
        .map(|(_, o)| o.clone())
        .collect();
    c.made.sort();
    c.gone.sort();
    c
}

/// Drops the objects one by one, without CASCADE, going round again while
/// a round drops something (an object another one depends on goes after
/// it); the ones that could not be dropped, with the server's reason. A
/// role first loses what it owns and was granted here (DROP OWNED BY:
/// a role the spec made owns only what the spec made).
pub async fn clean(client: &tokio_postgres::Client, objects: &[Object], reset: &str) -> Vec<(Object, String)> {
    // Prepared transactions first (they may hold locks on the rest), roles last.
    let rank = |o: &Object| match o.kind.as_str() {
        "prepared transaction" => 0,
        "role" => 2,
        _ => 1,
    };
    let mut left: Vec<Object> = objects.to_vec();
    left.sort_by_key(|o| rank(o));
    loop {
        let mut failed = Vec::new();
        let before = left.len();
        for o in left {
            let sql = if o.kind == "role" {
                format!("{reset}DROP OWNED BY {0}; {1}", o.identity, o.drop_sql())
            } else {
                format!("{reset}{}", o.drop_sql())
            };
            if let Err(e) = client.batch_execute(&sql).await {
                let why = e
                    .as_db_error()
                    .map(|d| d.message().to_string())
                    .unwrap_or_else(|| e.to_string());
                failed.push((o, why));
            }
        }
        if failed.is_empty() || failed.len() == before {
            return failed;
        }
        left = failed.into_iter().map(|(o, _)| o).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(kind: &str, identity: &str) -> Object {
        Object {
            kind: kind.into(),
            identity: identity.into(),
        }
    }

    #[test]
    fn drops_name_the_kind_as_sql_spells_it() {
        assert_eq!(o("table", "public.t").drop_sql(), "DROP TABLE public.t");
        assert_eq!(
            o("materialized view", "public.mv").drop_sql(),
            "DROP MATERIALIZED VIEW public.mv"
        );
        assert_eq!(
            o("function", "public.f(integer)").drop_sql(),
            "DROP FUNCTION public.f(integer)"
        );
        assert_eq!(o("foreign-data wrapper", "w").drop_sql(), "DROP FOREIGN DATA WRAPPER w");
        assert_eq!(
            o("prepared transaction", "it's").drop_sql(),
            "ROLLBACK PREPARED 'it''s'"
        );
    }

    #[test]
    fn only_what_was_not_there_before_is_made_and_a_rename_is_not_a_new_object() {
        let table = |oid| Key::Oid(1259, oid);
        let before: Snapshot = [
            (table(16400), o("table", "public.mine")),
            (table(16410), o("table", "public.precious")),
            (table(16420), o("table", "public.keepme")),
            (Key::Oid(1260, 16430), o("role", "alice")),
        ]
        .into();
        let after: Snapshot = [
            (table(16400), o("table", "public.mine")),
            (table(16410), o("table", "public.precious_renamed")),
            (table(16500), o("table", "public.new")),
            (Key::Oid(1260, 16430), o("role", "alice")),
            (Key::Oid(1260, 16510), o("role", "bob")),
            (Key::Prepared("p1".into()), o("prepared transaction", "p1")),
        ]
        .into();
        let c = changes(&before, &after);
        assert_eq!(
            c.made,
            vec![
                o("prepared transaction", "p1"),
                o("role", "bob"),
                o("table", "public.new")
            ]
        );
        assert_eq!(
            c.renamed,
            vec![(o("table", "public.precious"), o("table", "public.precious_renamed"))]
        );
        assert_eq!(c.gone, vec![o("table", "public.keepme")]);
        assert!(changes(&before, &before).is_empty());
    }
}
