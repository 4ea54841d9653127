#!/bin/sh
# replay_privdrop.sh: a server whose worker drops to nobody after the fork (nginx's master
# and workers) keeps telling recorded peers from outside ones (recorder/README.md, "Bytes",
# the registry; docs/security.md): run as root, the worker (setuid 65534 before its first
# accept) serves TCP clients recorded in the same session.  The worker's receives are
# messages from recorded peers, not input; the session replays to the end with the
# recorded output (twice), and `encore replay --stop` halts at `encore inf`'s cut.  The
# registry is 0711 (searchable through the recorder's descriptor, not listable) in a
# session directory that stays 0700.  Skipped (77) when not root or without nobody.
#   proxy: the worker also passes each request to a recorded upstream (root) over a
#          connection made after its drop, for which it cannot make a registry entry: both
#          ends take that connection for an outside one (each logs what it receives as
#          input), and the session replays all the same.
#   closed: the worker closes every descriptor above its listening socket after its drop
#          (the recorder's registry descriptor too), so the registry cannot answer it: its
#          trace stops there, `encore record` warns and `encore check` flags it, naming the
#          worker, and the replay runs it free from there, to the end, with the same output.
# Usage: replay_privdrop.sh ENCORE PROG [plain|proxy|closed]
set -eu
encore=$1 prog=$2 mode=${3:-plain}
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root (the worker drops to nobody)"; exit 77; }
getent passwd nobody > /dev/null 2>&1 || { echo "skip: no user nobody"; exit 77; }
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_privdrop.XXXXXX")
chmod 0700 "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; for f in "$tmp"/*.err; do [ -s "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done; exit 1; }
# the worker is the root's first child, or its second after the upstream
case $mode in
proxy) wk=srv.2 arg=proxy ;;
closed) wk=srv.1 arg=closed ;;
*) wk=srv.1 arg="" ;;
esac

n=3
"$encore" record -q -o "$tmp/s" --name srv -- "$prog" $n $arg > "$tmp/rec.out" 2> "$tmp/rec.err" ||
    fail "recording failed"
grep -q "worker served $n" "$tmp/rec.out" || fail "the recorded run went wrong: $(cat "$tmp/rec.out")"
grep -q "(uid 65534)" "$tmp/rec.out" || fail "the worker did not drop to 65534"
[ "$(stat -c %a "$tmp/s")" = 700 ] || fail "session directory mode $(stat -c %a "$tmp/s")"
[ "$(stat -c %a "$tmp/s/.encore-registry")" = 711 ] ||
    fail ".encore-registry mode $(stat -c %a "$tmp/s/.encore-registry")"

if [ "$mode" = closed ]; then
    grep -q "srv.1.trace truncated after event [0-9]*: privileges dropped" "$tmp/rec.err" ||
        fail "encore record did not warn about srv.1"
    rc=0; "$encore" check "$tmp/s" > "$tmp/check.out" 2>&1 || rc=$?
    [ "$rc" -eq 1 ] || fail "encore check exited $rc, expected 1"
    grep -q "process srv.1 .*TRUNCATED" "$tmp/check.out" || fail "encore check did not flag srv.1"
    timeout 120 "$encore" replay --stall-timeout 20 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
        fail "the replay did not run to the end"
    cmp -s "$tmp/rec.out" "$tmp/rep.out" ||
        fail "the replay printed something else: $(diff "$tmp/rec.out" "$tmp/rep.out" | head -5)"
    echo "ok: the worker's trace stopped, said so, and the session replayed to the end"
    exit 0
fi

# the worker took every request for a message from a recorded client
"$encore" dump "$tmp/s" > "$tmp/dump" 2> "$tmp/dump.err" || fail "encore dump failed"
m=$("$encore" sql --csv "$tmp/s" "SELECT count(*) FROM message m JOIN event e ON e.id = m.recv
     JOIN process p ON p.id = e.proc WHERE p.name = '$wk'" 2> "$tmp/sql.err" | sed -n 2p)
[ "${m:-0}" -ge $n ] || fail "the worker received ${m:-0} messages, expected at least $n"
inputs() { awk -v p="$1" '$1 == "process" { on = ($2 == p) } on && $2 == "input"' "$tmp/dump" | wc -l; }
if [ "$mode" = proxy ]; then
    # the connection made after the drop: outside on both ends, bytes logged on both
    [ "$(inputs srv.1)" -ge $n ] || fail "the upstream logged $(inputs srv.1) inputs, expected $n"
    [ "$(inputs $wk)" -ge $n ] || fail "the worker logged $(inputs $wk) inputs, expected $n"
else
    [ "$(inputs $wk)" -eq 0 ] || fail "the worker logged its clients' bytes as input"
fi

for run in 1 2; do
    timeout 120 "$encore" replay --stall-timeout 20 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
        fail "replay $run did not run to the end"
    cmp -s "$tmp/rec.out" "$tmp/rep.out" ||
        fail "replay $run printed something else: $(diff "$tmp/rec.out" "$tmp/rep.out" | head -5)"
done

# halted at Inf(P): the worker's second request
pred="$wk: received >= 2"
"$encore" inf --json "$tmp/s" "$pred" > "$tmp/inf.json" 2> "$tmp/inf.err" || fail "encore inf failed"
timeout 120 "$encore" replay --json --then kill --stall-timeout 20 --stop "$pred" "$tmp/s" \
    > "$tmp/halt.json" 2> "$tmp/halt.err" || fail "the halted replay failed"
a=$(grep -o '"cuts":\[{[^}]*}' "$tmp/inf.json" | head -1)
b=$(grep -o '"cuts":\[{[^}]*}' "$tmp/halt.json" | head -1)
[ -n "$a" ] && [ "$a" = "$b" ] || fail "inf's cut $a, halted at $b"
grep -q '"status":"halted"' "$tmp/halt.json" || fail "the replay did not halt"
echo "ok: $(wc -l < "$tmp/rec.out") lines identical twice, halted at $a"
