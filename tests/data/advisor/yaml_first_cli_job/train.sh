#!/bin/bash
export CUDA_VISIBLE_DEVICES=0,1
llamafactory-cli train sft.yaml \
    --per_device_train_batch_size 16 \
    --learning_rate 1e-4
