#!/bin/bash
NODES=${1:-1}
GPUS=${2:-8}
USE_FP16=${3:-"false"}
WORLD=$(( GPUS * NODES ))
CMD="torchrun --nproc_per_node $GPUS --nnodes $NODES pretrain_gpt.py \
  --micro-batch-size 4 --global-batch-size $(( WORLD * 16 )) --train-iters 500"
if $USE_FP16; then
  CMD+=" --fp16"
fi
$CMD
