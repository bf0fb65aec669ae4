-- The DDL lock queue (seed 003, "DDL Kuyruğu"): its steps are in
-- lab/ddl-lock-queue.spec. This is the seed's view of the queue, which lab
-- takes while B and C wait (:pids is the sessions' backend pids).

-- name: queue
SELECT pid, pg_blocking_pids(pid) AS blocked_by, state, wait_event_type, left(query, 45) AS query
  FROM pg_stat_activity
 WHERE pid = ANY (:pids)
 ORDER BY backend_start;
