-- trace.sql: the SQLite schema of a loaded encore session, version 3.
-- Documented column by column in schemas/sql.md.  The build generates sql/sql_schema.h, the
-- text the loader runs, from this file (sql/gen_schema.py); tests/unit/test_sql.c checks it.
-- Event ids are global: event.id = process.first_event + event.idx - 1.
PRAGMA user_version = 3;

CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT
) WITHOUT ROWID;

CREATE TABLE process (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  parent INTEGER,
  parent_name TEXT,
  fork_event INTEGER,
  pid INTEGER,
  ppid INTEGER,
  host TEXT,
  host_id TEXT,
  exe TEXT,
  argv TEXT,
  cwd TEXT,
  build_id TEXT,
  start_realtime_ns INTEGER,
  images INTEGER NOT NULL,
  first_event INTEGER NOT NULL,
  nevents INTEGER NOT NULL,
  threads INTEGER NOT NULL
);

CREATE TABLE event (
  id INTEGER PRIMARY KEY,
  proc INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  kind TEXT NOT NULL,
  call TEXT,
  fd INTEGER,
  channel INTEGER,
  offset INTEGER,
  len INTEGER,
  result INTEGER,
  errno INTEGER,
  flags INTEGER,
  external INTEGER,
  site INTEGER,
  time_ns INTEGER,
  image INTEGER,
  thread INTEGER
);

CREATE TABLE channel (
  id INTEGER PRIMARY KEY,
  proc INTEGER NOT NULL,
  local_id INTEGER NOT NULL,
  type TEXT NOT NULL,
  dir TEXT,
  local TEXT,
  peer TEXT,
  origin INTEGER,
  peer_channel INTEGER,
  status TEXT NOT NULL
);

CREATE TABLE message (
  id INTEGER PRIMARY KEY,
  send INTEGER NOT NULL,
  recv INTEGER NOT NULL,
  channel INTEGER,
  offset INTEGER,
  bytes INTEGER,
  peek INTEGER NOT NULL
);

CREATE TABLE connection (
  accept INTEGER PRIMARY KEY,
  connect INTEGER NOT NULL,
  channel INTEGER
);

CREATE TABLE dependency (
  dst INTEGER NOT NULL,
  src INTEGER NOT NULL,
  kind TEXT NOT NULL,
  PRIMARY KEY (dst, src)
) WITHOUT ROWID;

CREATE TABLE stack (
  id INTEGER PRIMARY KEY,
  proc INTEGER NOT NULL,
  site INTEGER NOT NULL,
  nframes INTEGER NOT NULL,
  function TEXT
);

CREATE TABLE frame (
  stack INTEGER NOT NULL,
  depth INTEGER NOT NULL,
  function TEXT,
  object TEXT,
  pc INTEGER,
  offset INTEGER,
  PRIMARY KEY (stack, depth)
) WITHOUT ROWID;

CREATE TABLE mark (
  event INTEGER PRIMARY KEY,
  proc INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  key TEXT NOT NULL,
  value INTEGER
);

CREATE TABLE input (
  event INTEGER PRIMARY KEY,
  proc INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  kind TEXT NOT NULL,
  size INTEGER,
  value BLOB,
  number INTEGER
);

CREATE TABLE race (
  recv INTEGER NOT NULL,
  send INTEGER NOT NULL,
  rival INTEGER NOT NULL
);

CREATE TABLE warning (
  id INTEGER PRIMARY KEY,
  message TEXT NOT NULL
);

CREATE VIEW message_race AS
  SELECT r.recv AS recv, rp.name AS receiver, re.idx AS recv_idx,
         r.send AS send, sp.name AS sender, se.idx AS send_idx,
         r.rival AS rival, vp.name AS rival_sender, ve.idx AS rival_idx
  FROM race r
  JOIN event re ON re.id = r.recv JOIN process rp ON rp.id = re.proc
  JOIN event se ON se.id = r.send JOIN process sp ON sp.id = se.proc
  JOIN event ve ON ve.id = r.rival JOIN process vp ON vp.id = ve.proc;

CREATE VIEW edge AS
  SELECT send AS src, recv AS dst, 'message' AS kind FROM message
  UNION ALL
  SELECT connect, accept, 'connection' FROM connection
  UNION ALL
  SELECT src, dst, kind FROM dependency
  UNION ALL
  SELECT fork_event, first_event, 'fork' FROM process
  WHERE fork_event IS NOT NULL AND nevents > 0;

CREATE VIEW external_input AS
  SELECT e.id AS event, p.name AS process, e.idx AS idx, e.kind AS kind, e.call AS call,
         e.channel AS channel, e.result AS result, i.size AS size, i.value AS value,
         i.number AS number, e.time_ns AS time_ns
  FROM event e JOIN process p ON p.id = e.proc LEFT JOIN input i ON i.event = e.id
  WHERE e.kind IN ('input', 'clock', 'random', 'ready') OR e.external = 1;

CREATE VIEW process_summary AS
  SELECT p.id AS id, p.name AS name, p.pid AS pid, p.nevents AS events,
         sum(e.kind = 'send' AND e.result > 0) AS sends,
         coalesce(sum(CASE WHEN e.kind = 'send' AND e.result > 0 THEN e.result END), 0)
           AS bytes_sent,
         sum(e.kind = 'recv' AND e.result > 0) AS recvs,
         coalesce(sum(CASE WHEN e.kind = 'recv' AND e.result > 0 THEN e.result END), 0)
           AS bytes_received,
         sum(e.kind IN ('input', 'clock', 'random', 'ready') OR e.external IS 1) AS inputs,
         sum(e.kind = 'mark') AS marks,
         sum(e.errno IS NOT NULL AND e.errno <> 0) AS failed_calls,
         max(CASE WHEN e.kind = 'exit' THEN e.result END) AS exit_status,
         max(CASE WHEN e.kind = 'signal' AND (e.flags & 256) <> 0 THEN e.result END)
           AS fatal_signal,
         max(e.time_ns) - min(e.time_ns) AS duration_ns
  FROM process p
  LEFT JOIN event e ON e.id BETWEEN p.first_event AND p.first_event + p.nevents - 1
  GROUP BY p.id;

-- Stability (schemas/stability.md): the distributed control-flow graph of the session, its
-- call-site nodes and their PRE and POST sets (Spezialetti & Gupta, Definitions 3.1, 3.2),
-- with the node ids `encore stable DIR --sets` prints.
CREATE TABLE site_node (
  id INTEGER PRIMARY KEY,
  process TEXT NOT NULL,
  kind TEXT NOT NULL,
  function TEXT NOT NULL,
  site TEXT NOT NULL,
  seen INTEGER NOT NULL
);

CREATE TABLE pre_set (
  node INTEGER NOT NULL,
  member INTEGER NOT NULL,
  PRIMARY KEY (node, member)
) WITHOUT ROWID;

CREATE TABLE post_set (
  node INTEGER NOT NULL,
  member INTEGER NOT NULL,
  kind TEXT NOT NULL,
  PRIMARY KEY (node, member, kind)
) WITHOUT ROWID;

-- Indexes, built after the rows are loaded.
CREATE INDEX message_send ON message (send);
CREATE INDEX channel_proc ON channel (proc, local_id);
CREATE INDEX connection_connect ON connection (connect);
