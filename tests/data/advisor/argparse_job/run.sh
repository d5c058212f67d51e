#!/bin/bash
#SBATCH -N 1
#SBATCH --gres=gpu:2
# Fixture: argparse defaults < YAML config < command line; an in-code override after parsing.
NGPU=2
export OMP_NUM_THREADS=8

CUDA_VISIBLE_DEVICES=0,1 torchrun --standalone --nproc_per_node $NGPU train.py \
    --config cfg.yaml \
    --lr 0.01 `# wins over cfg.yaml and the default` \
    --amp
