#!/bin/bash
python tune_lora.py \
  --base_model /models/gpt-j-6b \
  --data_path data/instructions.json \
  --lora_r 8 --lora_alpha 16 --lora_target_modules '[q_proj,v_proj]' \
  --num_epochs 2 --micro_batch_size 4
