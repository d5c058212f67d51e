deepspeed --num_gpus=2 main.py \
    --ds_config_path ./configs/ds.json \
    --model_config_path ./configs/model.json \
    --total_iters 3000
