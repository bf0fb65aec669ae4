-- What a transaction pooler (PgBouncer, pool_mode = transaction: Neon's
-- -pooler host, Supabase's port 6543) does to session state: between two
-- transactions a client's server connection goes back to the pool and the
-- next client gets it, with whatever the last one left on it.
--
-- Follow it by hand: two psql windows on the same pool with pool_size = 1
-- (lab pooler writes such a pgbouncer.ini), a third directly on the server,
-- after \set key 42 and \set channel price_changes (lab derives both from
-- its schema: advisory locks and channels are shared by the whole database).

-- name: backend
-- why: which server backend (process) this client's statement runs on
-- why-tr: bu istemcinin komutunun hangi sunucu backend'inde (süreçte) çalıştığı
SELECT pg_backend_pid() AS backend;

-- name: set_session
-- why: session-level SET: it stays on the server connection, whoever gets it next
-- why-tr: oturum düzeyinde SET: sunucu bağlantısında kalır, sıradaki kim alırsa alsın
SET search_path = a_private, public; SET statement_timeout = '1234ms';

-- name: settings
-- why: what this client's session runs with (search_path, statement_timeout)
-- why-tr: bu istemcinin oturumunun hangi ayarlarla çalıştığı (search_path, statement_timeout)
SELECT current_setting('search_path') AS search_path,
       current_setting('statement_timeout') AS statement_timeout;

-- name: set_local
-- why: SET LOCAL: the settings end with the transaction, before the connection goes back to the pool
-- why-tr: SET LOCAL: ayarlar bağlantı havuza dönmeden, işlemle birlikte biter
BEGIN;
SET LOCAL search_path = a_private, public;
SET LOCAL statement_timeout = '1234ms';
SELECT current_setting('search_path') AS search_path,
       current_setting('statement_timeout') AS statement_timeout;
COMMIT;

-- name: lock_session
-- why: a session-level advisory lock: held by the server backend, not by this client
-- why-tr: oturum düzeyinde advisory kilit: bu istemcinin değil, sunucu backend'inin elinde
SELECT pg_try_advisory_lock(:key) AS got_lock;

-- name: begin
-- why: a transaction: the pooler keeps this client on one server connection until it ends (held open on purpose: no idle timeout of the role's ends it)
-- why-tr: bir işlem: pooler bu istemciyi işlem bitene kadar tek bir sunucu bağlantısında tutar (bilerek açık tutulur: rolün boşta zaman aşımı onu bitirmez)
BEGIN;
SET LOCAL idle_in_transaction_session_timeout = 0;

-- name: lock_xact
-- why: a transaction-level advisory lock: held until COMMIT, on this client's own server connection
-- why-tr: işlem düzeyinde advisory kilit: COMMIT'e kadar, bu istemcinin kendi sunucu bağlantısında tutulur
SELECT pg_try_advisory_xact_lock(:key) AS got_lock;

-- name: commit
-- why: end the transaction: the server connection goes back to the pool
-- why-tr: işlemi bitir: sunucu bağlantısı havuza döner
COMMIT;

-- name: prepare
-- why: a named prepared statement lives on the server connection, not with the client
-- why-tr: adlı bir prepared statement istemciyle değil, sunucu bağlantısında yaşar
PREPARE with_vat(numeric) AS SELECT round($1 * 1.20, 2) AS gross;

-- name: execute
-- why: run the statement called with_vat (B never prepared it)
-- why-tr: with_vat adlı komutu çalıştır (B onu hiç hazırlamadı)
EXECUTE with_vat(42.00);

-- name: prepared_here
-- why: the named statements on this server connection
-- why-tr: bu sunucu bağlantısındaki adlı komutlar
SELECT count(*) AS prepared FROM pg_prepared_statements;

-- name: listen
-- why: subscribe to price changes
-- why-tr: fiyat değişikliklerine abone ol
LISTEN :channel;

-- name: notify
-- why: announce a price change (delivered to every backend listening at commit)
-- why-tr: bir fiyat değişikliğini duyur (commit anında dinleyen her backend'e iletilir)
NOTIFY :channel, 'book 1: 45.00';

-- name: ping
-- why: a round trip through the pooler: a notification held for this client would arrive with it
-- why-tr: pooler üzerinden bir gidiş dönüş: bu istemciye tutulan bir bildirim onunla gelirdi
SELECT 1 AS ping;

-- name: work
-- why: a short statement that needs a server connection from the pool
-- why-tr: havuzdan bir sunucu bağlantısı gerektiren kısa bir komut
SELECT 1 AS done;

-- name: ungranted
-- why: lock waits of the pool's server backends, as the server sees them
-- why-tr: havuzun sunucu backend'lerinin kilit beklemeleri, sunucunun gördüğü şekliyle
SELECT count(*) AS lock_waits FROM pg_locks WHERE NOT granted AND pid IN (:pids);

-- name: activity
-- why: what the server shows of the pool's backends
-- why-tr: sunucunun havuzun backend'lerinden gösterdiği
SELECT pid, state, wait_event_type, wait_event FROM pg_stat_activity WHERE pid IN (:pids) ORDER BY pid;
