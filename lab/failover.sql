-- lab failover: a writer on lab's own HA cluster (Patroni, etcd, three
-- PostgreSQL nodes), through failovers. Every write has an id of its own;
-- the writer keeps what each COMMIT answered, the node that answered and
-- its WAL position, and after the failover lab reads back which ids the
-- servers hold.
--
-- Follow it by hand: psql on the cluster's primary and standbys (database
-- lab), \set id to a write's id, \set request to a payment's request id.

-- name: create
-- why: a fresh table for the writer's rows: one row per write, by its id, with the port of the node that took it
-- why-tr: yazıcının satırları için yeni bir tablo: her yazma için id'siyle bir satır, onu alan düğümün portuyla
DROP TABLE IF EXISTS failover_writes, payments;
CREATE TABLE failover_writes (id bigint NOT NULL, port int NOT NULL DEFAULT inet_server_port());

-- name: create_payments
-- why: payments as many applications keep them: a generated key, the request they answer, no rule that a request is paid once
-- why-tr: birçok uygulamanın tuttuğu gibi ödemeler: üretilen bir anahtar, karşıladıkları istek, bir isteğin bir kez ödeneceğine dair kural yok
CREATE TABLE payments (payment_id bigserial PRIMARY KEY, request_id text NOT NULL, amount numeric NOT NULL);

-- name: create_payments_keyed
-- why: payments keyed by the client's request id (the idempotency key): a request can be stored once only
-- why-tr: istemcinin istek kimliğiyle (idempotency anahtarı) anahtarlanmış ödemeler: bir istek yalnızca bir kez saklanabilir
CREATE TABLE payments (payment_id bigserial PRIMARY KEY, request_id text NOT NULL UNIQUE, amount numeric NOT NULL);

-- name: write
-- why: the application's write: one row, committed; then the primary's WAL position after the commit and which node answered
-- why-tr: uygulamanın yazması: commit edilen tek satır; ardından commit'ten sonra primary'nin WAL konumu ve hangi düğümün cevap verdiği
BEGIN;
INSERT INTO failover_writes (id) VALUES (:id);
COMMIT;
SELECT pg_current_wal_lsn()::text AS lsn, inet_server_port() AS port;

-- name: remote_apply
-- why: COMMIT waits until the synchronous standby has applied the commit, not only stored it
-- why-tr: COMMIT, senkron standby commit'i yalnızca saklamakla kalmayıp uygulayana kadar bekler
SET synchronous_commit = remote_apply;

-- name: pay
-- why: the payment for the request, inserted blindly: a retry inserts it again
-- why-tr: isteğin ödemesi, körlemesine eklenir: yeniden deneme onu bir daha ekler
BEGIN;
INSERT INTO payments (request_id, amount) VALUES (:'request', 10.00);
COMMIT;
SELECT pg_current_wal_lsn()::text AS lsn, inet_server_port() AS port;

-- name: pay_once
-- why: the payment under its idempotency key: a retry of a request already stored inserts nothing (INSERT 0 0)
-- why-tr: idempotency anahtarıyla ödeme: zaten saklanmış bir isteğin yeniden denemesi hiçbir şey eklemez (INSERT 0 0)
BEGIN;
INSERT INTO payments (request_id, amount) VALUES (:'request', 10.00) ON CONFLICT (request_id) DO NOTHING;
COMMIT;
SELECT pg_current_wal_lsn()::text AS lsn, inet_server_port() AS port;

-- name: read
-- why: which of the writer's rows this node holds
-- why-tr: yazıcının satırlarından hangilerini bu düğümün tuttuğu
SELECT count(*) AS rows, coalesce(string_agg(id::text, ',' ORDER BY id), '') AS ids FROM failover_writes;

-- name: read_one
-- why: another session reads the row the writer was just told about
-- why-tr: başka bir oturum, yazıcıya az önce bildirilen satırı okur
SELECT count(*) AS rows FROM failover_writes WHERE id = :id;

-- name: paid
-- why: how many payments each request has: more than one is a double charge
-- why-tr: her isteğin kaç ödemesi olduğu: birden fazlası çift tahsilattır
SELECT request_id, count(*) AS payments FROM payments GROUP BY request_id ORDER BY request_id;

-- name: cancel
-- why: cancel the writer's statement while its COMMIT waits for the standby (a statement_timeout, a person pressing Ctrl-C)
-- why-tr: yazıcının COMMIT'i standby'ı beklerken ifadesini iptal et (bir statement_timeout, Ctrl-C'ye basan biri)
SELECT pg_cancel_backend(:pid) AS cancelled;

-- name: replication
-- why: the primary's view of its standbys: who streams, who is synchronous, how far each has flushed
-- why-tr: primary'nin standby'larına bakışı: kim akıyor, kim senkron, her biri nereye kadar diske yazdı
SELECT application_name, state, sync_state, flush_lsn::text AS flush_lsn FROM pg_stat_replication ORDER BY application_name;

-- name: sync_names
-- why: the standbys a COMMIT waits for, as Patroni set them on the primary
-- why-tr: bir COMMIT'in beklediği standby'lar, Patroni'nin primary'de ayarladığı haliyle
SELECT current_setting('synchronous_standby_names') AS synchronous_standby_names;

-- name: is_primary
-- why: whether this node takes writes (not in recovery), as a client with target_session_attrs=primary asks
-- why-tr: bu düğüm yazma alıyor mu (recovery'de değil), target_session_attrs=primary ile bir istemcinin sorduğu gibi
SELECT NOT pg_is_in_recovery() AS primary;

-- lab failover --watch, on your own cluster: one table of lab's own
-- (:"table"), keyed lists each transaction appends its id to, two at once.

-- name: watch_create
-- why: lab's own table on your cluster: lists that each write appends its id to, two lists per transaction
-- why-tr: lab'ın cluster'ınızdaki kendi tablosu: her yazmanın id'sini eklediği listeler, işlem başına iki liste
CREATE TABLE :"table" (k text PRIMARY KEY, v bigint[] NOT NULL);

-- name: watch_write
-- why: one write: a transaction appending its id to two lists (both or neither must be there afterwards), then the WAL position
-- why-tr: bir yazma: id'sini iki listeye ekleyen bir işlem (sonra ikisi de ya da hiçbiri orada olmalı), ardından WAL konumu
BEGIN;
INSERT INTO :"table" AS t (k, v) VALUES (:'k1', ARRAY[:id]::bigint[]), (:'k2', ARRAY[:id]::bigint[])
  ON CONFLICT (k) DO UPDATE SET v = t.v || EXCLUDED.v;
COMMIT;
SELECT pg_current_wal_lsn()::text AS lsn;

-- name: watch_count
-- why: how many lists and ids the cluster's primary holds after the run
-- why-tr: çalıştırmadan sonra cluster'ın primary'sinin kaç liste ve id tuttuğu
SELECT count(*) AS lists, coalesce(sum(cardinality(v)), 0) AS ids FROM :"table";

-- name: watch_read
-- why: every list as the cluster's primary holds it after the run (lab's own read: it goes in the report, not the timeline)
-- why-tr: çalıştırmadan sonra cluster'ın primary'sinin tuttuğu haliyle her liste (lab'ın kendi okuması: zaman çizelgesine değil rapora girer)
SELECT k, array_to_string(v, ',') AS v FROM :"table" ORDER BY k;

-- name: watch_drop
-- why: lab drops its own table, and nothing else
-- why-tr: lab kendi tablosunu siler, başka hiçbir şeyi değil
DROP TABLE IF EXISTS :"table";
