//! The one helper that opens connections, and the lab schema's SQL.
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio_postgres::{Client, Config, NoTls};

pub const SCHEMA_SQL: &str = include_str!("../lab/schema.sql");
pub const SEED_SQL: &str = include_str!("../lab/seed.sql");
/// The comment lab puts on its schema; a schema without it is never dropped.
const SCHEMA_MARK: &str = "lab: PostgreSQL concurrency lab schema";
/// The oldest server the scenarios are written for.
pub const MIN_SERVER_VERSION_NUM: i32 = 130000;

/// Opens one connection tagged with `application_name` and the run's schema
/// on its search_path; the connection task runs until the client is dropped.
pub async fn connect(base: &Config, app_name: &str, schema: Option<&str>) -> Result<Client> {
    let mut config = base.clone();
    // application_name is cut at 63 bytes by the server; cut it ourselves on a char boundary.
    let mut name = app_name.to_string();
    while name.len() > 63 {
        name.pop();
    }
    config.application_name(&name);
    if let Some(schema) = schema {
        // check_schema() allows only [a-z0-9_], so no escaping is needed.
        config.options(format!("-c search_path={schema}"));
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(5));
    }
    // connect_timeout bounds the TCP connect only; a peer that accepts and
    // then says nothing (not PostgreSQL, or a stuck proxy) is bounded here.
    let limit = *config.get_connect_timeout().unwrap_or(&Duration::from_secs(5));
    let (client, connection) = tokio::time::timeout(limit, config.connect(NoTls))
        .await
        .map_err(|_| anyhow::anyhow!(crate::tr!("db.handshake", s = limit.as_secs_f64())))?
        .map_err(describe_connect_error)?;
    tokio::spawn(async move {
        // The error, if any, reaches the caller through the client.
        let _ = connection.await;
    });
    Ok(client)
}

/// tokio-postgres says "error connecting to server" / "db error"; the cause is
/// in its source. Keep the chain, it is printed on one line.
fn describe_connect_error(e: tokio_postgres::Error) -> anyhow::Error {
    if let Some(db) = e.as_db_error() {
        anyhow::anyhow!(crate::tr!(
            "db.refused",
            message = db.message(),
            code = db.code().code()
        ))
    } else {
        anyhow::Error::new(e).context(crate::tr!("db.could_not_connect"))
    }
}

/// Substitutes the schema for psql's `:"schema"` and drops psql's backslash
/// commands, so the files in lab/ run the same under psql and under lab.
pub fn render_sql(text: &str, schema: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('\\'))
        .map(|l| l.replace(":\"schema\"", &format!("\"{schema}\"")))
        .collect::<Vec<_>>()
        .join("\n")
}

pub struct ServerInfo {
    pub version: String,
    pub version_num: i32,
}

pub async fn server_info(client: &Client) -> Result<ServerInfo> {
    let row = client
        .query_one(
            "SELECT current_setting('server_version'), current_setting('server_version_num')::int",
            &[],
        )
        .await
        .context(crate::tr!("db.version"))?;
    check_version(row.get(0), row.get(1))
}

/// The server's version, refused when older than the oldest we support.
pub fn check_version(version: String, version_num: i32) -> Result<ServerInfo> {
    if version_num < MIN_SERVER_VERSION_NUM {
        bail!(crate::tr!(
            "db.too_old",
            version = version,
            min = MIN_SERVER_VERSION_NUM / 10000
        ));
    }
    Ok(ServerInfo {
        version: version.split_whitespace().next().unwrap_or(&version).to_string(),
        version_num,
    })
}

/// Claims the schema for this run: a session advisory lock held by the control
/// connection until it closes. A second run on the same server and schema is
/// refused rather than allowed to spoil the first one's results.
pub async fn claim_schema(control: &Client, schema: &str) -> Result<()> {
    let got: bool = control
        .query_one(
            "SELECT pg_try_advisory_lock(hashtext('lab-run'), hashtext($1))",
            &[&schema],
        )
        .await
        .context(crate::tr!("db.run_lock"))?
        .get(0);
    if !got {
        bail!(crate::tr!("db.schema_busy", schema = schema));
    }
    Ok(())
}

/// Gives the schema back at the end of a run, so a run started right after
/// this one is not refused while our connection is still closing.
pub async fn release_schema(control: &Client, schema: &str) -> Result<()> {
    control
        .execute(
            "SELECT pg_advisory_unlock(hashtext('lab-run'), hashtext($1))",
            &[&schema],
        )
        .await
        .context(crate::tr!("db.release_lock"))?;
    Ok(())
}

/// Creates the schema afresh, unless a schema of that name exists that lab did not create.
pub async fn rebuild_schema(control: &Client, schema: &str) -> Result<()> {
    ensure_ours(control, schema).await?;
    control
        .batch_execute(&format!(
            "{}\n{}",
            render_sql(SCHEMA_SQL, schema),
            render_sql(SEED_SQL, schema)
        ))
        .await
        .map_err(|e| sql_error(e, &crate::tr!("db.create_schema")))?;
    Ok(())
}

pub async fn drop_schema(control: &Client, schema: &str) -> Result<()> {
    if ensure_ours(control, schema).await? {
        control
            .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
            .await
            .map_err(|e| sql_error(e, &crate::tr!("db.drop_schema")))?;
    }
    Ok(())
}

/// Ok(true) if the schema exists and is lab's, Ok(false) if it does not exist.
async fn ensure_ours(control: &Client, schema: &str) -> Result<bool> {
    let row = control
        .query_opt(
            "SELECT coalesce(obj_description(oid, 'pg_namespace'), '') FROM pg_namespace WHERE nspname = $1",
            &[&schema],
        )
        .await?;
    match row {
        None => Ok(false),
        Some(r) if r.get::<_, String>(0).starts_with(SCHEMA_MARK) => Ok(true),
        Some(_) => bail!(crate::tr!("db.not_ours", schema = schema)),
    }
}

/// A database error as one line: message, SQLSTATE, and what it was doing.
pub fn sql_error(e: tokio_postgres::Error, what: &str) -> anyhow::Error {
    match e.as_db_error() {
        Some(db) => anyhow::anyhow!(crate::tr!(
            "db.error",
            what = what,
            message = db.message(),
            code = db.code().code()
        )),
        None => anyhow::Error::new(e).context(what.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_servers_are_refused_by_version() {
        let err = check_version("12.20".into(), 120020).err().unwrap().to_string();
        assert_eq!(
            err,
            "PostgreSQL 12.20 is older than the oldest version lab supports (13)"
        );
        assert_eq!(check_version("13.0".into(), 130000).unwrap().version, "13.0");
        assert_eq!(
            check_version("18.6 (Debian 18.6-1)".into(), 180006).unwrap().version,
            "18.6"
        );
    }

    #[test]
    fn psql_files_render_for_any_schema() {
        let sql = render_sql(SCHEMA_SQL, "lab_two");
        assert!(sql.contains("CREATE SCHEMA \"lab_two\";"));
        assert!(sql.contains("SET search_path TO \"lab_two\";"));
        assert!(!sql.contains(":\"schema\""));
        assert!(!sql.lines().any(|l| l.trim_start().starts_with('\\')));
        assert!(render_sql(SEED_SQL, "x").contains("SET search_path TO \"x\";"));
    }
}
