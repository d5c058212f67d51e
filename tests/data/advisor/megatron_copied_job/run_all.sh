#!/bin/bash
# sweep: nodes gpus fp16
bash examples/pretrain.sh 1 4 true
bash examples/pretrain.sh 2 8 false
