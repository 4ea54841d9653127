#!/bin/bash
# mosquitto.sh: the mosquitto MQTT broker, mosquitto_pub publishing retained messages and
# mosquitto_sub reading them back (retained: no race between subscriber and publisher).
set -u
. "$(dirname "$0")/lib.sh"
corpus_need mosquitto mosquitto_pub mosquitto_sub
corpus_init mosquitto "$(mosquitto -h 2>&1 | sed -n 's/^mosquitto version \([^ ]*\).*/\1/p')"
port=$(corpus_port)
cat > "$C_RUN/mosquitto.conf" <<EOF
listener $port 127.0.0.1
allow_anonymous true
persistence false
log_dest file $C_RUN/mosquitto.log
EOF
corpus_session <<EOF
$(command -v mosquitto) -c $C_RUN/mosquitto.conf &
srv=\$!
wait_listen $port
mosquitto_pub -h 127.0.0.1 -p $port -t corpus/a -r -m 'first message'
mosquitto_pub -h 127.0.0.1 -p $port -t corpus/b -r -m 'second message'
mosquitto_sub -h 127.0.0.1 -p $port -t 'corpus/#' -v -C 2
stop \$srv
EOF
C_SORTED=1
C_EXPECT='second message'
corpus_run
