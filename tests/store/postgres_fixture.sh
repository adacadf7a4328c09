#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the store tests (a CTest fixture):
#   postgres_fixture.sh start STATE_DIR   initdb + pg_ctl start on 127.0.0.1, database etscope_test;
#                                         writes STATE_DIR/uri (a libpq URI) for the tests
#   postgres_fixture.sh stop STATE_DIR    stops it and removes its files
# The server refuses to run as root: as root the cluster belongs to the `postgres` user Debian's
# package creates. Debian's server binaries live in /usr/lib/postgresql/<version>/bin.
set -euo pipefail
action="$1"
state="$2"
bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
[[ -n "$bindir" && -x "$bindir/pg_ctl" ]] || { echo "postgres_fixture: no PostgreSQL server (apt-get install postgresql)" >&2; exit 1; }
as_owner() {
  if [[ "$(id -u)" == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$action" in
  start)
    "$0" stop "$state" >/dev/null 2>&1 || true
    mkdir -p "$state"
    data="$(mktemp -d /tmp/etscope-pg.XXXXXX)"
    echo "$data" > "$state/data_dir"
    [[ "$(id -u)" == 0 ]] && chown postgres: "$data"
    as_owner "$bindir/initdb" -D "$data/cluster" -A trust -U postgres -E UTF8 >"$state/initdb.log" 2>&1
    # A port of its own per build tree; the next ones if it is taken.
    port=$(( 20000 + $(printf '%s' "$state" | cksum | cut -d' ' -f1) % 20000 ))
    for try in 0 1 2 3 4 5 6 7; do
      p=$((port + try))
      if as_owner "$bindir/pg_ctl" -D "$data/cluster" -l "$data/server.log" -w -t 60 \
           -o "-c listen_addresses=127.0.0.1 -p $p -k $data -c fsync=off" start >"$state/pg_ctl.log" 2>&1; then
        as_owner "$bindir/createdb" -h 127.0.0.1 -p "$p" -U postgres etscope_test
        echo "postgresql://postgres@127.0.0.1:$p/etscope_test" > "$state/uri"
        exit 0
      fi
    done
    cat "$data/server.log" >&2 || true
    exit 1
    ;;
  stop)
    [[ -f "$state/data_dir" ]] || exit 0
    data="$(cat "$state/data_dir")"
    as_owner "$bindir/pg_ctl" -D "$data/cluster" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$data" "$state/uri" "$state/data_dir"
    ;;
  *) echo "usage: $0 start|stop STATE_DIR" >&2; exit 2 ;;
esac
