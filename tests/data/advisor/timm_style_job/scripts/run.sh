# 4 GPUs x 64 = 256
sh dist.sh 4 fit.py /data/imagenet --model resnet50 -b 64 --epochs 90 --lr 0.1 --amp \
  --model-ema --reprob 0.25 --input-size 3 256 256
