#!/bin/bash
python fire_train.py --epochs=5
