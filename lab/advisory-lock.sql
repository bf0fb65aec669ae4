-- Advisory locks (seed 003): the steps are in lab/advisory-lock.spec. This is
-- who holds the nightly job's lock, as pg_locks lists it (the key is the
-- schema's name plus the job's; :pids is the sessions' backend pids).

-- name: holders
SELECT pid, locktype, mode, granted FROM pg_locks
 WHERE locktype = 'advisory' AND objid = hashtext(current_schema() || ':nightly-stock-sync')::oid
   AND pid = ANY (:pids);
