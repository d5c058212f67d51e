#!/bin/bash
NPROC=$1
shift
torchrun --nproc_per_node=$NPROC "$@"
