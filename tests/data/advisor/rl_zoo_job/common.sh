#!/bin/sh
# Shared settings for every experiment script.
ALGO="dqn"
GAME="SpaceInvadersNoFrameskip-v4"
EXTRA="n_timesteps:5000000 buffer_size:50000"

train_agent() {
    python -m rl_zoo3.train --algo "$ALGO" --env "$GAME" \
        --hyperparams $EXTRA --seed 7 "$@"
}

watch_agent() {
    python -m rl_zoo3.enjoy --algo "$ALGO" --env "$GAME" --folder logs/
}
