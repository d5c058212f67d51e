#!/bin/bash
#SBATCH --job-name=train-resnet
#SBATCH --gres=gpu:4
#SBATCH --output=%x-%j.out
echo "node=$SLURMD_NODENAME"
for i in $(seq 1 100); do echo "step $i loss 0.$((100-i)) step_time 0.5s"; sleep 1; done
