python3 train_net.py --config-file ../configs/retina.yaml --num-gpus 2 \
  SOLVER.IMS_PER_BATCH 8 SOLVER.MAX_ITER 1000
