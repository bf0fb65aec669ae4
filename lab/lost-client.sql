-- A lost client: A edits book 1's stock inside a transaction, then its
-- client vanishes (a crashed host, a pulled cable, a NAT that dropped the
-- connection): no packet comes back from it, none goes to it. B wants the
-- same row. By default the server does not notice for hours (TCP keepalive
-- defaults: two hours of silence, then probes), and keeps A's lock: B waits.
--
-- Follow it by hand with two psql windows (A and B) on the lab schema; to
-- make A's client vanish, put A behind a proxy you can cut, or pull A's
-- network away (not just close psql: a closed client sends FIN, which the
-- server notices).

-- name: a_begin
-- why: A starts a transaction, as an application's request does
-- why-tr: A bir transaction başlatır, bir uygulama isteğinin yaptığı gibi
BEGIN ISOLATION LEVEL READ COMMITTED;

-- name: a_lock
-- why: A edits book 1's stock: the row is A's until its transaction ends
-- why-tr: A 1 numaralı kitabın stoğunu düzenler: satır, transaction'ı bitene kadar A'nındır
UPDATE stock_items SET quantity_on_hand = quantity_on_hand - 1 WHERE book_id = 1;

-- name: idle_timeout
-- why: the server ends a session idle in a transaction for longer than this (its locks go with it)
-- why-tr: sunucu bir transaction içinde bundan uzun boşta kalan oturumu sonlandırır (kilitleri de gider)
SET idle_in_transaction_session_timeout = :'timeout';

-- name: keepalives
-- why: the server's kernel probes a silent client after 1 s and gives up after 2 unanswered probes 1 s apart
-- why-tr: sunucunun çekirdeği sessiz bir istemciyi 1 sn sonra yoklar ve 1 sn arayla cevapsız 2 yoklamadan sonra vazgeçer
SET tcp_keepalives_idle = 1; SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = 2;

-- name: check_interval
-- why: while a statement runs, the server checks this often that its client is still connected
-- why-tr: bir komut çalışırken sunucu istemcisinin hâlâ bağlı olduğunu bu sıklıkla denetler
SET client_connection_check_interval = :'timeout';

-- name: a_long
-- why: a long statement (a slow report, a call out) that holds A's row lock all along
-- why-tr: A'nın satır kilidini baştan sona tutan uzun bir komut (yavaş bir rapor, dışarıya bir çağrı)
SELECT pg_sleep(:seconds);

-- name: b_begin
-- why: B starts a transaction of its own
-- why-tr: B kendi transaction'ını başlatır
BEGIN ISOLATION LEVEL READ COMMITTED;

-- name: b_update
-- why: B wants the same row: it waits for A's lock
-- why-tr: B aynı satırı ister: A'nın kilidini bekler
UPDATE stock_items SET quantity_on_hand = quantity_on_hand - 1 WHERE book_id = 1;

-- name: b_commit
-- why: B's decrement is in
-- why-tr: B'nin eksiltmesi işlenir
COMMIT;

-- lab's own readings, on its control connection.

-- name: backend
SELECT state, coalesce(wait_event, '-') AS wait_event FROM pg_stat_activity WHERE pid = :pid;
