-- Reads from a streaming standby (a read replica) and the primary's writes.
-- Staleness is made deterministic by pausing replay on the standby:
-- the standby keeps receiving WAL, it only stops applying it.
--
-- Follow it by hand: psql on the primary (P) and on the standby (S, R),
-- with search_path set to the lab schema, \set schema to its name, \set lsn to
-- what write_lsn returned. VACUUM names the schema: it cannot run in a
-- transaction, where a transaction pooler would need lab's SET search_path.

-- name: pause
-- why: stop applying WAL on the standby (it still receives it): reads there stay where they are
-- why-tr: standby'da WAL uygulamayı durdur (almaya devam eder): oradaki okumalar olduğu yerde kalır
SELECT pg_wal_replay_pause();

-- name: pause_state
-- why: whether replay has really stopped (PostgreSQL 14+: paused, pause requested, not paused)
-- why-tr: replay gerçekten durdu mu (PostgreSQL 14+: paused, pause requested, not paused)
SELECT pg_get_wal_replay_pause_state() AS state;

-- name: resume
-- why: apply WAL again: the standby catches up
-- why-tr: WAL'ı yeniden uygula: standby yetişir
SELECT pg_wal_replay_resume();

-- name: durable
-- why: as on any real server, COMMIT flushes its WAL, which is what the standby is sent (lab's throwaway server runs with it off)
-- why-tr: her gerçek sunucuda olduğu gibi COMMIT WAL'ını diske yazar; standby'a gönderilen de budur (lab'ın geçici sunucusunda kapalıdır)
SET synchronous_commit = on;

-- name: write
-- why: the user's write on the primary: book 1's price goes from 42.00 to 45.00
-- why-tr: kullanıcının primary'deki yazması: 1 numaralı kitabın fiyatı 42.00'dan 45.00'a çıkar
UPDATE books SET price = 45.00 WHERE book_id = 1;

-- name: write_lsn
-- why: the primary's WAL position after the commit: the token that travels with the user
-- why-tr: commit'ten sonra primary'nin WAL konumu: kullanıcıyla birlikte taşınan jeton
SELECT pg_current_wal_lsn() AS lsn;

-- name: read
-- why: read book 1's price
-- why-tr: 1 numaralı kitabın fiyatını oku
SELECT price FROM books WHERE book_id = 1;

-- name: lag
-- why: the standby's lag as the primary reports it: bytes not replayed, and replay_lag
-- why-tr: primary'nin bildirdiği standby gecikmesi: uygulanmamış baytlar ve replay_lag
SELECT pg_wal_lsn_diff(sent_lsn, replay_lsn) AS lag_bytes, replay_lag, sync_state
  FROM pg_stat_replication;

-- name: received
-- why: whether the standby has received WAL up to the token (received, maybe not replayed)
-- why-tr: standby jetona kadar WAL almış mı (alınmış, belki uygulanmamış)
SELECT pg_last_wal_receive_lsn() >= :'lsn'::pg_lsn AS received;

-- name: replayed
-- why: whether the standby has replayed the WAL up to the token: a read there sees the write
-- why-tr: standby jetona kadar WAL'ı uygulamış mı: oradaki bir okuma yazmayı görür
SELECT pg_last_wal_replay_lsn() >= :'lsn'::pg_lsn AS replayed;

-- name: sync_on
-- why: make every standby synchronous (lab's throwaway primary only)
-- why-tr: her standby'ı senkron yap (yalnızca lab'ın geçici primary'sinde)
ALTER SYSTEM SET synchronous_standby_names = '*';

-- name: sync_off
-- why: back to asynchronous replication
-- why-tr: asenkron replikasyona geri dön
ALTER SYSTEM RESET synchronous_standby_names;

-- name: reload
-- why: make the server read its configuration again
-- why-tr: sunucunun yapılandırmasını yeniden okumasını sağla
SELECT pg_reload_conf();

-- name: remote_apply
-- why: COMMIT returns only once the synchronous standby has applied it
-- why-tr: COMMIT yalnızca senkron standby onu uyguladığında döner
SET synchronous_commit = remote_apply;

-- name: sync_probe
-- why: lab's own probe, not in the timeline: with replay paused, a commit that writes WAL (a transactional logical message; no table changes) with remote_apply must wait for the standby. Commits wait only once the checkpointer has read the new synchronous_standby_names, which can come after pg_stat_replication already says sync
-- why-tr: lab'ın kendi yoklaması, zaman çizelgesinde yok: replay duraklatılmışken, remote_apply ile WAL yazan bir commit (işlemsel bir mantıksal mesaj; tablo değişmez) standby'ı beklemeli. Commit'ler ancak checkpointer yeni synchronous_standby_names'i okuduktan sonra bekler; bu, pg_stat_replication sync demeye başladıktan sonra olabilir
BEGIN; SET LOCAL synchronous_commit = remote_apply; SELECT pg_logical_emit_message(true, 'lab', 'sync probe') AS lsn; COMMIT;

-- name: hold
-- why: a lock the standby reader will wait for, so its query runs as long as lab needs
-- why-tr: standby okuyucusunun bekleyeceği bir kilit; böylece sorgusu lab'ın gerektiği kadar sürer
SELECT pg_advisory_lock(hashtext(current_schema() || ':report'));

-- name: release
-- why: let the reader's query finish
-- why-tr: okuyucunun sorgusunun bitmesine izin ver
SELECT pg_advisory_unlock(hashtext(current_schema() || ':report'));

-- name: begin_rr
-- why: a report on the standby: one snapshot for the whole transaction
-- why-tr: standby'da bir rapor: tüm işlem için tek bir snapshot
BEGIN ISOLATION LEVEL REPEATABLE READ;

-- name: count
-- why: the report reads the books (its snapshot still needs their old row versions)
-- why-tr: rapor kitapları okur (snapshot'ı hâlâ eski satır sürümlerine ihtiyaç duyar)
SELECT count(*) AS books FROM books;

-- name: long_read
-- why: a long report query: it holds books and its snapshot while it waits
-- why-tr: uzun bir rapor sorgusu: beklerken books'u ve snapshot'ını tutar
SELECT count(*) AS books, pg_advisory_lock(hashtext(current_schema() || ':report')) FROM books;

-- name: rollback
-- why: end the report
-- why-tr: raporu bitir
ROLLBACK;

-- name: delete_vacuum
-- why: delete rows and vacuum them away on the primary: the cleanup is replayed on the standby
-- why-tr: primary'de satırları sil ve vacuum ile kaldır: temizlik standby'da yeniden oynatılır
DELETE FROM customers WHERE customer_id > 1000;

-- name: vacuum
-- why: remove the dead rows (VACUUM reports what it could not remove)
-- why-tr: ölü satırları kaldır (VACUUM kaldıramadıklarını bildirir)
VACUUM (VERBOSE) :"schema".customers;

-- name: alter
-- why: DDL on the primary: its ACCESS EXCLUSIVE lock is replayed on the standby
-- why-tr: primary'de DDL: ACCESS EXCLUSIVE kilidi standby'da yeniden oynatılır
ALTER TABLE books ADD COLUMN subtitle text;

-- name: settle
-- why: clean up this database's dead rows, catalogs included, before the report starts (the standby replays that first): the DDL's own catalog lookups would prune them, and that cleanup, replayed, cancels a standby report whose snapshot still needs them (any open transaction on the server keeps a standby snapshot's xmin old) for a snapshot conflict, before the lock conflict is reached
-- why-tr: rapor başlamadan önce bu veritabanının ölü satırlarını, kataloglar dahil, temizle (standby önce bunu yeniden oynatır): DDL'in kendi katalog aramaları onları budardı ve bu temizlik yeniden oynatılınca, snapshot'ı onlara hâlâ ihtiyaç duyan bir standby raporunu (sunucudaki herhangi bir açık işlem standby snapshot'ının xmin'ini eski tutar) kilit çakışmasına gelmeden bir snapshot çakışmasıyla iptal ederdi
VACUUM;

-- name: flush
-- why: a WAL segment switch flushes everything written so far, the VACUUM's cleanup with it (VACUUM commits without flushing), and the standby is sent WAL only once flushed
-- why-tr: WAL segment geçişi şimdiye kadar yazılan her şeyi, VACUUM'un temizliğiyle birlikte diske yazar (VACUUM diske yazmadan commit eder); standby'a WAL ancak diske yazılınca gönderilir
SELECT pg_switch_wal() AS switched;

-- name: unalter
-- why: undo the DDL before the report is asked again (when another conflict cancelled it first)
-- why-tr: rapor yeniden sorulmadan önce DDL'i geri al (başka bir çakışma onu önce iptal ettiyse)
ALTER TABLE books DROP COLUMN subtitle;

-- name: conflicts
-- why: the standby's count of queries cancelled by recovery conflicts
-- why-tr: standby'da kurtarma çakışmaları yüzünden iptal edilen sorguların sayısı
SELECT confl_snapshot, confl_lock FROM pg_stat_database_conflicts WHERE datname = current_database();

-- name: dead
-- why: the dead rows VACUUM left in customers
-- why-tr: VACUUM'un customers'ta bıraktığı ölü satırlar
SELECT n_dead_tup AS dead FROM pg_stat_user_tables WHERE relid = 'customers'::regclass;

-- Through pgpool-II (lab replica --via pgpool, lab/pgpool.conf): one
-- connection string for the application; pgpool sends writes to the
-- primary and balances reads to the standby. Each read says which server
-- answered it.

-- name: read_where
-- why: read book 1's price through pgpool-II, and which server answered it (on_standby)
-- why-tr: 1 numaralı kitabın fiyatını pgpool-II üzerinden oku; hangi sunucunun cevap verdiği de (on_standby)
SELECT price, pg_is_in_recovery() AS on_standby FROM books WHERE book_id = 1;

-- name: read_primary
-- why: the same read with pgpool-II's hint: a query that starts with /*NO LOAD BALANCE*/ goes to the primary
-- why-tr: aynı okuma pgpool-II'nin ipucuyla: /*NO LOAD BALANCE*/ ile başlayan bir sorgu primary'ye gider
/*NO LOAD BALANCE*/ SELECT price, pg_is_in_recovery() AS on_standby FROM books WHERE book_id = 1;

-- name: token_reached
-- why: the read carries the token: has the server pgpool-II balances reads to replayed up to it?
-- why-tr: okuma jetonu taşır: pgpool-II'nin okumaları gönderdiği sunucu ona kadar uygulamış mı?
SELECT pg_last_wal_replay_lsn() >= :'lsn'::pg_lsn AS replayed, pg_is_in_recovery() AS on_standby;

-- name: begin_rr_app
-- why: the application's transaction, REPEATABLE READ: on one server its read and its write would see one snapshot
-- why-tr: uygulamanın işlemi, REPEATABLE READ: tek sunucuda okuması ve yazması tek bir snapshot görürdü
BEGIN ISOLATION LEVEL REPEATABLE READ;

-- name: read_in_txn
-- why: the transaction reads the price (no write yet in it: pgpool-II balances the read), with the level the server answering it runs
-- why-tr: işlem fiyatı okur (içinde henüz yazma yok: pgpool-II okumayı dengeler); cevap veren sunucunun çalıştırdığı seviyeyle birlikte
SELECT price, pg_is_in_recovery() AS on_standby, current_setting('transaction_isolation') AS isolation FROM books WHERE book_id = 1;

-- name: add_to_read
-- why: the application writes what it read plus 1.00 (a write: pgpool-II sends it to the primary)
-- why-tr: uygulama okuduğunun 1.00 fazlasını yazar (bir yazma: pgpool-II onu primary'ye gönderir)
UPDATE books SET price = :'price'::numeric + 1.00 WHERE book_id = 1
  RETURNING price, pg_is_in_recovery() AS on_standby;

-- name: commit
-- why: commit the application's transaction
-- why-tr: uygulamanın işlemini commit et
COMMIT;

-- name: sync_absent
-- why: long-fork: make commits wait for a synchronous standby that never comes (lab's throwaway primary only): a COMMIT then stays in SyncRep, its commit record written and streamed, its rows not yet visible on the primary
-- why-tr: long-fork: commit'leri hiç gelmeyecek bir senkron standby'ı bekletir (yalnızca lab'ın geçici primary'sinde): COMMIT SyncRep'te kalır, commit kaydı yazılmış ve gönderilmiştir, satırları primary'de henüz görünmez
ALTER SYSTEM SET synchronous_standby_names = 'lab_absent_standby';

-- name: write_second
-- why: long-fork: T2's write, committed without waiting for any standby: book 2's price goes from 35.00 to 39.00
-- why-tr: long-fork: T2'nin yazması, hiçbir standby'ı beklemeden commit edilir: 2 numaralı kitabın fiyatı 35.00'dan 39.00'a çıkar
BEGIN; SET LOCAL synchronous_commit = local; UPDATE books SET price = 39.00 WHERE book_id = 2; COMMIT;

-- name: read_both
-- why: long-fork: read both writes in one snapshot
-- why-tr: long-fork: iki yazmayı tek bir snapshot'ta oku
SELECT string_agg(book_id || '=' || price, ' ' ORDER BY book_id) AS prices FROM books WHERE book_id IN (1, 2);

-- name: end_wait
-- why: long-fork: end T1's wait for the absent standby (pg_cancel_backend): its COMMIT returns with a WARNING, the transaction already committed locally, and it becomes visible on the primary
-- why-tr: long-fork: T1'in olmayan standby'ı beklemesini bitir (pg_cancel_backend): COMMIT'i bir WARNING ile döner, işlem yerelde zaten commit edilmiştir ve primary'de görünür olur
SELECT pg_cancel_backend(:pid);
