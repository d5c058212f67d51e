accelerate launch train_dreambooth.py --instance_data_dir photos/ --train_batch_size 2 \
  --max_train_steps 400 --learning_rate 5e-6
