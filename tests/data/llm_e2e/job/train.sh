#!/bin/bash
#SBATCH --job-name=e2e-finetune
#SBATCH --gres=gpu:2
#SBATCH --time=02:00:00
torchrun --nproc_per_node=2 train.py --epochs 3 --batch-size 16
