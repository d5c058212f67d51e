#!/bin/bash
# submit through the site's own queue client
clusterq submit --gpus 2 --queue research \
  "python -m train experiment=small_lm trainer.devices=2 data.batch_size=24"
