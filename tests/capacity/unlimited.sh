# Sourced by the load tools' scripts. Their clients all come from 127.0.0.1, so
# the per-address limits are lifted for the servers they start (the `abuse`
# tool and tests/tests/abuse.rs measure those limits). One list, so that a new
# limit is lifted everywhere at once:
#   env "${UNLIMITED[@]}" … "$BIN" serve …
UNLIMITED=(
    SANGUO_SESSIONS_PER_MIN=0
    SANGUO_GAMES_PER_MIN=0
    SANGUO_MAX_SOCKETS_PER_ADDR=100000
    SANGUO_MAX_SILENT_SOCKETS_PER_ADDR=100000
    SANGUO_MAX_SOCKETS=100000
)
